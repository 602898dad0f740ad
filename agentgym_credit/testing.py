"""``check_credit_env``: the executable statement of the agentgym-credit env contract.

What lives here:

- :func:`check_credit_env` — run gymnasium's ``check_env`` and the contract checks below on an env,
  raising :class:`~agentgym_credit.errors.ContractViolation` with a message that says what failed;
- :class:`ContractReport` — what was checked (and what could not be, with the reason);
- :data:`BAD_ACTIONS` — the junk action texts every env must treat as a no-op.

Checks (all on ``env.unwrapped``, so that wrappers such as ``TimeLimit`` do not hide the env's
own behaviour):

1. gymnasium's ``check_env`` (render and close checks off: they build extra envs) and
   ``Text`` observation/action spaces;
2. ``reset`` determinism: ``reset(seed)`` twice, with another seed in between, gives the same
   observation and ``state_key``;
3. ``info`` on reset and on every step has every key of
   :data:`~agentgym_credit.envs.base.CONTRACT_INFO_KEYS` with the right type: ``state_key`` and
   ``obs_key`` non-empty ``str``/``bytes``, ``admissible_actions`` a ``list[str]`` without
   duplicates or ``None``, ``task_id`` ``str``/``int``, ``won`` and ``action_valid`` ``bool``;
4. bad action text (:data:`BAD_ACTIONS`: empty, 100 kB, bytes, control characters, random
   unicode, and other envs' syntax — ``search[...]``, ``click[...]``, ``go north``, ALFWorld
   commands — whichever no admissible action or template such as ``search[<query>]`` accepts) never raises, is marked ``action_valid=False``, leaves
   ``state_key`` unchanged and does not terminate the episode. With ``admissible_actions=None``
   (an unbounded action set) the other envs' syntax may be valid, so only "never raises" and the
   info types are checked for it;
5. a random walk over admissible actions (templates filled with words of the observation): each is accepted (``action_valid=True``); an
   observation that changes while ``state_key`` never does is a violation (a key that ignores the
   state); the walk must reach the end of an episode, after which ``step`` raises
   :class:`~agentgym_credit.errors.ResetNeeded`;
6. equal states reached twice have equal keys: after an episode with another seed, ``reset(seed)``
   and the same actions again must give the same observations and ``state_key`` sequence
   (nothing leaks from earlier episodes — ids, counters, ordering);
6b. the key holds everything that changes what actions do: over the walk and ``extra_episodes``
   more random episodes of the same task, steps with one ``(task_id, state_key)`` must list the same
   admissible actions (as a set), and valid steps with one ``(task_id, state_key, action, next
   state_key)`` must give the same reward and ``terminated`` (a key that leaves out, say, an open
   door or a selected option shows up as two answers for one key);
7. surface noise: if the env has ``equivalent_state_keys(rng, n) -> list`` (``state_key`` computed
   from ``n`` renderings of the current state with shuffled fact order / renamed ids) every key
   must equal ``info["state_key"]``;
8. exact models: if the env has ``model`` (a
   :class:`~agentgym_credit.envs.gridworld.model.TabularModel`) and puts ``state_index`` in
   ``info``, then ``state_key == model.state_keys[state_index]``, ``admissible_actions ==
   model.actions[state_index]``, and every valid step's ``(next state, reward, terminated)`` is an
   outcome of ``model.P`` with positive probability.

9. snapshots (branching), when the env supports them (``get_state`` raising
   :class:`~agentgym_credit.errors.SnapshotUnsupported` is reported as skipped, not a failure): a
   few random steps after ``reset(seed)``, ``get_state()``, a few more steps; ``set_state`` (after
   the episode went on, or ended) must return the snapshot step's observation and keys
   (``state_key``, ``obs_key``, ``admissible_actions``, ``won``, ``task_id``), and the same actions
   must give the same observations, rewards, keys and termination as the first time; a corrupted
   snapshot (one byte changed), a non-bytes value, and a well-formed snapshot claiming another env
   class or configuration must raise :class:`~agentgym_credit.errors.SnapshotError` and leave the env
   needing a reset (``step`` raises ``ResetNeeded``).

If ``admissible_actions`` is ``None`` the walk asks ``env.unwrapped.suggest_action(rng) -> str``
for a valid action (an env with an unbounded action set should provide it).
"""

from __future__ import annotations

import re
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from agentgym_credit.envs import snapshot as _snapshot
from agentgym_credit.envs.base import CONTRACT_INFO_KEYS
from agentgym_credit.errors import ContractViolation, ResetNeeded, SnapshotError, SnapshotUnsupported
from agentgym_credit.wrappers.action_projection import fill_template, is_template, project_action

FOREIGN_SYNTAX: tuple[str, ...] = (
    "search[shoes]",
    "click[Buy Now]",
    "go north",
    "go to cabinet 1",
    "take apple 1 from countertop 1",
)
"""Valid action syntax of some env family, invalid in most others."""

BAD_ACTIONS: tuple[Any, ...] = (
    "",
    "x" * 100_000,
    b"\x00\xff\xfejunk bytes",
    "\x00\x01\x02 look \x7f",
    "\u65e5\u672c\u8a9e \u2603 \u202e\U0001f600 \u0000",
)
"""Action values that are never valid: empty, huge, bytes, control characters, unicode noise."""


@dataclass
class ContractReport:
    """What :func:`check_credit_env` checked (``checked``), and what it could not (``skipped``)."""

    env: str
    checked: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    steps: int = 0
    resets: int = 0
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)


def _fail(env_name: str, what: str) -> ContractViolation:
    return ContractViolation(f"{env_name}: {what}")


def _random_unicode(rng: np.random.Generator, n: int = 24) -> str:
    """Printable-ish code points from several scripts (no surrogates)."""
    ranges = [(0x00A1, 0x024F), (0x0370, 0x03FF), (0x0400, 0x04FF), (0x4E00, 0x4FFF), (0x1F300, 0x1F5FF)]
    out = []
    for _ in range(n):
        lo, hi = ranges[int(rng.integers(len(ranges)))]
        out.append(chr(int(rng.integers(lo, hi))))
    return "".join(out)


class _Checker:
    def __init__(self, env: gym.Env, seed: int, n_steps: int):
        self.env = env.unwrapped
        spec = getattr(env, "spec", None) or getattr(self.env, "spec", None)
        self.name = spec.id if spec is not None else type(self.env).__name__
        self.seed = int(seed)
        # "another seed": 123 is the seed gymnasium's check_env resets with, so an env that caches its
        # tasks (ALFWorld loads a game per task) does not pay for one more
        self.other_seed = 123 if self.seed != 123 else 124
        self.n_steps = int(n_steps)
        self.rng = np.random.default_rng(seed)
        self.report = ContractReport(self.name)
        self.model_seen = False
        self.log: list[tuple[Any, str, Any]] | None = None  # (action, obs, state_key) since reset(seed)
        self.adm_by_key: dict[tuple[Any, Any], tuple[frozenset[str], str]] = {}  # (task, key) -> (actions, where)
        self.outcome: dict[tuple[Any, ...], tuple[float, bool, str]] = {}  # (task, key, action, next key) -> ...

    # -- helpers ---------------------------------------------------------------------------------
    @property
    def model(self) -> Any:
        """The env's exact model, if it has one (it may change with the task at each reset)."""
        model = getattr(self.env, "model", None)
        return model if hasattr(model, "state_keys") and hasattr(model, "P") else None

    def fail(self, what: str) -> ContractViolation:
        return _fail(self.name, what)

    def reset(self, seed: int) -> tuple[str, dict[str, Any]]:
        self.report.resets += 1
        try:
            obs, info = self.env.reset(seed=seed)
        except Exception as e:
            raise self.fail(f"reset(seed={seed}) raised {type(e).__name__}: {e}") from e
        self.check_info(obs, info, f"reset(seed={seed})")
        return obs, info

    def step(self, action: Any, where: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self.report.steps += 1
        try:
            out = self.env.step(action)
        except Exception as e:
            raise self.fail(f"step({_short(action)}) at {where} raised {type(e).__name__}: {e}") from e
        if not (isinstance(out, tuple) and len(out) == 5):
            raise self.fail(f"step must return (obs, reward, terminated, truncated, info), got {type(out).__name__}")
        obs, reward, terminated, truncated, info = out
        self.check_info(obs, info, f"step({_short(action)}) at {where}")
        if self.log is not None:
            self.log.append((action, obs, info["state_key"]))
        return obs, float(reward), bool(terminated), bool(truncated), info

    def check_info(self, obs: Any, info: Any, where: str) -> None:
        if not isinstance(obs, str):
            raise self.fail(f"{where}: observation must be a str, got {type(obs).__name__}")
        if not isinstance(info, dict):
            raise self.fail(f"{where}: info must be a dict, got {type(info).__name__}")
        missing = [k for k in CONTRACT_INFO_KEYS if k not in info]
        if missing:
            raise self.fail(f"{where}: info lacks contract keys {missing}")
        for k in ("state_key", "obs_key"):
            v = info[k]
            if not isinstance(v, (str, bytes)) or len(v) == 0:
                raise self.fail(f"{where}: info[{k!r}] must be a non-empty str or bytes, got {_short(v)}")
        adm = info["admissible_actions"]
        if adm is not None:
            if not isinstance(adm, list) or not all(isinstance(a, str) for a in adm):
                raise self.fail(f"{where}: info['admissible_actions'] must be a list[str] or None, got {_short(adm)}")
            if len(set(adm)) != len(adm):
                raise self.fail(f"{where}: info['admissible_actions'] has duplicates: {adm}")
            self.check_same_actions(info, frozenset(adm), where)
        if not isinstance(info["task_id"], (str, int)) or isinstance(info["task_id"], bool):
            raise self.fail(f"{where}: info['task_id'] must be a str or int, got {_short(info['task_id'])}")
        for k in ("won", "action_valid"):
            if not isinstance(info[k], bool):
                raise self.fail(f"{where}: info[{k!r}] must be a bool, got {type(info[k]).__name__}")
        if self.model is not None and "state_index" in info:
            self.model_seen = True
            s = int(info["state_index"])
            if not 0 <= s < self.model.n_states:
                raise self.fail(f"{where}: info['state_index']={s} is not a state of env.model")
            if info["state_key"] != self.model.state_keys[s]:
                raise self.fail(f"{where}: state_key {info['state_key']!r} != model.state_keys[{s}]")
            if adm is not None and adm != list(self.model.actions[s]):
                raise self.fail(f"{where}: admissible_actions {adm} != model.actions[{s}] {self.model.actions[s]}")

    def check_same_actions(self, info: dict[str, Any], adm: frozenset[str], where: str) -> None:
        """One ``(task_id, state_key)``, one set of admissible actions (else the key misses a fact)."""
        seen = self.adm_by_key.setdefault((info["task_id"], info["state_key"]), (adm, where))
        if seen[0] != adm:
            diff = sorted(seen[0] ^ adm)
            raise self.fail(
                f"{where}: state_key {_short(info['state_key'])} was seen at {seen[1]} with other admissible "
                f"actions (they differ in {_short(diff)}): the key leaves out something that changes what "
                "actions do"
            )

    def check_same_outcome(self, info0: dict, action: str, reward: float, terminated: bool, info1: dict,
                           where: str) -> None:
        """One ``(task, key, action, next key)``, one ``(reward, terminated)``."""
        k = (info0["task_id"], info0["state_key"], action, info1["state_key"])
        seen = self.outcome.setdefault(k, (reward, terminated, where))
        if not np.isclose(seen[0], reward) or seen[1] != terminated:
            raise self.fail(
                f"{where}: {_short(action)} from state_key {_short(info0['state_key'])} to "
                f"{_short(info1['state_key'])} gave reward {reward}, terminated={terminated}; at {seen[2]} the "
                f"same step gave other reward {seen[0]}, terminated={seen[1]}: the key leaves out something "
                "that changes what actions do"
            )

    def check_model_step(self, info0: dict, action: str, reward: float, terminated: bool, info1: dict) -> None:
        if self.model is None or "state_index" not in info0 or "state_index" not in info1:
            return
        s, ns = int(info0["state_index"]), int(info1["state_index"])
        try:
            a = self.model.action_index(s, action)
        except KeyError as e:
            raise self.fail(f"action {action!r} was admissible in the env but is not in model.actions[{s}]") from e
        ok = any(p > 0 and n == ns and np.isclose(r, reward) and bool(d) == terminated
                 for p, n, r, d in self.model.P[s][a])
        if not ok:
            raise self.fail(
                f"step {action!r} from state {s} gave (next={ns}, reward={reward}, terminated={terminated}), "
                f"which is not an outcome of model.P[{s}][{a}] = {self.model.P[s][a]}"
            )

    def pick(self, info: dict[str, Any], obs: str = "") -> str | None:
        adm = info["admissible_actions"]
        if adm:
            action = adm[int(self.rng.integers(len(adm)))]
            if is_template(action):  # e.g. search[<query>]: fill it with words of the observation
                words = re.findall(r"[A-Za-z]{3,}", obs) or ["item"]
                fills = [" ".join(words[int(i)] for i in self.rng.integers(len(words), size=2)) for _ in range(8)]
                action = fill_template(action, fills)
            return action
        suggest = getattr(self.env, "suggest_action", None)
        if adm is None and callable(suggest):
            return str(suggest(self.rng))
        return None

    # -- checks ----------------------------------------------------------------------------------
    def gymnasium_check(self) -> None:
        from gymnasium.utils.env_checker import check_env

        for space_name in ("observation_space", "action_space"):
            if not isinstance(getattr(self.env, space_name, None), gym.spaces.Text):
                raise self.fail(f"{space_name} must be a gymnasium.spaces.Text")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                check_env(self.env, skip_render_check=True, skip_close_check=True)
        except Exception as e:
            raise self.fail(f"gymnasium check_env failed: {type(e).__name__}: {e}") from e
        self.report.checked.append("gymnasium check_env")

    def determinism(self) -> tuple[str, dict[str, Any]]:
        obs_a, info_a = self.reset(self.seed)
        self.reset(self.other_seed)
        obs_b, info_b = self.reset(self.seed)
        if obs_a != obs_b or info_a["state_key"] != info_b["state_key"]:
            raise self.fail(
                f"reset(seed={self.seed}) is not deterministic: observations/state_keys differ "
                f"({_short(info_a['state_key'])} vs {_short(info_b['state_key'])})"
            )
        self.report.checked.append("reset determinism")
        return obs_b, info_b

    def bad_actions(self, obs: str, info: dict[str, Any], where: str) -> tuple[str, dict[str, Any], bool]:
        """Send every bad action; returns the (unchanged) state and whether the env truncated."""
        adm = info["admissible_actions"]
        junk = [*BAD_ACTIONS, _random_unicode(self.rng)]
        foreign = [a for a in FOREIGN_SYNTAX if adm is None or project_action(a, adm) is None]
        key = info["state_key"]
        for action in junk + foreign:
            strict = adm is not None or action in junk
            o, _, terminated, truncated, inf = self.step(action, where)
            if not strict:
                if terminated or truncated:
                    return o, inf, True
                obs, key, info = o, inf["state_key"], inf
                continue
            if inf["action_valid"]:
                raise self.fail(f"bad action {_short(action)} at {where} was accepted (action_valid=True)")
            if inf["state_key"] != key:
                raise self.fail(f"bad action {_short(action)} at {where} changed state_key (must be a no-op)")
            if terminated:
                raise self.fail(f"bad action {_short(action)} at {where} terminated the episode (must be a no-op)")
            if truncated:
                return o, inf, True
        return obs, info, False

    def walk(self, obs: str, info: dict[str, Any]) -> list[str]:
        """Random admissible actions until the episode ends; returns the actions taken."""
        actions: list[str] = []
        keys, obs_seen = {info["state_key"]}, {info["obs_key"]}
        bad_done_after_change = False
        for _ in range(self.n_steps):
            action = self.pick(info, obs)
            if action is None:
                self.report.skipped.append(
                    "random walk: no admissible action listed and no suggest_action hook"
                )
                return actions
            o, r, terminated, truncated, inf = self.step(action, f"walk step {len(actions)}")
            if not inf["action_valid"]:
                raise self.fail(f"admissible action {action!r} was rejected (action_valid=False)")
            self.check_model_step(info, action, r, terminated, inf)
            self.check_same_outcome(info, action, r, terminated, inf, f"walk step {len(actions)}")
            actions.append(action)
            keys.add(inf["state_key"])
            obs_seen.add(inf["obs_key"])
            self.surface_noise(inf)
            if terminated or truncated:
                self.after_end(action)
                if len(keys) == 1 and len(obs_seen) > 2:
                    raise self.fail(
                        f"state_key never changed over {len(actions)} steps while the observation took "
                        f"{len(obs_seen)} values: it does not follow the true state"
                    )
                self.report.checked.append(f"random walk ({len(actions)} steps, {len(keys)} state keys)")
                return actions
            if not bad_done_after_change and inf["state_key"] != info["state_key"]:
                bad_done_after_change = True
                o2, inf2, trunc = self.bad_actions(o, inf, f"walk step {len(actions)}")
                if trunc:
                    self.after_end(None)
                    self.report.checked.append(f"random walk ({len(actions)} steps; truncated on a no-op)")
                    return actions
                o, inf = o2, inf2
            obs, info = o, inf
        raise self.fail(
            f"no episode end within n_steps={self.n_steps} random admissible actions, so `step after the "
            "end raises ResetNeeded` could not be checked; give the env a step limit or raise n_steps"
        )

    def more_episodes(self, n: int) -> None:
        """``n`` more random walks from ``reset(seed)`` (same task), feeding checks 6b."""
        steps = 0
        for e in range(n):
            obs, info = self.reset(self.seed)
            for t in range(self.n_steps):
                action = self.pick(info, obs)
                if action is None:
                    return
                where = f"extra episode {e} step {t}"
                o, r, terminated, truncated, inf = self.step(action, where)
                if not inf["action_valid"]:
                    raise self.fail(f"admissible action {action!r} was rejected (action_valid=False) at {where}")
                self.check_same_outcome(info, action, r, terminated, inf, where)
                obs, info, steps = o, inf, steps + 1
                if terminated or truncated:
                    break
        self.report.checked.append(
            f"one state_key, one set of admissible actions and one outcome per action ({n} more episodes, "
            f"{steps} steps)"
        )

    def after_end(self, action: str | None) -> None:
        try:
            self.env.step(action if action is not None else "look")
        except ResetNeeded:
            self.report.checked.append("step after episode end raises ResetNeeded")
            return
        except Exception as e:
            raise self.fail(f"step after the episode ended raised {type(e).__name__}, not ResetNeeded: {e}") from e
        raise self.fail("step after the episode ended did not raise ResetNeeded")

    def surface_noise(self, info: dict[str, Any]) -> None:
        hook = getattr(self.env, "equivalent_state_keys", None)
        if not callable(hook):
            return
        keys = list(hook(self.rng, 3))
        if any(k != info["state_key"] for k in keys):
            raise self.fail(
                f"state_key depends on surface noise: equivalent renderings gave {[_short(k) for k in keys]}, "
                f"info has {_short(info['state_key'])}"
            )

    def replay(self, first: tuple[str, Any], limit: int = 40) -> None:
        """After an episode with another seed, ``reset(seed)`` and the logged actions again."""
        log = self.log[:limit]
        self.log = None
        obs, info = self.reset(self.other_seed)
        for _ in range(3):
            action = self.pick(info, obs)
            if action is None:
                break
            obs, _, term, trunc, info = self.step(action, "episode with another seed")
            if term or trunc:
                break
        obs, info = self.reset(self.seed)
        if (obs, info["state_key"]) != first:
            raise self.fail("reset(seed) after another episode gave a different initial state")
        for i, (action, ref_obs, ref_key) in enumerate(log):
            o, _, term, trunc, inf = self.step(action, f"replay step {i}")
            if (o, inf["state_key"]) != (ref_obs, ref_key):
                raise self.fail(
                    f"replaying seed {self.seed} with the same actions gave a different observation or state_key "
                    f"at step {i} ({_short(action)}): equal states reached twice must have equal keys, and "
                    "nothing may leak from earlier episodes"
                )
            if term or trunc:
                break
        self.report.checked.append(f"equal states reached twice have equal keys ({len(log)} steps replayed)")

    # -- 9. snapshots ------------------------------------------------------------------------------
    def _played(self, info: dict[str, Any], obs: str, n: int) -> tuple[list[str], list[tuple]]:
        """Up to ``n`` random admissible steps: the actions and what each step gave."""
        actions, seen = [], []
        for i in range(n):
            action = self.pick(info, obs)
            if action is None:
                break
            obs, r, term, trunc, info = self.step(action, f"snapshot check step {i}")
            actions.append(action)
            seen.append((obs, r, term, trunc, *(_plain_key(info[k]) for k in _SNAPSHOT_KEYS)))
            if term or trunc:
                break
        return actions, seen

    def snapshots(self, before: int = 3, after: int = 8) -> None:
        obs, info = self.reset(self.seed)
        try:
            self.env.get_state()
        except SnapshotUnsupported as e:
            self.report.skipped.append(f"snapshots: {e}")
            return
        for i in range(before):
            action = self.pick(info, obs)
            if action is None:
                break
            o, _, term, trunc, inf = self.step(action, f"snapshot check prefix step {i}")
            if term or trunc:
                break
            obs, info = o, inf
        if getattr(self.env, "_needs_reset", False):  # the prefix ended the episode
            obs, info = self.reset(self.seed)
        snap = self.env.get_state()
        at = (obs, *(_plain_key(info[k]) for k in _SNAPSHOT_KEYS))
        actions, first = self._played(info, obs, after)
        for attempt in ("after the episode went on", "a second time"):
            try:
                obs2, info2 = self.env.set_state(snap)
            except Exception as e:
                raise self.fail(f"set_state of its own snapshot ({attempt}) raised {type(e).__name__}: {e}") from e
            self.check_info(obs2, info2, f"set_state ({attempt})")
            if (obs2, *(_plain_key(info2[k]) for k in _SNAPSHOT_KEYS)) != at:
                raise self.fail(f"set_state ({attempt}) did not return the snapshot step's observation and keys "
                                f"({', '.join(_SNAPSHOT_KEYS)})")
            for i, action in enumerate(actions):
                o, r, term, trunc, inf = self.step(action, f"after set_state step {i}")
                got = (o, r, term, trunc, *(_plain_key(inf[k]) for k in _SNAPSHOT_KEYS))
                if got != first[i]:
                    diff = [n for n, a, b in zip(("obs", "reward", "terminated", "truncated", *_SNAPSHOT_KEYS),
                                                 got, first[i]) if a != b]
                    raise self.fail(f"after set_state ({attempt}), step {i} ({_short(action)}) differs from the "
                                    f"original run in {diff}: a snapshot must hold everything the next steps "
                                    "depend on")
        self.report.checked.append(f"snapshots restore the run ({len(actions)} steps replayed twice)")
        self.bad_snapshots(snap)

    def bad_snapshots(self, snap: bytes) -> None:
        """Corrupted, non-bytes and foreign snapshots are ``SnapshotError`` and leave the env needing a reset."""
        bad: list[tuple[str, Any]] = [
            ("corrupted", snap[:-2] + bytes([snap[-2] ^ 0x01]) + snap[-1:]),
            ("not bytes", snap.decode("latin-1")),
            ("truncated", snap[: len(snap) // 2]),
        ]
        if snap.startswith(_snapshot.SNAPSHOT_HEADER + b"\n"):
            doc = _snapshot.inspect_snapshot(snap)
            bad.append(("from another configuration",
                        _snapshot.pack(doc["env"], "0" * 32, doc["rng"], doc["payload"])))
            bad.append(("from another env class",
                        _snapshot.pack(doc["env"] + "Other", doc["config"], doc["rng"], doc["payload"])))
        else:
            self.report.skipped.append("foreign snapshots: the env's snapshot is not in the agc-snapshot format")
        for what, value in bad:
            obs, info = self.reset(self.seed)
            try:
                self.env.set_state(value)
            except SnapshotError:
                pass
            except Exception as e:
                raise self.fail(f"set_state of a {what} snapshot raised {type(e).__name__}, not SnapshotError: "
                                f"{e}") from e
            else:
                raise self.fail(f"set_state accepted a {what} snapshot (it must raise SnapshotError)")
            try:
                self.env.step(self.pick(info, obs) or "look")
            except ResetNeeded:
                continue
            except Exception as e:
                raise self.fail(f"step after a refused {what} snapshot raised {type(e).__name__}, not "
                                f"ResetNeeded: {e}") from e
            raise self.fail(f"step after a refused {what} snapshot went on (it must raise ResetNeeded)")
        self.report.checked.append(f"bad snapshots are SnapshotError ({', '.join(w for w, _ in bad)})")


_SNAPSHOT_KEYS = ("state_key", "obs_key", "admissible_actions", "won", "task_id")


def _plain_key(v: Any) -> Any:
    """A comparable form of an info value (lists as tuples)."""
    return tuple(v) if isinstance(v, list) else v


def _short(v: Any, n: int = 60) -> str:
    r = repr(v)
    return r if len(r) <= n else r[: n - 3] + "..."


def check_credit_env(
    env: gym.Env, *, seed: int = 0, n_steps: int = 300, gymnasium_check: bool = True, extra_episodes: int = 4,
    snapshots: bool = True,
) -> ContractReport:
    """Check ``env`` against the agentgym-credit contract (module docstring lists the checks).

    Raises :class:`~agentgym_credit.errors.ContractViolation` naming the first failed check;
    returns a :class:`ContractReport` otherwise. ``n_steps`` bounds the random walk that must
    reach an episode end; ``extra_episodes`` more random episodes of the same task feed check 6b;
    ``snapshots=False`` leaves out check 9.
    The env is reset and stepped; reset it before using it again.

    >>> import gymnasium as gym, agentgym_credit
    >>> report = check_credit_env(gym.make("credit/GridWorld-v0"))
    >>> "reset determinism" in report.checked
    True
    """
    t0 = time.perf_counter()
    c = _Checker(env, seed, n_steps)
    if gymnasium_check:
        c.gymnasium_check()
    c.report.timings["gymnasium"] = time.perf_counter() - t0
    obs, info = c.determinism()
    c.report.timings["determinism"] = time.perf_counter() - t0 - sum(c.report.timings.values())
    c.report.checked.append("info keys and types")
    first = (obs, info["state_key"])
    c.log = []
    obs, info, truncated = c.bad_actions(obs, info, "reset")
    if truncated:
        c.after_end(None)
        obs, info = c.reset(c.seed)
        c.log = []
    c.report.checked.append("bad actions are no-ops")
    c.report.timings["bad actions"] = time.perf_counter() - t0 - sum(c.report.timings.values())
    actions = c.walk(obs, info)
    c.report.timings["walk"] = time.perf_counter() - t0 - sum(c.report.timings.values())
    if c.model_seen:
        c.report.checked.append("env agrees with its TabularModel")
    if callable(getattr(c.env, "equivalent_state_keys", None)):
        c.report.checked.append("state_key ignores surface noise (equivalent_state_keys)")
    else:
        c.report.skipped.append("surface noise: env has no equivalent_state_keys hook")
    if actions:
        c.replay(first)
    c.report.timings["replay"] = time.perf_counter() - t0 - sum(c.report.timings.values())
    if actions and extra_episodes > 0:
        c.more_episodes(int(extra_episodes))
    c.report.timings["extra episodes"] = time.perf_counter() - t0 - sum(c.report.timings.values())
    if snapshots:
        c.snapshots()
        c.report.timings["snapshots"] = time.perf_counter() - t0 - sum(c.report.timings.values())
    c.report.seconds = time.perf_counter() - t0
    return c.report


__all__ = ["check_credit_env", "ContractReport", "BAD_ACTIONS", "FOREIGN_SYNTAX"]
