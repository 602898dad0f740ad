"""``RolloutBatch``: what :class:`GroupedRolloutCollector` returns — columnar, one row per step.

What lives here:

- :class:`TrajectoryTable`: per-trajectory columns (return, success, length, failure and its error).
- :class:`RolloutBatch`: per-step columns (the :class:`~agentgym_credit.credit.steps.StepArrays`
  fields plus task id, observation text, action text and the policy's extras) and a
  :class:`TrajectoryTable`; ``.steps`` feeds ``credit.advantages`` directly, ``.trajectories()``
  iterates readable trajectories, ``.save``/``.load`` round-trip through Parquet (``save`` is
  atomic; ``load`` checks the rows against the trajectory table; text with lone surrogates
  round-trips exactly), ``concat`` joins batches, ``.group_stats()`` summarizes groups, ``==``
  compares content.
- :class:`Trajectory`: one readable trajectory.

A step row ``t`` holds the observation the policy saw, the action it chose, the keys of the state
in which it acted (``state_key``, ``obs_key``, ``history_keys`` at ``t``) and the reward and
``done`` that followed. ``done`` is ``True`` on the last row of a trajectory that ended
(terminated by the env, or truncated by the env or the collector's step limit).

**Failed trajectories** (the env raised, the worker died, the policy returned a non-string) keep
their rows up to the failure (``done`` stays ``False``), are marked ``failed`` with the error,
and flag their group. ``.steps`` leaves failed trajectories out; ``to_steps(failed="group")``
leaves out their whole groups; ``to_steps(failed="keep")`` keeps their rows as they are (they read as
cut-short trajectories — tell them apart with ``batch.traj.failed``). ``StepArrays.valid`` is the
env's ``action_valid`` (what the estimators' invalid-action penalty applies to).

**Branches** (``collect(..., branch=...)``, :mod:`~agentgym_credit.wrappers.branching`). A branch is a
trajectory of its own (its own ``traj_id``, the group's ``group_id``) that started from the state in
which row ``traj.branch_t`` of trajectory ``traj.parent`` acted; its rows are what it did from there
(``t`` counts from 0 at the branch point: the env step is the parent's step ``branch_t`` plus ``t``),
so no row is recorded twice. ``traj.prefix_return`` is the reward the shared prefix collected (root
to branch point), so ``prefix_return + ret`` is the branch's whole root-to-leaf return. Roots have
``parent = -1``, ``branch_t = 0``, ``prefix_return = 0``. ``to_steps`` of such a batch gives
:class:`~agentgym_credit.credit.tree.TreeSteps`. ``success_rate`` counts every leaf (root or branch);
``traj.ret`` and ``mean_return`` are each trajectory's own rewards (add ``prefix_return`` for a leaf's).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from agentgym_credit.credit.steps import StepArrays
from agentgym_credit.errors import DependencyNotInstalled
from agentgym_credit.keys import stable_hash

FORMAT = "agentgym_credit.rollout_batch/1"


@dataclass
class TrajectoryTable:
    """One entry per trajectory (indexed by ``traj_id`` = position)."""

    traj_id: np.ndarray  # int64
    group_id: np.ndarray  # int64
    copy: np.ndarray  # int64, index of the trajectory in its group
    seed: np.ndarray  # int64, reset seed of the group
    task_id: list[str]
    ret: np.ndarray  # float64, undiscounted return
    won: np.ndarray  # bool
    length: np.ndarray  # int64, recorded steps
    terminated: np.ndarray  # bool
    truncated: np.ndarray  # bool
    failed: np.ndarray  # bool
    error: list[str]  # "" when not failed
    parent: np.ndarray | None = None  # int64, the trajectory a branch restored its start from; -1 = a root
    branch_t: np.ndarray | None = None  # int64, the parent's row t whose state the branch started from (0 = root)
    prefix_return: np.ndarray | None = None  # float64, rewards of the root-to-branch-point prefix (0 = root)
    retries: np.ndarray | None = None  # int64, times the trajectory was re-run after its worker was lost
    final_state_key: np.ndarray | None = None  # uint64, state_key of the state the last step reached (0 = unknown)
    final_obs_key: np.ndarray | None = None  # uint64, obs_key of that state (0 = unknown)
    dead_end: np.ndarray | None = None  # bool, the last step's info["dead_end"]: no plan could reach the goal any more

    def __post_init__(self) -> None:
        n = len(self.traj_id)
        for name, fill in (("parent", -1), ("branch_t", 0), ("prefix_return", 0.0), ("retries", 0),
                           ("final_state_key", 0), ("final_obs_key", 0), ("dead_end", False)):
            if getattr(self, name) is None:
                setattr(self, name, np.full(n, fill))
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in ("task_id", "error"):
                setattr(self, f.name, [str(x) for x in v])
            else:
                dt = {"ret": np.float64, "prefix_return": np.float64, "final_state_key": np.uint64,
                      "final_obs_key": np.uint64}.get(
                    f.name, np.bool_ if f.name in _BOOL_TRAJ else np.int64)
                setattr(self, f.name, np.asarray(v, dtype=dt).reshape(-1))

    def __len__(self) -> int:
        return int(len(self.traj_id))

    @property
    def is_tree(self) -> bool:
        """Whether any trajectory is a branch (``parent >= 0``)."""
        return bool(np.any(self.parent >= 0))

    def to_dict(self) -> dict[str, list]:
        return {f.name: (getattr(self, f.name) if isinstance(getattr(self, f.name), list)
                         else getattr(self, f.name).tolist()) for f in fields(self)}


_BOOL_TRAJ = ("won", "terminated", "truncated", "failed", "dead_end")


@dataclass
class Trajectory:
    """A readable trajectory (see :meth:`RolloutBatch.trajectories`)."""

    traj_id: int
    group_id: int
    copy: int
    seed: int
    task_id: str
    observations: list[str]
    actions: list[str]
    rewards: list[float]
    extras: list[dict[str, Any]]
    ret: float
    won: bool
    failed: bool
    error: str

    def __len__(self) -> int:
        return len(self.actions)

    def __str__(self) -> str:
        head = (f"trajectory {self.traj_id} (group {self.group_id}, copy {self.copy}, task {self.task_id!r}): "
                f"return {self.ret:g}, won={self.won}" + (f", FAILED: {self.error}" if self.failed else ""))
        lines = [head]
        for t, (o, a, r) in enumerate(zip(self.observations, self.actions, self.rewards)):
            lines.append(f"  [{t}] {o.strip()[:200]!s}\n      > {a}   (r={r:g})")
        return "\n".join(lines)


_STEP_INT = ("group_id", "traj_id", "t", "state_index")
_STEP_BOOL = ("done", "terminated", "truncated", "action_valid")
_STEP_U64 = ("state_key", "obs_key")
_STEP_LIST = ("task_id", "observation", "action", "extras", "admissible_actions")


@dataclass
class RolloutBatch:
    """Grouped rollouts, columnar (see module docstring).

    Step columns (one row per step, rows sorted by ``traj_id`` then ``t``): ``group_id``,
    ``traj_id``, ``t`` (int64), ``reward`` (float64), ``done``, ``terminated``, ``truncated``,
    ``action_valid`` (bool; ``False`` = the env rejected the action as a no-op), ``state_key``,
    ``obs_key`` (uint64, :func:`~agentgym_credit.keys.stable_hash` of the info keys),
    ``history_keys`` (uint64 ``[n, K+1]``), ``state_index`` (int64, ``info["state_index"]`` of
    synthetic envs, ``-1`` when absent), ``task_id``, ``observation``, ``action`` (lists of str)
    and ``extras`` (list of dicts from the policy), ``admissible_actions`` (the env's admissible
    action strings in the state acted in — what the policy chose from — or ``None`` where the env
    leaves the action set unbounded). ``traj`` is the :class:`TrajectoryTable`.

    Rows line up with the estimators through :meth:`row_mask`: ``advantages(name, batch.steps)[i]``
    belongs to row ``np.flatnonzero(batch.row_mask())[i]`` of every step column here
    (``observation``, ``action``, ``extras``, ``admissible_actions``, ...).
    """

    group_id: np.ndarray
    traj_id: np.ndarray
    t: np.ndarray
    reward: np.ndarray
    done: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    action_valid: np.ndarray
    state_key: np.ndarray
    obs_key: np.ndarray
    history_keys: np.ndarray
    state_index: np.ndarray
    task_id: list[str]
    observation: list[str]
    action: list[str]
    extras: list[dict[str, Any]]
    traj: TrajectoryTable
    meta: dict[str, Any] = field(default_factory=dict)
    admissible_actions: list[list[str] | None] | None = None  # None: not recorded (a row of Nones)

    def __post_init__(self) -> None:
        if self.admissible_actions is None:
            self.admissible_actions = [None] * len(self.group_id)
        for name in _STEP_INT:
            setattr(self, name, np.asarray(getattr(self, name), dtype=np.int64).reshape(-1))
        for name in _STEP_BOOL:
            setattr(self, name, np.asarray(getattr(self, name), dtype=np.bool_).reshape(-1))
        for name in _STEP_U64:
            setattr(self, name, np.asarray(getattr(self, name), dtype=np.uint64).reshape(-1))
        self.reward = np.asarray(self.reward, dtype=np.float64).reshape(-1)
        hk = np.asarray(self.history_keys, dtype=np.uint64)
        self.history_keys = hk.reshape(len(self.group_id), -1) if hk.ndim != 2 else hk
        for name in _STEP_LIST:
            setattr(self, name, list(getattr(self, name)))
        n = len(self.group_id)
        for f in fields(self):
            if f.name in ("traj", "meta"):
                continue
            if len(getattr(self, f.name)) != n:
                raise ValueError(f"RolloutBatch column {f.name} has {len(getattr(self, f.name))} rows, expected {n}")

    # -- sizes ------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(len(self.group_id))

    @property
    def num_steps(self) -> int:
        return len(self)

    @property
    def num_trajectories(self) -> int:
        return len(self.traj)

    @property
    def num_groups(self) -> int:
        return int(len(np.unique(self.traj.group_id)))

    @property
    def history_depth(self) -> int:
        """K, the deepest history level recorded (``history_keys`` has K+1 columns)."""
        return int(self.history_keys.shape[1]) - 1

    @property
    def failed_groups(self) -> np.ndarray:
        """Ids of groups with at least one failed trajectory."""
        return np.unique(self.traj.group_id[self.traj.failed])

    def failure_summary(self, limit: int = 3) -> str:
        """The failed trajectories in one line: how many, their groups and their distinct errors (each with its
        count, the ``limit`` most common); ``""`` when none failed. ``traj.error`` is ``""`` on every trajectory
        that did not fail, so show this, not the first entries of ``traj.error``."""
        failed = np.flatnonzero(self.traj.failed)
        if not len(failed):
            return ""
        counts = Counter(self.traj.error[i] or "(no error text)" for i in failed)
        shown = "; ".join(f"{e} (x{c})" for e, c in counts.most_common(limit))
        rest = len(counts) - limit
        more = f"; and {rest} other error{'s' * (rest > 1)}" if rest > 0 else ""
        return (f"{len(failed)} of {self.num_trajectories} trajectories failed (groups "
                f"{self.failed_groups.tolist()[:10]}): {shown}{more}")

    @property
    def success_rate(self) -> float:
        """Fraction of non-failed trajectories with ``won``; NaN if there are none."""
        ok = ~self.traj.failed
        return float(self.traj.won[ok].mean()) if ok.any() else float("nan")

    @property
    def mean_return(self) -> float:
        ok = ~self.traj.failed
        return float(self.traj.ret[ok].mean()) if ok.any() else float("nan")

    # -- views ------------------------------------------------------------------------------------
    @property
    def steps(self) -> StepArrays:
        """:class:`StepArrays` of the non-failed trajectories (``to_steps(failed="drop")``)."""
        return self.to_steps()

    def row_mask(self, failed: str = "drop") -> np.ndarray:
        """Rows kept by :meth:`to_steps` for the given ``failed`` policy."""
        if failed not in ("drop", "group", "keep"):
            raise ValueError(f"failed must be 'drop', 'group' or 'keep', got {failed!r}")
        if failed == "keep" or len(self) == 0:
            return np.ones(len(self), dtype=bool)
        if failed == "drop":
            return ~self.traj.failed[self.traj_id]
        return ~np.isin(self.group_id, self.failed_groups)

    def to_steps(self, failed: str = "drop") -> StepArrays:
        """Step arrays for ``credit.advantages``.

        ``failed="drop"`` (default) leaves out failed trajectories, ``"group"`` leaves out every
        group that has one, ``"keep"`` keeps every row. ``valid`` is ``action_valid``; ``obs_text`` is
        the observation text (what ``anchor="similarity"`` groups on); ``terminated`` tells an episode
        that ended from one cut off, and ``final_state_key`` / ``final_obs_key`` carry, on every row of
        a trajectory, the keys of the state its last step reached (what the graph estimators
        bootstrap from on truncated trajectories); ``task_key`` is the stable hash of each row's ``task_id``
        (what ``graph(scope="task")`` pools groups by).
        A batch with branches (``traj.is_tree``) gives :class:`~agentgym_credit.credit.tree.TreeSteps`:
        the same columns plus each row's tree (``parent``, ``branch_t``, ``root``, ``prefix_return``).
        """
        m = self.row_mask(failed)
        cols = dict(group_id=self.group_id[m], traj_id=self.traj_id[m], t=self.t[m], reward=self.reward[m],
                    done=self.done[m], state_key=self.state_key[m], obs_key=self.obs_key[m],
                    history_keys=self.history_keys[m], valid=self.action_valid[m],
                    obs_text=np.array(self.observation, dtype=object)[m], terminated=self.terminated[m],
                    final_state_key=self.traj.final_state_key[self.traj_id[m]],
                    final_obs_key=self.traj.final_obs_key[self.traj_id[m]],
                    task_key=np.fromiter(map(stable_hash, self.traj.task_id), dtype=np.uint64,
                                         count=self.num_trajectories)[self.traj_id[m]])
        if not self.traj.is_tree:
            return StepArrays(**cols)
        from agentgym_credit.credit.tree import TreeSteps, tree_roots

        tt, j = self.traj, self.traj_id[m]
        return TreeSteps(**cols, parent=tt.parent[j], branch_t=tt.branch_t[j], root=tree_roots(tt.parent)[j],
                         prefix_return=tt.prefix_return[j])

    def trajectories(self) -> Iterator[Trajectory]:
        """Readable trajectories in ``traj_id`` order (failed ones included, marked)."""
        bounds = np.searchsorted(self.traj_id, np.arange(self.num_trajectories + 1))
        tt = self.traj
        for i in range(self.num_trajectories):
            a, b = int(bounds[i]), int(bounds[i + 1])
            yield Trajectory(
                traj_id=i, group_id=int(tt.group_id[i]), copy=int(tt.copy[i]), seed=int(tt.seed[i]),
                task_id=tt.task_id[i], observations=self.observation[a:b], actions=self.action[a:b],
                rewards=self.reward[a:b].tolist(), extras=self.extras[a:b], ret=float(tt.ret[i]),
                won=bool(tt.won[i]), failed=bool(tt.failed[i]), error=tt.error[i],
            )

    def group_stats(self, **kwargs: Any):
        """Per-group summary, computed by ``agentgym_credit.credit.group_stats`` on ``.steps``."""
        from agentgym_credit import credit

        fn = getattr(credit, "group_stats", None)
        if fn is None:
            raise NotImplementedError("agentgym_credit.credit.group_stats is not available in this version")
        return fn(self.steps, **kwargs)

    # -- concatenation ------------------------------------------------------------------------------
    @classmethod
    def concat(cls, batches: Sequence[RolloutBatch]) -> RolloutBatch:
        """One batch from many; group and trajectory ids are renumbered so groups stay distinct."""
        batches = list(batches)
        if not batches:
            raise ValueError("concat needs at least one RolloutBatch")
        depths = {b.history_keys.shape[1] for b in batches}
        if len(depths) != 1:
            raise ValueError(f"cannot concat batches with different history depths (K+1 in {sorted(depths)})")
        g_off = t_off = 0
        parts: list[dict[str, Any]] = []
        tparts: list[dict[str, Any]] = []
        for b in batches:
            d = {f.name: getattr(b, f.name) for f in fields(b) if f.name not in ("traj", "meta")}
            d["group_id"] = b.group_id + g_off
            d["traj_id"] = b.traj_id + t_off
            parts.append(d)
            td = {f.name: getattr(b.traj, f.name) for f in fields(b.traj)}
            td["group_id"] = b.traj.group_id + g_off
            td["traj_id"] = b.traj.traj_id + t_off
            td["parent"] = np.where(b.traj.parent >= 0, b.traj.parent + t_off, -1)
            tparts.append(td)
            g_off += int(b.traj.group_id.max()) + 1 if len(b.traj) else 0
            t_off += len(b.traj)
        cols = {k: _cat([p[k] for p in parts]) for k in parts[0]}
        tcols = {k: _cat([p[k] for p in tparts]) for k in tparts[0]}
        return cls(**cols, traj=TrajectoryTable(**tcols), meta=dict(batches[0].meta))

    # -- Parquet ----------------------------------------------------------------------------------
    def to_arrow(self):
        """The step table as a ``pyarrow.Table`` (trajectory table and metadata in its schema metadata)."""
        pa = _pyarrow()
        n, k1 = self.history_keys.shape
        cols: dict[str, Any] = {
            name: pa.array(getattr(self, name))
            for name in ("group_id", "traj_id", "t", "reward", "done", "terminated", "truncated",
                         "action_valid", "state_key", "obs_key", "state_index")
        }
        cols["history_keys"] = pa.FixedSizeListArray.from_arrays(pa.array(self.history_keys.reshape(-1)), k1)
        unpaired: dict[str, dict[str, Any]] = {}
        for name in ("task_id", "observation", "action", "admissible_actions"):
            values, originals = _utf8_safe(getattr(self, name))
            cols[name] = pa.array(values, type=pa.list_(pa.string()) if name == "admissible_actions" else pa.string())
            if originals:
                unpaired[name] = originals
        cols["failed"] = pa.array(self.traj.failed[self.traj_id] if n else np.zeros(0, dtype=bool))
        keys = sorted({k for e in self.extras for k in e})
        for k in keys:
            values = [_plain(e.get(k)) for e in self.extras]
            try:
                cols[f"extra.{k}"] = pa.array(values)
            except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
                raise TypeError(f"policy extra {k!r} cannot be stored in Parquet ({err}); "
                                "use numbers, strings or lists of them") from None
        meta = {
            "format": FORMAT,
            "history_depth": self.history_depth,
            "trajectories": self.traj.to_dict(),
            "meta": self.meta,
        }
        if unpaired:  # text with lone surrogates, kept exactly (the column holds U+FFFD in their place)
            meta["unpaired_surrogates"] = unpaired
        table = pa.table(cols)
        return table.replace_schema_metadata({b"agentgym_credit": json.dumps(meta, default=str).encode()})

    def save(self, path) -> None:
        """Write the batch to one Parquet file (steps as rows; readable by pandas, polars, DuckDB...).

        Atomic: the file is written under a temporary name in the same folder and moved over ``path``
        with ``os.replace``, so a process killed mid-write leaves the old file (or none), never a torn one.
        """
        _pyarrow()
        import pyarrow.parquet as pq

        table = self.to_arrow()
        path = os.fspath(path)
        folder, name = os.path.split(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
        os.close(fd)
        try:
            pq.write_table(table, tmp)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    @classmethod
    def load(cls, path) -> RolloutBatch:
        """Read a batch written by :meth:`save`; a file that is not one, or whose step rows disagree with
        its trajectory table, is a ``ValueError`` that says what is wrong."""
        _pyarrow()
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not os.path.exists(path):
            raise FileNotFoundError(f"no rollout batch at {path}: the file does not exist")
        try:
            table = pq.read_table(str(path))
        except (pa.ArrowException, OSError) as err:
            raise ValueError(f"{path} is not a readable Parquet file ({err})") from None
        raw = (table.schema.metadata or {}).get(b"agentgym_credit")
        if raw is None:
            raise ValueError(f"{path} was not written by RolloutBatch.save (no agentgym_credit metadata)")
        meta = json.loads(raw)
        if meta.get("format") != FORMAT:
            raise ValueError(f"{path}: unsupported format {meta.get('format')!r}, expected {FORMAT!r}")
        n = table.num_rows
        missing = [c for c in _STORED_COLUMNS if c not in table.column_names]
        if missing:
            raise ValueError(f"{path}: step table lacks columns {missing}")
        k1 = int(meta["history_depth"]) + 1
        col = {name: table.column(name).to_numpy(zero_copy_only=False) for name in _STORED_NUMERIC}
        flat = table.column("history_keys").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        if flat.size != n * k1:
            raise ValueError(f"{path}: history_keys hold {flat.size} values, expected {n} rows x {k1} levels "
                             f"(history_depth={k1 - 1})")
        hk = np.asarray(flat, dtype=np.uint64).reshape(n, k1)
        extra_names = [c for c in table.column_names if c.startswith("extra.")]
        extra_cols = {c[len("extra."):]: table.column(c).to_pylist() for c in extra_names}
        extras = [{k: v[i] for k, v in extra_cols.items() if v[i] is not None} for i in range(n)]
        text = {name: table.column(name).to_pylist() for name in ("task_id", "observation", "action")}
        text["admissible_actions"] = (table.column("admissible_actions").to_pylist()
                                      if "admissible_actions" in table.column_names else None)
        for name, rows in meta.get("unpaired_surrogates", {}).items():
            for i, original in rows.items():
                text[name][int(i)] = original
        try:
            traj = TrajectoryTable(**meta["trajectories"])
        except TypeError as err:
            raise ValueError(f"{path}: malformed trajectory table ({err})") from None
        batch = cls(**col, history_keys=hk, **text, extras=extras, traj=traj, meta=meta.get("meta", {}))
        problem = batch.consistency_problem()
        if problem:
            raise ValueError(f"{path}: {problem}")
        return batch

    def consistency_problem(self) -> str | None:
        """What makes the step rows disagree with the trajectory table, or ``None`` if they agree."""
        n_traj = len(self.traj)
        if not np.array_equal(self.traj.traj_id, np.arange(n_traj)):
            return "trajectory ids are not 0..n-1 in order"
        if len(self) and (self.traj_id.min() < 0 or self.traj_id.max() >= n_traj):
            return f"step rows name trajectories outside 0..{n_traj - 1}"
        counts = np.bincount(self.traj_id, minlength=n_traj) if len(self) else np.zeros(n_traj, np.int64)
        bad = np.flatnonzero(counts != self.traj.length)
        if bad.size:
            i = int(bad[0])
            return f"trajectory {i} has length {int(self.traj.length[i])} but {int(counts[i])} step rows"
        if len(self) and not np.array_equal(self.group_id, self.traj.group_id[self.traj_id]):
            i = int(np.flatnonzero(self.group_id != self.traj.group_id[self.traj_id])[0])
            return f"step row {i} is in group {int(self.group_id[i])} but its trajectory is in group " \
                   f"{int(self.traj.group_id[self.traj_id[i]])}"
        order = np.lexsort((self.t, self.traj_id))
        if not np.array_equal(order, np.arange(len(self))):
            return "step rows are not sorted by trajectory then t"
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        expected_t = np.arange(len(self)) - np.repeat(starts, counts)
        if not np.array_equal(self.t, expected_t):
            return "step indices t are not 0, 1, 2, ... within each trajectory"
        return None

    # -- equality ---------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        """Equal content: every step column (rewards compared with NaN == NaN), the trajectory table,
        extras and metadata. A batch is mutable, so it is not hashable."""
        if not isinstance(other, RolloutBatch):
            return NotImplemented
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if f.name == "traj":
                if not _tables_equal(a, b):
                    return False
            elif isinstance(a, np.ndarray):
                if a.shape != b.shape or not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
                    return False
            elif f.name == "extras":
                if [_plain_dict(x) for x in a] != [_plain_dict(x) for x in b]:
                    return False
            elif a != b:
                return False
        return True

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"RolloutBatch({self.num_groups} groups, {self.num_trajectories} trajectories, {len(self)} steps, "
                f"success {self.success_rate:.3f}, {int(self.traj.failed.sum())} failed)")


_STORED_NUMERIC = ("group_id", "traj_id", "t", "reward", "done", "terminated", "truncated", "action_valid",
                   "state_key", "obs_key", "state_index")
_STORED_COLUMNS = (*_STORED_NUMERIC, "history_keys", "task_id", "observation", "action")


def _utf8_safe(values: list[Any]) -> tuple[list[Any], dict[str, Any]]:
    """Texts (or lists of texts, or ``None``) Parquet can store — lone surrogates replaced by U+FFFD —
    and ``{row: original}`` for the rows changed."""
    out, originals = list(values), {}
    for i, v in enumerate(values):
        if v is None:
            continue
        try:
            (v if isinstance(v, str) else "".join(v)).encode("utf-8")
        except UnicodeEncodeError:
            out[i] = _replace_lone(v) if isinstance(v, str) else [_replace_lone(x) for x in v]
            originals[str(i)] = v
    return out, originals


def _replace_lone(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")  # lone surrogates -> U+FFFD


def _tables_equal(a: TrajectoryTable, b: TrajectoryTable) -> bool:
    return a.to_dict() == b.to_dict() if len(a) == len(b) else False


def _plain_dict(d: dict[str, Any]) -> dict[str, Any]:
    return {k: _plain(v) for k, v in d.items()}


def _cat(parts: list) -> Any:
    if isinstance(parts[0], list):
        return [x for p in parts for x in p]
    return np.concatenate(parts, axis=0)


def _plain(v: Any) -> Any:
    """Numpy/torch values to plain Python for Arrow."""
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    if hasattr(v, "tolist"):
        return v.tolist()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _pyarrow():
    try:
        import pyarrow as pa
    except ImportError:
        raise DependencyNotInstalled("pyarrow", "data") from None
    return pa


__all__ = ["RolloutBatch", "TrajectoryTable", "Trajectory", "FORMAT"]
