"""Issue 43 D5-D9: hostile snapshots, game files, dataset rows, cache folders and keys.

D5 a WebShop snapshot's query is capped before any search; D6 a cache entry replaced by a symlink is never
written through; D7 an ALFWorld game file's task text is parsed, never evaluated, and a verl dataset row's
``env_kwargs`` cannot choose files; D8 a HistoryFingerprint header length is a SnapshotError; D9 every way a key
arrives is checked (raw bytes, the cache-key variable, the cache-key file's mode, owner and links)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from agentgym_credit.envs import snapshot as S
from agentgym_credit.errors import SnapshotError, SnapshotKeyError

REPO = Path(__file__).resolve().parents[1]
DEV = REPO.parent / "shared" / "data" / "alfworld" / "dev"


# -- D5 ------------------------------------------------------------------------------------------------
def test_a_webshop_snapshot_query_over_the_cap_is_refused_before_searching(monkeypatch):
    pytest.importorskip("rapidfuzz")
    from agentgym_credit.envs.webshop.env import WebShopEnv, shared_catalog
    from agentgym_credit.envs.webshop.snapshots import _HEAD
    from agentgym_credit.envs.webshop.snapshots import MAX_QUERY_CHARS as S_MAX_QUERY

    env = WebShopEnv(catalog=shared_catalog(100), split="test", cache_dir=False)
    env.reset(seed=0, options={"task": 0})
    env.step("search[red shirt]")
    snap = env.get_state()
    doc = S.inspect_snapshot(snap)
    raw = doc["payload"]
    head, rest = raw[:_HEAD.size], raw[_HEAD.size:].decode().split("\x1f")
    searched = []
    monkeypatch.setattr(env, "_search", lambda q: searched.append(q) or ())
    word = min(env.index.term_id, key=lambda w: (-len(w), w))  # an indexed term: it survives normalize_query
    for copies in (12_000 // len(word), 3_000_000 // len(word)):  # 12 kB, 3 MB: normalized queries over the cap
        rest[2] = env.normalize_query(f"{word} " * copies)
        assert len(rest[2]) > S_MAX_QUERY
        forged = S.pack("WebShopEnv", doc["config"], doc["rng"], head + "\x1f".join(rest).encode())
        with pytest.raises(SnapshotError, match="MAX_QUERY_CHARS|more than its fields"):
            env.set_state(forged)
    assert searched == []
    from agentgym_credit.envs.webshop import env as shop_env
    from agentgym_credit.envs.webshop import snapshots

    assert snapshots.MAX_QUERY_CHARS == shop_env.MAX_QUERY_CHARS  # a restore's cap is a step's


# -- D6 ------------------------------------------------------------------------------------------------
@pytest.mark.slow  # compiles the TextWorld game twice (~65 s at load 10 on 2 cores)
def test_a_symlinked_textworld_cache_entry_is_replaced_not_written_through(tmp_path):
    pytest.importorskip("jericho")
    from agentgym_credit.envs.alfworld import gamecache
    from agentgym_credit.envs.alfworld.textworld_env import CHALLENGE_SETTINGS, ensure_game

    settings = CHALLENGE_SETTINGS["tw-coin_collector"]
    path = ensure_game("tw-coin_collector", settings, 7, tmp_path / "cache")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for suffix in (".json", ".z8"):
        target = path.with_suffix(suffix)
        target.unlink()
        target.symlink_to(elsewhere, target_is_directory=True)
    again = ensure_game("tw-coin_collector", settings, 7, tmp_path / "cache")  # not a file: compiled again
    assert again == path and not path.is_symlink() and not path.with_suffix(".json").is_symlink()
    assert list(elsewhere.iterdir()) == []  # nothing written into the linked folder
    assert gamecache.game_problem(path, json.dumps(["tw-coin_collector", settings, 7], sort_keys=True).encode()) is None
    copy = elsewhere / "copy.z8"
    shutil.copy(path, copy)
    path.unlink()
    path.symlink_to(copy)  # a link to a good copy: refused on read too (what is read may not be what is loaded)
    with pytest.warns(gamecache.GameCacheWarning, match="symlink"):
        ensure_game("tw-coin_collector", settings, 7, tmp_path / "cache")
    assert not path.is_symlink()


# -- D7 ------------------------------------------------------------------------------------------------
def test_grammar_expressions_are_parsed_never_evaluated():
    pytest.importorskip("fast_downward")
    from agentgym_credit.envs.alfworld import fast

    for ok in ("o.name", "r.name or r.id", "o.indefinite + ' ' + o.name", "r"):
        fast._compiled(ok)
    for bad in ("__import__('os').system('true')", "o.__class__", "open('/etc/passwd').read()", "[x for x in o]",
                "o.name(1)", "1 + 1"):
        with pytest.raises(ValueError, match="never evaluated"):
            fast._compiled(bad)


@pytest.mark.skipif(not DEV.is_dir(), reason="needs the ALFWorld dev games in ../shared")
def test_an_alfworld_task_sentence_with_an_expression_is_refused_not_run(tmp_path):
    pytest.importorskip("fast_downward")
    from agentgym_credit.envs.alfworld.logic import task_sentence

    trial = next(DEV.glob("pick_and_place_simple*/trial_*"))
    data = tmp_path / "data" / trial.parent.name / trial.name
    shutil.copytree(trial, data)
    game = json.loads((data / "game.tw-pddl").read_text())
    sentence = task_sentence(game["grammar"])
    marker = tmp_path / "ran"
    evil = sentence + f" {{__import__('pathlib').Path({str(marker)!r}).touch() or ''}}"
    game["grammar"] = game["grammar"].replace(json.dumps(sentence)[1:-1], json.dumps(evil)[1:-1])
    (data / "game.tw-pddl").write_text(json.dumps(game))
    code = ("from agentgym_credit.envs.alfworld.env import ALFWorldEnv\n"
            f"env = ALFWorldEnv(data_dir={str(tmp_path / 'data')!r}, split=None)\n"
            "try:\n    env.reset(seed=0)\nexcept ValueError as exc:\n    print('REFUSED', exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert not marker.exists()  # the expression never ran
    assert done.returncode == 0 and "REFUSED" in done.stdout and "never evaluated" in done.stdout, done.stderr[-1500:]


def test_a_dataset_row_cannot_choose_the_files_an_env_loads():
    pytest.importorskip("verl")
    from agentgym_credit.integrations.verl import agent_loop

    with pytest.raises(ValueError, match="data_dir"):
        agent_loop.group_dataset("credit/GridWorld-v0", [0], env_kwargs={"data_dir": "/etc"})
    row = agent_loop.group_dataset("credit/GridWorld-v0", [0], env_kwargs={"size": 4})[0]
    assert agent_loop._settings(row)["env_kwargs"] == {"size": 4}
    for bad in ({"cache_dir": "/tmp/x"}, {"catalog": "x"}, {"size": 4, "anything": 1}):
        row["extra_info"]["agc"]["env_kwargs"] = json.dumps(bad)
        with pytest.raises(ValueError, match="may not come from a dataset row"):
            agent_loop._settings(row)


# -- D8 ------------------------------------------------------------------------------------------------
def test_a_history_header_length_of_many_digits_is_a_snapshot_error():
    import gymnasium as gym

    import agentgym_credit  # noqa: F401
    from agentgym_credit.wrappers.history import HistoryFingerprint

    env = HistoryFingerprint(gym.make("credit/GridWorld-v0"), depth=2)
    env.reset(seed=0)
    good = env.get_state()
    rest = good.partition(b"\n")[2]
    for digits in (b"9" * 5000, b"1" + b"0" * 20):
        with pytest.raises(SnapshotError, match="window length"):
            env.set_state(b"agc-history/1 " + digits + b"\n" + rest)
    env.set_state(good)


# -- D9 ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", [b"abcd" * 8, b"\0" * 32, "abcdabcdabcdabcd", "0123456701234567", "abcdefg" * 3])
def test_weak_keys_are_refused_however_they_arrive(key):
    old = S.snapshot_key()
    try:
        with pytest.raises(SnapshotKeyError):
            S.set_snapshot_key(key)
    finally:
        S.set_snapshot_key(old)
    assert S.snapshot_key() == old


_CACHE_KEY = """
import warnings
from agentgym_credit.envs import cachekey
with warnings.catch_warnings(record=True) as got:
    warnings.simplefilter("always")
    try:
        key = cachekey.cache_key()
        print(len(key), [str(w.message) for w in got if issubclass(w.category, cachekey.CacheKeyWarning)])
    except ValueError as exc:
        print("REFUSED", exc)
"""


def _cache_key(env: dict) -> str:
    base = {k: v for k, v in os.environ.items() if k not in ("AGENTGYM_CREDIT_CACHE_KEY", "AGENTGYM_CREDIT_CACHE_KEY_FILE")}
    done = subprocess.run([sys.executable, "-c", _CACHE_KEY], capture_output=True, text=True, cwd=REPO, timeout=60,
                          env={**base, **env})
    assert done.returncode == 0, done.stderr[-1500:]
    return done.stdout


@pytest.mark.parametrize("kind, message", [("group-writable", "writable by its group"),
                                           ("world-readable", "readable by other users"),
                                           ("symlink", "is a symlink"), ("dangling", "missing file"),
                                           ("weak", "does not hold a key")])
def test_cache_key_files_are_checked_for_mode_links_and_strength(tmp_path, kind, message):
    real = tmp_path / "real.key"
    real.write_text(os.urandom(32).hex() + "\n" if kind != "weak" else ("ab" * 16).encode().hex() + "\n")
    real.chmod(0o600)
    path = tmp_path / "cache.key"
    if kind in ("symlink", "dangling"):
        path.symlink_to(real if kind == "symlink" else tmp_path / "gone.key")
    else:
        real.rename(path)
        path.chmod({"group-writable": 0o620, "world-readable": 0o644, "weak": 0o600}[kind])
    out = _cache_key({"AGENTGYM_CREDIT_CACHE_KEY_FILE": str(path)})
    assert out.startswith("32 [") and message in out, out


def test_a_weak_cache_key_variable_is_refused():
    assert _cache_key({"AGENTGYM_CREDIT_CACHE_KEY": "abcdabcdabcdabcd"}).startswith("REFUSED")
    assert _cache_key({"AGENTGYM_CREDIT_CACHE_KEY": "a strong enough cache key"}).startswith("32 []")


def test_a_process_key_from_snapshot_key_is_still_accepted():
    old = S.snapshot_key()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert S.set_snapshot_key(old) == old
