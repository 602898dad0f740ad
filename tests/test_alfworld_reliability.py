"""ALFWorld engine hardening (issue 15): no native memory growth per game, a translation cache that is
data (a planted pickle never runs), sys.argv kept, and install messages that give the exact commands."""

from __future__ import annotations

import builtins
import json
import os
import pickle
import subprocess
import sys
import warnings
import zlib
from pathlib import Path

import pytest

pytest.importorskip("textworld")
pytest.importorskip("fast_downward")

from agentgym_credit.envs.alfworld import fast, sascache  # noqa: E402
from agentgym_credit.envs.alfworld.generator import generate_problem, problem_to_game  # noqa: E402
from agentgym_credit.errors import ENGINES_NO_DEPS, DependencyNotInstalled, install_commands  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _mapped_lib_copies() -> int:
    """How many copies of libdownward.so this process has mapped."""
    with open("/proc/self/maps") as f:
        return len({line.split()[-1] for line in f if line.rstrip().endswith("libdownward.so")})


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux /proc to count mapped libraries")
def test_engines_made_and_dropped_map_no_new_library():
    from agentgym_credit.envs.alfworld.engine import make_engine

    keep = make_engine(fast=True)  # noqa: F841  (one live engine)
    before = _mapped_lib_copies()
    for _ in range(50):  # the stock engine maps a fresh ~1 MB copy of libdownward.so per engine
        make_engine(fast=True)
    assert _mapped_lib_copies() <= before + 1


@pytest.mark.slow
def test_rss_flat_over_new_games(tmp_path):
    """A fresh interpreter loads new games to warm up (through two fills of the per-game memos, which are capped
    and emptied), then 60 more: RSS must stay flat (+< 30 MiB; the engine's capped memos move it by up to ~15 MiB
    between fills, measured; a leak of the old kind is ~130 MiB over 60 games).

    The old engine grew ~2.2 MB a game (a library copy per solvability check, textworld's memo);
    ``benchmarks/faults/reliability.md`` measures 1,000 games.
    """
    code = """
import os
os.environ["AGENTGYM_CREDIT_SAS_CACHE"] = "0"
from agentgym_credit.envs.alfworld.generator import generate_game
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
from agentgym_credit.envs.alfworld import queries, statememo
# warm up through two fills of every per-game memo (each fills up to its cap, is emptied, and its memory is reused)
for i in range(2 * max(20, statememo.GAMES, statememo.TASKS, queries.DERIVED_GAMES) + 4):
    generate_game("pick_and_place_simple", 7_000 + i)
base = rss()
for i in range(60):
    generate_game("pick_and_place_simple", 8_000 + i)
print(rss() - base)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    growth = float(out.stdout.strip().splitlines()[-1])
    assert growth < 30.0, f"RSS grew {growth:.1f} MiB over 60 new games"


def test_memento_memo_is_bounded(monkeypatch):
    from mementos import core

    from agentgym_credit.envs.alfworld.engine import make_engine

    monkeypatch.setattr(fast, "MEMENTO_CACHE_LIMIT", 10)
    eng = make_engine(fast=True)
    game = problem_to_game(generate_problem("pick_and_place_simple", 3))
    eng.load(game)
    eng.reset()
    before = len(core._memento_cache)
    assert before > 10
    core._memento_cache[("sentinel",)] = object()
    eng.load(game)  # a load prunes the memo once it is past the limit
    assert ("sentinel",) not in core._memento_cache
    assert eng.reset()["admissible_commands"]  # the engine works on (values compare by value)


# -- the translation cache is data ------------------------------------------------------------------
@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTGYM_CREDIT_SAS_CACHE", str(tmp_path / "sas"))
    fast.translate.cache_clear()
    yield tmp_path / "sas"
    fast.translate.cache_clear()


def _texts():
    game = problem_to_game(generate_problem("pick_and_place_simple", 11))
    return game["pddl_domain"], game["pddl_problem"]


class _Boom:
    """A pickle payload that creates a marker file when unpickled."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _planted(kind: str, key: str, sas: str, marker: Path) -> bytes:
    body = zlib.compress(json.dumps({"key": key, "sas": sas}).encode())
    digest = sascache._digest
    header = sascache.SAS_CACHE_HEADER
    evil = pickle.dumps(_Boom(marker))
    return {
        "empty": b"",
        "truncated": (header + b" " + digest(body) + b"\n" + body)[:40],
        "random": os.urandom(512),
        "bad_checksum": header + b" " + b"0" * 32 + b"\n" + body,
        "old_pickle": zlib.compress(evil),
        "pickle_behind_header": header + b" " + digest(zlib.compress(evil)) + b"\n" + zlib.compress(evil),
        "raw_pickle": evil,
        "foreign_key": (lambda b: header + b" " + digest(b) + b"\n" + b)(
            zlib.compress(json.dumps({"key": "0" * 40, "sas": "begin_version\n"}).encode())),
        "json_list": (lambda b: header + b" " + digest(b) + b"\n" + b)(zlib.compress(b"[1, 2]")),
        "sas_not_text": (lambda b: header + b" " + digest(b) + b"\n" + b)(
            zlib.compress(json.dumps({"key": key, "sas": 3}).encode())),
    }[kind]


KINDS = ["empty", "truncated", "random", "bad_checksum", "old_pickle", "pickle_behind_header", "raw_pickle",
         "foreign_key", "json_list", "sas_not_text"]


def test_cache_round_trip_is_data(cache):
    domain, problem = _texts()
    task, sas = fast.translate(domain, problem, False)
    files = list(cache.rglob("*.sas.z"))
    assert len(files) == 1 and files[0].read_bytes().startswith(sascache.SAS_CACHE_HEADER + b" ")
    fast.translate.cache_clear()
    task2, sas2 = fast.translate(domain, problem, False)  # read back from disk: task rebuilt by parsing
    assert sas2 == sas
    assert [str(o) for o in task2.objects] == [str(o) for o in task.objects]
    assert [a.name for a in task2.actions] == [a.name for a in task.actions]
    assert [str(x) for x in task2.init] == [str(x) for x in task.init]


@pytest.fixture(scope="module")
def translated():
    """The game's texts and their translation, made once for the module (the translator is deterministic)."""
    domain, problem = _texts()
    return domain, problem, fast.pddl2sas(domain, problem, False)[1]


@pytest.mark.parametrize("kind", KINDS)
def test_damaged_or_planted_entry_is_a_rebuilt_miss(cache, tmp_path, kind, translated):
    domain, problem, sas = translated
    key = sascache.entry_key(fast._version_tag(), False, domain, problem)
    path = sascache.entry_path(cache, key)
    path.parent.mkdir(parents=True)
    marker = tmp_path / "pwned"
    path.write_bytes(_planted(kind, key, sas, marker))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        task, got = fast.translate(domain, problem, False)
    assert not marker.exists(), "a cache file ran code"
    assert got == sas and task is not None
    assert any(issubclass(w.category, sascache.SasCacheWarning) for w in caught), kind
    assert sascache.read_entry(path, key) == sas  # rebuilt: the next process finds a good entry


def test_translate_keeps_sys_argv(monkeypatch, cache):
    monkeypatch.setattr(sys, "argv", ["my-script", "--flag"])
    domain, problem = _texts()
    fast.translate(domain, problem, False)
    fast.translate(domain, problem, True)
    fast.translate.cache_clear()
    fast.translate(domain, problem, False)  # the disk-hit path parses with the translator's parser too
    assert sys.argv == ["my-script", "--flag"]


# -- install messages -------------------------------------------------------------------------------
@pytest.mark.parametrize("missing", ["fast_downward", "textworld", "alfworld"])
def test_missing_engine_message_gives_the_exact_commands(monkeypatch, missing):
    from agentgym_credit.envs.alfworld import logic

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == missing or name.startswith(missing + "."):
            raise ImportError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(DependencyNotInstalled) as err:
        logic.require_engine()
    msg = str(err.value)
    commands = install_commands("alfworld")
    assert commands[0] == ENGINES_NO_DEPS == "pip install --no-deps alfworld==0.4.2 textworld==1.7.0 jericho==3.3.1"
    assert all(c in msg for c in commands)
    assert msg.index(commands[0]) < msg.index(commands[-1])  # the order that works
    assert err.value.commands == commands and err.value.extra == "alfworld"
    if missing == "textworld":
        with pytest.raises(DependencyNotInstalled, match="--no-deps"):
            logic.require_textworld()
