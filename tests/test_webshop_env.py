"""credit/WebShop-v0: the contract, page flow, actions, keys, splits, shared index and the expert."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("rapidfuzz")

import agentgym_credit  # noqa: E402,F401
from agentgym_credit.envs.webshop import search as S  # noqa: E402
from agentgym_credit.envs.webshop.data import load_original  # noqa: E402
from agentgym_credit.envs.webshop.env import SEARCH_MARKER, WebShopEnv, parse_action  # noqa: E402
from agentgym_credit.envs.webshop.expert import ExpertPolicy, run_expert_episode  # noqa: E402
from agentgym_credit.errors import ResetNeeded  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "webshop"


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("webshop-cache")


@pytest.fixture()
def env(cache):
    return WebShopEnv(split="test", cache_dir=cache)


def _to_item(env, task=0):
    """Search the goal text and open the goal product; returns (obs, info)."""
    obs, info = env.reset(seed=0, options={"task": task})
    pol = ExpertPolicy()
    while env._page_kind != "item":
        obs, _, _, _, info = env.step(pol.act(env))
    return obs, info


def test_check_credit_env_both_observation_modes(cache):
    from agentgym_credit.testing import check_credit_env

    for mode, seed in (("text", 0), ("text_rich", 3)):
        report = check_credit_env(
            gym.make("credit/WebShop-v0", observation_mode=mode, cache_dir=cache), seed=seed
        )
        assert "reset determinism" in report.checked


def test_expert_reaches_full_reward_on_95_percent_of_test_goals(env):
    won = [run_expert_episode(env, k)[1]["won"] for k in range(env.num_tasks)]
    assert env.num_tasks == 500
    assert np.mean(won) >= 0.95


def test_search_results_pages_and_paging(env):
    obs, info = env.reset(seed=0, options={"task": 1})
    assert obs.startswith("WebShop [SEP] Instruction: [SEP] ") and obs.endswith(" [SEP] Search")
    assert info["admissible_actions"] == [SEARCH_MARKER]
    # the instruction (not the product type: ~13 products a type in 1,000 since generator v4) has >= 50 hits
    obs, r, term, trunc, info = env.step(f"search[{env.goal['instruction_text']}]")
    assert (r, term, trunc, info["page"]) == (0.0, False, False, "results")
    assert "Page 1 (Total results: 50)" in obs and "< Prev" not in obs
    adm = info["admissible_actions"]
    products = [a for a in adm if a.startswith("click[b0")]
    assert len(products) == 10 and "click[next >]" in adm and "click[back to search]" in adm
    assert SEARCH_MARKER not in adm
    for page in range(2, 6):
        obs, *_, info = env.step("click[Next >]")
        assert f"Page {page} (Total results: 50)" in obs and "click[< prev]" in info["admissible_actions"]
    assert "click[next >]" in info["admissible_actions"]  # shown on the last page too, as the original
    obs, *_, info = env.step("click[Next >]")  # past the last page: no products, Prev and Next stay
    assert "Page 6 (Total results: 50)" in obs and not [a for a in info["admissible_actions"] if "[b0" in a]
    assert {"click[< prev]", "click[next >]"} <= set(info["admissible_actions"])
    env.step("click[< Prev]")
    obs, *_, info = env.step("click[< Prev]")
    assert "Page 4 " in obs
    obs, *_, info = env.step("click[Back to Search]")
    assert (
        info["page"] == "search"
        and info["state_key"] == env.reset(seed=0, options={"task": 1})[1]["state_key"]
    )


def test_item_page_options_sub_pages_and_prev(env):
    obs, info = _to_item(env, task=2)
    product = env.catalog.by_asin[env.goal["asin"]]
    assert f"[SEP] {product['Title']} [SEP] Price: {product['Price']} [SEP] Rating: " in obs
    assert obs.endswith("Description [SEP] Features [SEP] Reviews [SEP] Buy Now")
    assert "click[attributes]" not in info["admissible_actions"]  # show_attrs=False, as the original
    name, values = next(iter(product["options"].items()))
    obs, *_, info = env.step(f"click[{values[-1].upper()}]")  # case-insensitive
    assert env._options == {name: values[-1]}
    key_with_option = info["state_key"]
    obs, *_, info = env.step("click[Features]")
    assert info["page"] == "sub" and obs.split(" [SEP] ")[4:] == [b for b in product["BulletPoints"] if b]
    assert info["admissible_actions"] == ["click[back to search]", "click[< prev]"]
    obs, *_, info = env.step("click[< prev]")
    assert info["state_key"] == key_with_option  # the sub-page returns to the item with the options kept
    obs, *_, info = env.step("click[< prev]")
    assert info["page"] == "results" and env._options == {}


def test_reviews_description_and_attributes_sub_pages(cache):
    env = WebShopEnv(split="test", cache_dir=cache, show_attrs=True)
    _to_item(env, task=3)
    product = env.catalog.by_asin[env.goal["asin"]]
    obs, *_ = env.step("click[description]")
    assert obs.endswith(product["Description"])
    env.step("click[< prev]")
    obs, *_ = env.step("click[attributes]")  # the original's page: attributes, category, query, path
    tail = [product["category"], product["query"], product["product_category"]]
    assert obs.split(" [SEP] ")[4:] == product["Attributes"] + tail
    env.step("click[< prev]")
    obs, *_ = env.step("click[reviews]")
    assert ("No reviews found" in obs) == (not product["Reviews"])


def test_buy_now_ends_with_the_reward_and_raw_score(env):
    task = next(k for k in range(4, 60) if env.catalog.goals[env.catalog.split_indices("test")[k]]["goal_options"])
    _to_item(env, task=task)  # the first test goal from 4 on that asks for options (4 itself, before generator v6)
    obs, r, term, trunc, info = env.step("click[buy now]")  # no option chosen: not a full score
    assert term and not trunc and 0 < r < 1 and not info["won"]
    assert info["score"] == r == info["reward_info"]["reward"]
    assert info["reward_info"]["n_option_matches"] == 0
    assert obs.startswith("Thank you for shopping with us!") and f"{r:.4f}" in obs
    with pytest.raises(ResetNeeded):
        env.step("click[back to search]")


def test_invalid_actions_are_counted_no_ops_and_truncate(cache):
    env = WebShopEnv(split="test", cache_dir=cache, max_steps=6)
    obs0, info0 = env.reset(seed=0, options={"task": 0})
    bad = ["click[buy now]", "search[]", "look around", "click[nonexistent]"]
    for a in bad:
        obs, r, term, trunc, info = env.step(a)
        assert (obs, r, term, trunc, info["action_valid"]) == (obs0, 0.0, False, False, False)
        assert info["state_key"] == info0["state_key"]
    assert env.step("search[tea]")[2:4] == (False, False)  # step 5
    obs, r, term, trunc, info = env.step("search[shoes]")  # no search box on the results page
    assert info["action_valid"] is False and trunc and not term  # step 6 = max_steps: truncated


def test_parse_action():
    assert parse_action("click[Buy Now]") == ("click", "buy now")
    assert parse_action("  Search [ Red Shoes ] ") == ("search", "red shoes")
    assert parse_action("click Buy Now") == (None, None)
    assert parse_action("think[i should buy]") == (None, None)
    # text after the closing bracket is ignored, as the original's (.+)\[(.+)\] match
    assert parse_action("click[buy now] because it fits") == ("click", "buy now")
    assert parse_action("search[red [x] shoes] please") == ("search", "red [x] shoes")


def test_trailing_words_after_an_action_are_accepted(env):
    _to_item(env, task=2)
    _, r, term, _, info = env.step("click[Buy Now] because it matches every attribute")
    assert term and info["action_valid"] and info["page"] == "done"


def test_state_key_normalizes_the_query_and_ignores_visited_marks(cache):
    env = WebShopEnv(split="test", cache_dir=cache, observation_mode="text_rich")
    env.reset(seed=0, options={"task": 0})
    _, *_, a = env.step("search[Red Running SHOES for men]")
    env.step("click[back to search]")
    obs_b, *_, b = env.step("search[men's running shoes red zzqxv]")
    assert a["state_key"] == b["state_key"]  # same indexed terms, same results: same state
    first = next(x for x in b["admissible_actions"] if x.startswith("click[b0"))
    env.step(first)
    obs_c, *_, c = env.step("click[< prev]")
    assert c["state_key"] == b["state_key"] and obs_c != obs_b  # visited mark changes the text only
    assert "[clicked button] " + first[6:-1].upper() in obs_c
    assert all(k == c["state_key"] for k in env.equivalent_state_keys(np.random.default_rng(0), 5))


def test_state_key_fields(env):
    task = next(t for t in range(5, 50) if env.catalog.by_asin[env.catalog.goals[t]["asin"]]["options"])
    _to_item(env, task=task)
    k0 = env._state_key()
    name, values = next(iter(env.catalog.by_asin[env.goal["asin"]]["options"].items()))
    env.step(f"click[{values[0]}]")
    k1 = env._state_key()
    env.step(f"click[{values[1]}]")
    k2 = env._state_key()
    assert len({k0, k1, k2}) == 3 and f"|o={name}={values[1]}|" in k2 and f"|a={env.goal['asin']}|" in k2


def test_text_rich_markers(cache):
    env = WebShopEnv(split="test", cache_dir=cache, observation_mode="text_rich")
    for task in range(6, 60):  # the first goal from task 6 on whose product lists options
        obs, _ = env.reset(seed=0, options={"task": task})
        if env.catalog.by_asin[env.goal["asin"]]["options"]:
            break
    assert "[button] Search [button_]" in obs and obs.startswith("WebShop\nInstruction:\n")
    obs, *_ = env.step(f"search[{env.goal['instruction_text']}]")
    assert "[button] Back to Search [button_]" in obs and "\n[button] B0" in obs
    pol = ExpertPolicy()
    while env._page_kind != "item":
        obs, *_ = env.step(pol.act(env))
    v = next(iter(env.catalog.by_asin[env.goal["asin"]]["options"].values()))[0]
    obs, *_ = env.step(f"click[{v}]")
    assert obs.startswith(f"You have clicked {v}.\n") and f"  [clicked button] {v} [clicked button_]" in obs
    # Back to Search starts a new session page, as the original: the visited marks are gone
    env.step("click[< prev]")
    obs, *_ = env.step("click[back to search]")
    obs, *_ = env.step(f"search[{env.goal['instruction_text']}]")
    while env.goal["asin"].lower() not in env._page.clickables:  # generator v7: twins may list first
        obs, *_ = env.step("click[next >]")
    assert "[clicked button]" not in obs and f"\n[button] {env.goal['asin']} [button_]" in obs


def test_splits_tasks_and_errors(cache):
    train = WebShopEnv(split="train", cache_dir=cache)
    assert train.num_tasks == 500
    _, info = train.reset(seed=0, options={"task": 0})
    assert info["task_id"] == "webshop:goal:500"
    _, info = train.reset(seed=7)  # drawn with the episode RNG, deterministic in the seed
    assert train.reset(seed=7)[1]["task_id"] == info["task_id"]
    for bad in (500, -1, "webshop:goal:3", "x"):  # goal 3 is a test goal, not in the train split
        with pytest.raises(ValueError, match="task"):
            train.reset(options={"task": bad})
    with pytest.raises(TypeError, match="task"):  # the same reading of options['task'] as every env
        train.reset(options={"task": True})
    assert train.reset(options={"task": "3"})[1]["task_id"] == train.reset(options={"task": 3})[1]["task_id"]
    with pytest.raises(ValueError, match="split"):
        WebShopEnv(split="dev", cache_dir=cache)
    with pytest.raises(ValueError, match="observation_mode"):
        WebShopEnv(observation_mode="html", cache_dir=cache)


def test_one_index_per_process_and_disk_cache(tmp_path):
    a = WebShopEnv(num_products=300, catalog_seed=11, split="test", cache_dir=tmp_path)
    b = WebShopEnv(num_products=300, catalog_seed=11, split="test", cache_dir=tmp_path)
    assert a.index is b.index
    files = list(tmp_path.glob("bm25-*.npz"))
    assert len(files) == 1
    S.clear_shared()
    c = WebShopEnv(num_products=300, catalog_seed=11, split="test", cache_dir=tmp_path)  # loaded from disk
    assert c.index is not a.index
    q = a.catalog.goals[0]["instruction_text"]
    assert c.index.search(q) == a.index.search(q)
    np.testing.assert_allclose(c.index.scores(q), a.index.scores(q))


def test_env_on_original_files_loader():
    from agentgym_credit.testing import check_credit_env

    files = [FIXTURES / f for f in ("items_shuffle_tiny.json", "items_ins_v2_tiny.json", "reviews_tiny.json")]
    env = WebShopEnv(catalog=load_original(*files), split="test", cache_dir=False)
    assert env.num_tasks == 8
    assert all(run_expert_episode(env, k)[1]["won"] for k in range(env.num_tasks))
    check_credit_env(env, seed=1)
    human = load_original(*files, FIXTURES / "items_human_ins_tiny.json", use_human_goals=True)
    env = WebShopEnv(catalog=human, split="all", cache_dir=False)
    assert all(run_expert_episode(env, k)[1]["won"] for k in range(env.num_tasks))  # list-form goal options


def test_search_without_hits_shows_an_empty_results_page(env):
    env.reset(seed=0, options={"task": 0})
    obs, r, term, trunc, info = env.step("search[the of and zzqxv]")  # stop words and an unknown word
    assert info["action_valid"] and "Page 1 (Total results: 0)" in obs
    assert info["admissible_actions"] == ["click[back to search]", "click[next >]"]  # Next > always shows
    assert "|q=|p=1|" in info["state_key"]


def test_missing_rapidfuzz_names_the_extra(monkeypatch, cache):
    from agentgym_credit.envs.webshop import reward
    from agentgym_credit.errors import DependencyNotInstalled

    monkeypatch.setattr(reward, "_fuzz", None)
    # names the extra and gives the command that works (the message format of issue 15 item 9)
    with pytest.raises(DependencyNotInstalled, match=r"(?s)'webshop' extra.*pip install 'rapidfuzz"):
        WebShopEnv(split="test", cache_dir=cache)


def test_numpy_integer_task_is_accepted(cache):
    env = WebShopEnv(split="test", cache_dir=cache)
    task = np.arange(5)[3]  # e.g. drawn with rng.integers or taken from an array of task indices
    assert env.reset(seed=0, options={"task": task})[1]["task_id"] == env.reset(seed=0, options={"task": 3})[1]["task_id"]


def test_unknown_reset_option_is_a_clear_error(cache):
    env = WebShopEnv(split="test", cache_dir=cache)
    with pytest.raises(ValueError, match="unknown reset options \\['tsk'\\]"):
        env.reset(seed=0, options={"tsk": 3})  # a typo must not silently draw a random goal
