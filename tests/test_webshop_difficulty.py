"""bench webshop_difficulty: the policies and the report, on a small catalog (the full run is the benchmark)."""

from __future__ import annotations

import pytest

pytest.importorskip("rapidfuzz")

from agentgym_credit.bench.envs import webshop_difficulty as W  # noqa: E402
from agentgym_credit.envs.webshop.catalog import GENERATOR_VERSION  # noqa: E402


def test_small_run_orders_the_policies_and_writes_the_report(tmp_path):
    out = tmp_path / "webshop_difficulty.md"
    W.main(["--sizes", "600", "--goals", "60", "--language", "300", "--out", str(out)])
    text = out.read_text()
    assert "Command: `python -m agentgym_credit.bench.envs.webshop_difficulty --sizes 600" in text
    assert "load average" in text and "Goals:" in text and "rule success" in text
    assert f"| generated v{GENERATOR_VERSION}, sentence | 300 |" in text and "| human (the original's, sample) | 191 |" in text
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 3 and cells[1] == "600":
            rows[cells[2]] = float(cells[3].split("±")[0])
    assert set(rows) == {"rule", "option script", "normalizing", "title-overlap", "fuzzy-option", "random", "expert"}
    assert rows["expert"] == 100.0
    assert rows["random"] < rows["rule"] < rows["option script"] < rows["expert"]


def test_option_script_clicks_whole_words_only():
    from types import SimpleNamespace

    from agentgym_credit.envs.webshop import pages as P

    product = {
        "options": {"size": ["large", "x-large"], "color": ["red", "navy blue"]},
        "Title": "T",
        "Price": "$1",
        "Rating": "N.A.",
    }
    page = P.item_page("i want the x-large one in navy blue", product, {}, show_attrs=False)
    env = SimpleNamespace(
        _page_kind="item", _page=page, _options={}, goal={"instruction_text": page.elements[1].text}
    )
    assert W.option_script_policy(env, {}, None) == "click[x-large]"  # not "large", a part of "x-large"
    env._options = {"size": "x-large"}
    assert W.option_script_policy(env, {}, None) == "click[navy blue]"
    env._options["color"] = "navy blue"
    assert W.option_script_policy(env, {}, None) == "click[buy now]"
