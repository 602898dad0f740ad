"""``GroupedRolloutCollector``: N rollouts per task from one initial state, one policy call per step.

What lives here:

- :class:`GroupedRolloutCollector`: resets ``group_size`` copies of an env per task with the same
  seed and task, checks that they share one initial ``state_key``, steps every active episode of
  every group together, calls the policy **once per step for the whole batch**, and returns a
  :class:`~agentgym_credit.wrappers.rollout_batch.RolloutBatch`.
- :class:`PolicyOutput`: the richer policy return (action text + per-step extras).
- :func:`group_seed`: the reset seed of group ``i`` of a collector seeded with ``seed``.

**Policy convention.** ``policy(observations: list[str], infos: list[dict]) -> list`` with one
entry per observation, each either

- a ``str`` (the action text),
- a mapping with an ``"action"`` key — every other key is recorded as a per-step extra
  (token ids, log-probs, ...), or
- an object with an ``action`` attribute and an optional ``extras`` mapping (:class:`PolicyOutput`).

``infos[i]`` is the env's info for that observation (``admissible_actions``, ``history_keys``, ...)
plus ``info["rollout"] = {"group_id", "traj_id", "copy", "t"}`` so that a stateful policy (a chat
history per trajectory) knows whose turn it is (``t`` is the env step). A branch (``collect(...,
branch=...)``) adds ``"parent"``, ``"branch_t"`` (the parent's row it started from) and
``"start_t"`` (the env step of its first row): a policy with a history starts the branch's from
the parent's history up to that row.

**Bad policy output.** Anything but a list/tuple of the right length raises ``TypeError`` /
``ValueError`` naming the problem (the actions cannot be matched to trajectories); the workers stay
usable. A single entry that is not a string (or a mapping without ``"action"``) fails only its own
trajectory, recorded with the error — the rest of the batch goes on. A policy that cannot act for one
trajectory (a prompt that cannot fit its model, say) returns ``{"error": "why"}`` for it: that trajectory
fails with ``policy failed: why`` (an empty or ``None`` reason says so: a failure is never without its text).

**Seeding** (identical on every backend). Group ``i`` of the collector's lifetime gets the reset
seed :func:`group_seed(seed, i) <group_seed>` (or the ``seeds`` given to :meth:`collect`); all its
copies call ``env.reset(seed=group_seed, options={"task": task})`` — same initial state — and then
copy ``c`` continues with ``env.unwrapped.np_random`` replaced by a generator seeded from
``(group_seed, c)``, so that stochastic transitions (slip) differ between copies, reproducibly.
An env must therefore draw its transition randomness from ``self.np_random``.

**Faults.** An env that raises in ``reset``/``step`` fails its trajectory (error recorded, group
flagged, env rebuilt before its next use). A worker that dies or does not answer within
``timeout`` seconds is replaced, and its in-flight root trajectories are **re-run** on the
replacement from their own reset seed and copy (same initial state, same transition noise; the
policy is called again for them), at most ``max_retries`` times each; ``batch.traj.retries``
records how often. So a ``collect`` returns complete groups unless a trajectory keeps losing its
worker (a deterministic hang), which then fails after its retries. A branch whose worker is lost
fails (branches are extra budget). Workers that died while idle are replaced before a ``collect``
starts. ``timeout`` bounds one round trip on every backend, not a replacement worker's start-up (up to
120 s, the backends' ``start_timeout``; the sync backend: see
:class:`~agentgym_credit.wrappers.backends.SyncBackend` for its limits). Ctrl-C (or any
``KeyboardInterrupt`` raised inside ``collect``) terminates the workers before it propagates; the
collector re-creates them on the next ``collect``, and a ``collect`` that raised consumes no group
seeds. ``collect`` warns (``UserWarning``) when any trajectory failed; ``batch.traj.failed``/
``batch.traj.error`` say which and why, and ``batch.steps`` leaves them out (see
:mod:`~agentgym_credit.wrappers.rollout_batch`).

**Env factories.** ``env`` is an env id (made with ``gym.make(env, **env_kwargs)`` in each worker)
or a zero-argument callable returning an env. For ``backend="subprocess"`` (spawned processes) and
``backend="ray"`` the callable must be picklable: a module-level function or class, or a
``functools.partial`` of one — not a lambda or a local function.
"""

from __future__ import annotations

import gc
import os
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from operator import itemgetter
from typing import Any

import gymnasium as gym
import numpy as np

from agentgym_credit.envs.snapshot import snapshot_key
from agentgym_credit.errors import GroupMismatchError
from agentgym_credit.wrappers.backends import Backend, make_backend
from agentgym_credit.wrappers.branching import BranchConfig, grow_branches, tree_columns
from agentgym_credit.wrappers.progress import RolloutProgress
from agentgym_credit.wrappers.recording import Columns, Roll, history_matrix, new_traj
from agentgym_credit.wrappers.rollout_batch import RolloutBatch, TrajectoryTable
from agentgym_credit.wrappers.workers import EnvFactory, EnvFailure

Policy = Callable[[list[str], list[dict[str, Any]]], Sequence[Any]]

_OBS, _INFO = itemgetter(0), itemgetter(4)  # fields of a worker's StepResult


@dataclass
class PolicyOutput:
    """One policy decision: the action text and extras recorded with the step.

    >>> PolicyOutput("go north", {"logprob": -0.1}).extras["logprob"]
    -0.1
    """

    action: str
    extras: dict[str, Any] = field(default_factory=dict)


def group_seed(seed: int, index: int) -> int:
    """Reset seed of the ``index``-th group collected by a collector seeded with ``seed``."""
    return int(np.random.SeedSequence([int(seed), int(index)]).generate_state(1, np.uint32)[0])


_NO_REASON = "the policy gave an empty 'error' (no reason)"
"""What a policy's ``{"error": ""}`` (or ``None``) fails its trajectory with: a failure always says why."""


def _parse_policy_output(out: Any, n: int
                         ) -> tuple[list[Any], list[dict[str, Any] | None] | None, list[str | None] | None]:
    """Actions, extras (per entry, ``None`` = none; or ``None`` for all) and errors (likewise)."""
    if isinstance(out, (str, bytes)) or not isinstance(out, (Sequence, np.ndarray)):
        raise TypeError(
            f"policy must return a list with one action per observation, got {type(out).__name__}"
        )
    out = list(out)
    if len(out) != n:
        raise ValueError(f"policy returned {len(out)} actions for {n} observations; it must return exactly one "
                         "action per observation, in order")
    if set(map(type, out)) <= {str}:  # the plain case, kept cheap
        return out, None, None
    actions: list[Any] = []
    extras: list[dict[str, Any] | None] = []
    errors: list[str | None] = []
    for i, item in enumerate(out):
        ex: dict[str, Any] | None = None
        if isinstance(item, str):
            a = item
        elif isinstance(item, Mapping):
            a = item.get("action")
            ex = {k: v for k, v in item.items() if k != "action"}
            if "action" not in item:
                actions.append(None)
                extras.append({k: v for k, v in ex.items() if k != "error"})
                errors.append(f"policy failed: {str(item['error'] or '').strip() or _NO_REASON}" if "error" in item else
                              f"TypeError: policy output {i} is a mapping without an 'action' key")
                continue
        elif hasattr(item, "action"):
            a = item.action
            ex = dict(getattr(item, "extras", None) or {})
        else:
            a = item
        actions.append(a)
        extras.append(ex)
        errors.append(None if isinstance(a, str) else
                      f"TypeError: policy returned {type(a).__name__} {a!r:.80} as action {i}; actions must be str")
    return actions, extras, errors


class GroupedRolloutCollector:
    """Grouped rollouts with a batched policy (see the module docstring for the full contract).

    Args:
        env: env id (``"credit/GridWorld-v0"``) or a zero-argument env factory.
        group_size: N, rollouts per task (one group).
        backend: ``"sync"`` (in process), ``"subprocess"`` or ``"ray"``.
        num_workers: worker processes/actors (default 1 for sync, ``min(4, cpu count)`` otherwise).
        max_steps: step limit per trajectory; a trajectory reaching it is truncated (``done``).
        history_depth: K of :class:`HistoryFingerprint` (``history_keys`` has K+1 levels).
        include_actions: history contexts include the actions between states.
        progress: show a tqdm progress bar (if tqdm is installed).
        seed: collector seed; group reset seeds derive from it and a running group counter.
        env_kwargs: keyword arguments of ``gym.make`` (env ids only).
        max_active_groups: groups stepped together (default: all groups of a ``collect`` call);
            fewer bound the number of live envs to ``max_active_groups * group_size``.
        timeout: seconds allowed for one worker round trip before the worker counts as dead (sync:
            enforced with SIGALRM from the main thread, see ``SyncBackend``).
        max_retries: times a root trajectory whose worker died or hung is re-run from its seed.
        fail_fast: when every trajectory of a ``collect`` failed for one reason (an env that cannot be
            made, a policy that returns non-strings...), raise :class:`CollectionFailed` with that reason
            instead of warning and returning a batch with no steps (``err.batch`` still holds it).
        start_method: multiprocessing start method of the subprocess backend.
        spare_workers: started idle processes of the subprocess backend that replace a lost worker at once.
        ray_options: ``.options(...)`` of each Ray actor (default ``{"num_cpus": 1}``).

    >>> import agentgym_credit
    >>> from agentgym_credit.wrappers import GroupedRolloutCollector
    >>> col = GroupedRolloutCollector("credit/GridWorld-v0", group_size=4, progress=False)
    >>> batch = col.collect(lambda obs, infos: [i["admissible_actions"][0] for i in infos], tasks=2)
    >>> batch.num_groups, batch.num_trajectories
    (2, 8)
    """

    def __init__(
        self,
        env: str | Callable[[], gym.Env],
        group_size: int = 8,
        *,
        backend: str = "sync",
        num_workers: int | None = None,
        max_steps: int = 100,
        history_depth: int = 4,
        include_actions: bool = False,
        progress: bool = True,
        seed: int = 0,
        env_kwargs: dict[str, Any] | None = None,
        max_active_groups: int | None = None,
        timeout: float = 300.0,
        start_method: str = "spawn",
        ray_options: dict[str, Any] | None = None,
        max_retries: int = 2,
        spare_workers: int = 1,
        fail_fast: bool = True,
    ):
        if isinstance(env, str):
            if ":" not in env:  # "module:id" registers on import in the worker; a plain id must exist now
                gym.spec(env)  # an unknown id raises gymnasium's NameNotFound with its "Did you mean" here
            self.factory: Callable[[], gym.Env] = EnvFactory(env, tuple(sorted((env_kwargs or {}).items())))
        elif callable(env):
            if env_kwargs:
                raise ValueError("env_kwargs only applies to env ids; bind arguments into your factory instead")
            self.factory = env
        else:
            raise TypeError(f"env must be an env id (str) or a zero-argument factory, got {type(env).__name__}")
        if int(group_size) < 1:
            raise ValueError(f"group_size must be >= 1, got {group_size}")
        if int(max_steps) < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        if int(history_depth) < 0:
            raise ValueError(f"history_depth must be >= 0, got {history_depth}")
        if max_active_groups is not None and int(max_active_groups) < 1:
            raise ValueError(f"max_active_groups must be >= 1, got {max_active_groups}")
        if int(max_retries) < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if backend not in ("sync", "subprocess", "ray"):
            raise ValueError(f"backend must be 'sync', 'subprocess' or 'ray', got {backend!r}")
        self.env_name = env if isinstance(env, str) else getattr(env, "__qualname__", repr(env))
        self.fail_fast = bool(fail_fast)
        self.group_size = int(group_size)
        self.backend_name = backend
        self.num_workers = 1 if backend == "sync" else int(num_workers or min(4, os.cpu_count() or 1))
        self.max_steps = int(max_steps)
        self.history_depth = int(history_depth)
        self.include_actions = bool(include_actions)
        self.progress = bool(progress)
        self.seed = int(seed)
        self.max_active_groups = None if max_active_groups is None else int(max_active_groups)
        self.timeout = float(timeout)
        self.start_method, self.spare_workers = start_method, spare_workers
        self.ray_options = ray_options
        self.max_retries = int(max_retries)
        self.groups_collected = 0
        self._backend: Backend | None = None

    # -- workers ----------------------------------------------------------------------------------
    @property
    def backend(self) -> Backend:
        """The running backend (started on first use, again after :meth:`close`)."""
        if self._backend is None:
            self._backend = make_backend(
                self.backend_name, self.factory, history_depth=self.history_depth,
                include_actions=self.include_actions, num_workers=self.num_workers, timeout=self.timeout,
                start_method=self.start_method, ray_options=self.ray_options, spare_workers=self.spare_workers,
            )
        return self._backend

    def worker_pids(self) -> list[int]:
        """Process ids of the env workers (starts them if needed)."""
        return self.backend.worker_pids()

    def close(self) -> None:
        """Stop the workers and close every env."""
        if self._backend is not None:
            backend, self._backend = self._backend, None
            backend.close()

    def __enter__(self) -> GroupedRolloutCollector:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def _run(self, batches: list[tuple | None]) -> list[list[Any]]:
        try:
            return self.backend.run(batches)
        except BaseException:
            self.close()  # a round trip broken half-way leaves the workers in an unknown state
            raise

    # -- collection -------------------------------------------------------------------------------
    def collect(self, policy: Policy, tasks: int | Sequence[Any] = 1, *, seeds: Sequence[int] | None = None,
                branch: BranchConfig | None = None) -> RolloutBatch:
        """Collect one group of ``group_size`` rollouts per task.

        ``tasks`` is a list of tasks (passed as ``options={"task": task}``; ``None`` = the env's
        default) or an int, the number of groups with the default task. ``seeds`` overrides the
        reset seed of each group (default: :func:`group_seed` of the collector seed and a counter
        that runs over the collector's lifetime, so successive calls give new groups).
        ``branch`` (a :class:`~agentgym_credit.wrappers.branching.BranchConfig`) grows each group
        into a rollout tree after its ``group_size`` root trajectories have ended: extra env steps on
        branches restored from chosen steps' snapshots (see :mod:`~agentgym_credit.wrappers.branching`).
        """
        if branch is not None and not isinstance(branch, BranchConfig):
            raise TypeError(f"branch must be a BranchConfig or None, got {type(branch).__name__}")
        if isinstance(tasks, np.ndarray):
            tasks = tasks.tolist()
        if isinstance(tasks, (int, np.integer)) and not isinstance(tasks, bool):
            if tasks < 1:
                raise ValueError(f"tasks (number of groups) must be >= 1, got {tasks}")
            task_list: list[Any] = [None] * int(tasks)
        elif isinstance(tasks, Sequence) and not isinstance(tasks, (str, bytes)):
            task_list = list(tasks)
            if not task_list:
                raise ValueError("tasks is empty")
        else:
            raise TypeError(f"tasks must be an int (number of groups) or a list of tasks, got {type(tasks).__name__}")
        if seeds is None:
            seed_list = [group_seed(self.seed, self.groups_collected + g) for g in range(len(task_list))]
        else:
            seed_list = [int(s) for s in seeds]
            if len(seed_list) != len(task_list):
                raise ValueError(f"got {len(seed_list)} seeds for {len(task_list)} tasks")

        self.backend.use_key(snapshot_key())  # a snapshot key changed since the last collect: all workers together
        self.backend.ensure_alive()  # workers that died while idle are replaced before we start
        cols = Columns()
        bar = RolloutProgress(len(task_list) * self.group_size, enabled=self.progress)
        wave = self.max_active_groups or len(task_list)
        try:
            with self.backend.session():
                for g0 in range(0, len(task_list), wave):
                    self._collect_wave(policy, task_list[g0:g0 + wave], seed_list[g0:g0 + wave], g0, cols, bar,
                                       branch)
        except (KeyboardInterrupt, SystemExit):
            self.close()
            raise
        finally:
            bar.close()
        self.groups_collected += len(task_list)  # a collect that raised consumed no group seeds
        gc_was_enabled = gc.isenabled()
        gc.disable()  # the build allocates many small containers, none of them cyclic garbage
        try:
            batch = self._build(cols)
        finally:
            if gc_was_enabled:
                gc.enable()
        nf = int(batch.traj.failed.sum())
        if nf and nf == batch.num_trajectories and self.fail_fast:
            reason = _common_reason(batch.traj.error)
            if reason is not None:  # nothing to learn from; say why instead of returning an empty batch
                raise CollectionFailed(f"all {nf} trajectories failed for the same reason: {reason}", batch)
        if nf:
            warnings.warn(f"{batch.failure_summary(limit=1)}; see batch.traj.error", stacklevel=2)
        return batch

    def _collect_wave(self, policy: Policy, tasks: list[Any], seeds: list[int], g0: int,
                      cols: Columns, bar: RolloutProgress, branch: BranchConfig | None = None) -> None:
        n = self.group_size
        S = len(tasks) * n
        T = cols.traj
        base = len(T["traj_id"])
        for s in range(S):
            g = s // n
            new_traj(cols, g0 + g, s % n, seeds[g], "" if tasks[g] is None else str(tasks[g]))
        roll = Roll(cols, list(range(base, base + S)), [self.max_steps] * S, snapshots=branch is not None)

        # reset every copy of every group
        self._start(roll, "reset", [(seeds[s // n], {} if tasks[s // n] is None else {"task": tasks[s // n]}, s % n)
                                    for s in range(S)])
        cur = roll.cur
        for s in range(S):
            if cur[s] is not None:
                T["task_id"][base + s] = str(cur[s][4]["task_id"])
        for g in range(len(tasks)):
            keys = {r[4]["state_key"] for r in cur[g * n:g * n + n] if r is not None}
            if len(keys) > 1:
                shown = ", ".join(repr(k)[:60] for k in list(keys)[:3])
                raise GroupMismatchError(
                    f"task {tasks[g]!r} (reset seed {seeds[g]}): the {n} copies started from {len(keys)} different "
                    f"initial states ({shown}); reset(seed=..., options={{'task': ...}}) must be deterministic"
                )
        bar.update(S - sum(roll.alive), 0)
        self._roll(policy, roll, bar)
        if branch is not None:
            grow_branches(self, policy, branch, cols, list(range(g0, g0 + len(tasks))), bar)

    def play_from_snapshots(self, policy: Policy, roll: Roll, args: list[tuple], bar: RolloutProgress) -> None:
        """Restore slot ``i`` of ``roll`` from ``args[i]`` = ``(snapshot bytes, group seed, copy index)`` and
        let ``policy`` play every restored slot to its end (or its cap), recording into ``roll.cols``.

        The collector's public seam for :mod:`~agentgym_credit.wrappers.branching` (which grows a group
        into a tree through it and imports nothing from this module); a slot whose restore fails is
        marked failed, as a failed reset is."""
        self._start(roll, "restore", args)
        self._roll(policy, roll, bar)

    def _start(self, roll: Roll, kind: str, args: list[tuple], slots: list[int] | None = None) -> None:
        """Send ``kind`` (``"reset"``/``"restore"``) with ``args[i]`` for slot ``slots[i]`` of ``roll``
        (default: every slot; slot ``s`` lives on worker ``s % num_workers``); start each slot on its
        result, re-send a reset whose worker was lost (up to ``max_retries``), or fail it."""
        W = self.num_workers
        pending = list(range(len(args))) if slots is None else list(slots)
        for s, a in zip(pending, args):
            roll.start_args[s] = (kind, a)
        opts = ({"snapshot": True},) if roll.snapshots else ()
        while pending:
            on = [[s for s in pending if s % W == w] for w in range(W)]
            results = self._run([(kind, on[w], [roll.start_args[s][1] for s in on[w]], *opts) if on[w] else None
                                 for w in range(W)])
            pending = []
            for w in range(W):
                for s, r in zip(on[w], results[w]):
                    if r.__class__ is not EnvFailure:
                        roll.start(s, r)
                    elif r.lost and roll.rerun(s, self.max_retries):
                        pending.append(s)
                    else:
                        roll.fail(s, f"{kind} failed: {r.error}")

    def _roll(self, policy: Policy, roll: Roll, bar: RolloutProgress) -> None:
        """Step every live slot of ``roll`` together, one policy call per step, until all have ended."""
        W = self.num_workers
        T = roll.cols.traj
        cur, rows_of, traj_of, alive, cap = roll.cur, roll.rows_of, roll.traj_of, roll.alive, roll.cap
        snaps_of = roll.snaps_of
        opts = ({"snapshot": True},) if roll.snapshots else ()
        active = [s for s in range(len(cur)) if alive[s]]
        # info["rollout"] of slot s without "t": copied and completed each step (a fresh dict per step)
        ids = [{"group_id": T["group_id"][j], "traj_id": j, "copy": T["copy"][j]} for j in traj_of]
        for d, j, t0 in zip(ids, traj_of, roll.t0):
            if T["parent"][j] >= 0:  # a branch: where it started
                d["parent"], d["branch_t"], d["start_t"] = T["parent"][j], T["branch_t"][j], t0
        shift = roll.shift
        # per slot, precomputed so the hot loop adds nothing for re-runs: the env step of loop step t is
        # t + toff[s], and the slot reaches its step cap at loop step end[s] - 1 (both move on a re-run)
        toff = [t0 - h for t0, h in zip(roll.t0, shift)]
        end = [c + h for c, h in zip(cap, shift)]
        t = 0
        while active:
            last = [cur[s] for s in active]
            obs = list(map(_OBS, last))
            infos = list(map(_INFO, last))
            for s, info in zip(active, infos):
                info["rollout"] = rollout = ids[s].copy()
                rollout["t"] = t + toff[s]
            actions, extras, errors = _parse_policy_output(policy(obs, infos), len(active))
            finished = 0
            if W == 1 and errors is None:  # the common case: no per-item work
                idx: list[Any] = [range(len(active))]
                slots: list[list[int]] = [active]
                acts: list[list[Any]] = [actions]
            else:
                idx, slots, acts = [[] for _ in range(W)], [[] for _ in range(W)], [[] for _ in range(W)]
                for i, s in enumerate(active):
                    if errors is not None and errors[i] is not None:
                        roll.fail(s, errors[i])
                        finished += 1
                        continue
                    idx[s % W].append(i)
                    slots[s % W].append(s)
                    acts[s % W].append(actions[i])
            results = self._run([("step", slots[w], acts[w], *opts) if slots[w] else None for w in range(W)])
            nerr = 0
            lost: list[tuple[int, str]] = []
            for w in range(W):
                for s, a, r in zip(slots[w], acts[w], results[w]):
                    if r.__class__ is EnvFailure:
                        nerr += 1
                        if r.lost:  # the worker died or hung: maybe re-run below
                            lost.append((s, f"step {t - shift[s]} failed: {r.error}"))
                            continue
                        roll.fail(s, f"step {t - shift[s]} failed: {r.error}")
                        finished += 1
                        continue
                    p = cur[s]
                    prev_info, info = p[4], r[4]
                    try:  # subscripts are cheaper than .get; an env without these keys takes the slow way
                        si, valid, adm = prev_info["state_index"], info["action_valid"], prev_info["admissible_actions"]
                    except KeyError:
                        si, valid = prev_info.get("state_index", -1), info.get("action_valid", True)
                        adm = prev_info.get("admissible_actions")
                    rows_of[s].append((p[0], a, p[5], p[6], prev_info["history_keys"], si, r[1], valid, adm))
                    cur[s] = r
                    if snaps_of is not None:
                        snaps_of[s].append(r[7])
                    if r[2] or r[3] or t + 1 >= end[s]:
                        j = traj_of[s]
                        T["won"][j] = bool(info.get("won", False))
                        T["dead_end"][j] = info.get("dead_end") is True  # ALFWorld: no plan reaches the goal
                        T["terminated"][j] = r[2]
                        T["truncated"][j] = not r[2]
                        T["final_state_key"][j], T["final_obs_key"][j] = r[5], r[6]  # the state reached
                        alive[s] = False
                        cur[s] = None
                        finished += 1
            if extras is not None:  # kept by (trajectory, t); steps that failed have no row to join
                for w in range(W):
                    for s, i in zip(slots[w], idx[w]):
                        if extras[i] is not None:
                            roll.cols.extras[traj_of[s], t - shift[s]] = extras[i]
            if lost:
                finished += self._rerun_lost(roll, lost, t + 1)
                for s, _ in lost:
                    toff[s], end[s] = roll.t0[s] - shift[s], cap[s] + shift[s]
            bar.update(finished, sum(map(len, slots)) - nerr)
            active = [s for s in active if alive[s]]
            t += 1

    def _rerun_lost(self, roll: Roll, lost: list[tuple[int, str]], next_t: int) -> int:
        """Re-run the trajectories of slots whose worker was lost from their start — a root from its reset,
        a branch from its snapshot (on a worker with the same snapshot key) — (their rows are
        forgotten; from loop step ``next_t`` they count their own steps from 0) or fail them; returns
        how many ended (failed) here."""
        again = []
        for s, error in lost:
            if roll.rerun(s, self.max_retries):
                again.append(s)
            else:
                roll.fail(s, error)
        for kind in ("reset", "restore"):  # a root from its reset seed, a branch from its snapshot
            slots = [s for s in again if roll.start_args[s][0] == kind]
            if slots:
                self._start(roll, kind, [roll.start_args[s][1] for s in slots], slots=slots)
        for s in again:
            roll.shift[s] = next_t
        return len(lost) - sum(roll.alive[s] for s in again)

    def _build(self, cols: Columns) -> RolloutBatch:
        T = cols.traj
        ntraj = len(T["traj_id"])
        K1 = self.history_depth + 1
        meta = {
            "env": str(self.env_name), "group_size": self.group_size, "seed": self.seed,
            "max_steps": self.max_steps, "include_actions": self.include_actions, "backend": self.backend_name,
        }
        if cols.branch is not None:
            meta["branch"] = cols.branch
        lengths = np.fromiter(map(len, cols.rows), dtype=np.int64, count=ntraj)
        n = int(lengths.sum())
        traj = np.repeat(np.arange(ntraj, dtype=np.int64), lengths)
        starts = np.cumsum(lengths) - lengths
        t = np.arange(n, dtype=np.int64) - np.repeat(starts, lengths)
        ended = (np.asarray(T["terminated"], dtype=bool) | np.asarray(T["truncated"], dtype=bool)) & (lengths > 0)
        done = np.zeros(n, dtype=bool)
        done[(starts + lengths - 1)[ended]] = True
        if n == 0:
            obs, act, skey, okey, hkeys, sindex, reward, valid, adm = [], [], [], [], [], [], [], [], []
        else:
            obs, act, skey, okey, hkeys, sindex, reward, valid, adm = zip(*chain.from_iterable(cols.rows))
        reward_a = np.fromiter(reward, dtype=np.float64, count=n)  # the workers' float(reward)
        # a step that terminated ended its trajectory: it is the last row of one with traj.terminated
        term_a = done & np.asarray(T["terminated"], dtype=bool)[traj]
        extras: list[dict[str, Any]] = list(map(dict.copy, repeat({}, n)))  # n distinct empty dicts
        for (j, tt), ex in cols.extras.items():
            if tt < lengths[j]:
                extras[int(starts[j]) + tt] = ex
        task_of = T["task_id"]
        return RolloutBatch(
            group_id=np.asarray(T["group_id"], dtype=np.int64)[traj], traj_id=traj, t=t, reward=reward_a,
            done=done, terminated=term_a, truncated=done & ~term_a,
            action_valid=np.array(valid, dtype=np.bool_),
            state_key=np.fromiter(skey, dtype=np.uint64, count=n), obs_key=np.fromiter(okey, dtype=np.uint64, count=n),
            history_keys=history_matrix(hkeys, n, K1),
            state_index=np.array(sindex, dtype=np.int64),
            task_id=list(chain.from_iterable(repeat(task_of[j], m) for j, m in enumerate(lengths.tolist()))),
            observation=obs, action=act, extras=extras, admissible_actions=adm,  # RolloutBatch makes the lists
            traj=TrajectoryTable(**T, ret=np.bincount(traj, weights=reward_a, minlength=ntraj), length=lengths,
                                 prefix_return=tree_columns(T["parent"], T["branch_t"], reward_a, lengths)),
            meta=meta,
        )


class CollectionFailed(RuntimeError):
    """Every trajectory of a ``collect`` failed for the same reason; ``batch`` is what was collected."""

    def __init__(self, message: str, batch: RolloutBatch):
        super().__init__(message)
        self.batch = batch


_STEP_PREFIX = re.compile(r"^(?:step \d+|reset|\w+) failed: ")
_NUMBER = re.compile(r"\d+")


def _common_reason(errors: Sequence[str]) -> str | None:
    """The one reason shared by every error text, or ``None``: ``step 3 failed: X`` and ``step 0 failed: X``
    share X, and texts that differ only in their numbers (``as action 0`` / ``as action 1``) are one reason."""
    reasons = [_STEP_PREFIX.sub("", str(e), count=1) for e in errors]
    shapes = {_NUMBER.sub("#", r) for r in reasons}
    return reasons[0] if len(shapes) == 1 else None


__all__ = ["GroupedRolloutCollector", "CollectionFailed", "PolicyOutput", "Policy", "group_seed"]
