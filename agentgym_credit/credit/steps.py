"""``StepArrays``: the flat, columnar input of every advantage estimator.

One row per environment step. Rows may come in any order; estimators return results in input
order. ``history_keys[:, k]`` is the fingerprint of the level-k context C_k(t) = (s_{t-k}..s_t);
a level that does not exist (t < k) holds :data:`agentgym_credit.keys.MISSING` (``0``).

- :class:`StepArrays`: the validated columns;
- :class:`TrajLayout`: rows sorted by (trajectory, t) with trajectory boundaries, computed once at
  validation (fast path: no sort when rows already come in that order) and reused by every estimator
  through :attr:`StepArrays.layout`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from agentgym_credit.errors import StepArraysError
from agentgym_credit.keys import MISSING


@dataclass(frozen=True)
class StepArrays:
    """Flat arrays, one row per step (see module docstring).

    Fields: ``group_id``, ``traj_id``, ``t`` (int64), ``reward`` (float64), ``done`` (bool),
    ``state_key``, ``obs_key`` (uint64), ``history_keys`` (uint64, ``[n, K+1]``; defaults to
    ``state_key[:, None]``, with a ``state_key`` of 0 replaced by one nonzero value no other row
    holds, since 0 marks a missing level there), ``valid`` (bool; defaults to all ``True``),
    ``value`` (float64 or ``None``; needed by GAE only). Optional anchor inputs of GiGPO
    (:mod:`~agentgym_credit.credit.anchor_groups`), ``None`` unless given: ``obs_text`` (object
    array of str, the observation text of each row; ``anchor="similarity"``), ``embedding`` (float64
    ``[n, d]``, one vector per row; ``anchor="embedding"``), ``anchor_key`` (uint64, any key of the
    user's, e.g. the oracle's policy-equivalence classes; ``anchor="anchor_key"``). Optional inputs
    of the graph estimators (:mod:`~agentgym_credit.credit.graph`), ``None`` unless given:
    ``terminated`` (bool; ``True`` on a last row whose episode ENDED in the env, ``False`` on one
    that was cut off (truncated); ``None`` reads every ``done`` row as terminated), and
    ``final_state_key`` / ``final_obs_key`` (uint64; on each trajectory's last row, the key of the
    state reached AFTER that step, :data:`MISSING` (0) where unknown; other rows are ignored), and
    ``task_key`` (uint64; one key per task, equal across the groups of one task: ``graph``'s
    ``scope="task"`` pools those groups; :meth:`RolloutBatch.to_steps` fills it from ``task_id``).

    >>> import numpy as np
    >>> s = StepArrays.from_lists(group_id=[0, 0], traj_id=[0, 1], t=[0, 0], reward=[1.0, 0.0],
    ...                           done=[True, True], state_key=[7, 7], obs_key=[7, 7])
    >>> s.n, s.num_levels
    (2, 1)
    """

    group_id: np.ndarray
    traj_id: np.ndarray
    t: np.ndarray
    reward: np.ndarray
    done: np.ndarray
    state_key: np.ndarray
    obs_key: np.ndarray
    history_keys: np.ndarray | None = None
    valid: np.ndarray | None = None
    value: np.ndarray | None = None
    obs_text: np.ndarray | None = None
    embedding: np.ndarray | None = None
    anchor_key: np.ndarray | None = None
    terminated: np.ndarray | None = None
    final_state_key: np.ndarray | None = None
    final_obs_key: np.ndarray | None = None
    task_key: np.ndarray | None = None

    def __post_init__(self) -> None:
        conv = {
            "group_id": np.int64, "traj_id": np.int64, "t": np.int64, "reward": np.float64,
            "done": np.bool_, "state_key": np.uint64, "obs_key": np.uint64, "valid": np.bool_,
            "value": np.float64, "anchor_key": np.uint64, "terminated": np.bool_,
            "final_state_key": np.uint64, "final_obs_key": np.uint64, "task_key": np.uint64,
        }
        arrays: dict[str, np.ndarray | None] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None:
                arrays[f.name] = None
                continue
            if f.name in ("obs_text", "embedding"):
                arrays[f.name] = _anchor_input(f.name, v)
                continue
            try:
                a = np.asarray(v)
            except ValueError as e:  # ragged nested lists
                raise StepArraysError(f"{f.name} is ragged (rows of different lengths): {e}") from None
            if conv.get(f.name, np.uint64) is np.uint64 and a.dtype.kind == "f" and not isinstance(v, np.ndarray):
                # Python ints above and below 2**63 (stable_hash keys) make float64 in np.asarray,
                # which rounds them: read the values themselves (non-integers are refused below)
                a = np.asarray(v, dtype=object)
            if f.name == "history_keys":
                a = _as_uint64(a, f.name)
                if a.ndim != 2:
                    raise StepArraysError(f"history_keys must have shape [n, K+1], got {a.shape}")
                if a.shape[1] < 1:
                    raise StepArraysError("history_keys must have at least one level (column 0 = the "
                                          f"current state's context), got shape {a.shape}")
            else:
                if a.ndim != 1:
                    raise StepArraysError(f"{f.name} must be 1-D, got shape {a.shape}")
                a = _as_uint64(a, f.name) if conv[f.name] is np.uint64 else _cast(a, conv[f.name], f.name)
            arrays[f.name] = a
        n = len(arrays["group_id"])
        for name, a in arrays.items():
            if a is not None and len(a) != n:
                raise StepArraysError(f"{name} has {len(a)} rows, group_id has {n}")
        if arrays["history_keys"] is None:
            arrays["history_keys"] = _default_history(arrays["state_key"])
        if arrays["valid"] is None:
            arrays["valid"] = np.ones(n, dtype=bool)
        for name, a in arrays.items():
            object.__setattr__(self, name, a)
        self._validate()

    @classmethod
    def from_lists(cls, **columns) -> StepArrays:
        """Build from Python lists or arrays (same keywords as the fields)."""
        return cls(**columns)

    @property
    def n(self) -> int:
        """Number of rows (steps)."""
        return int(len(self.group_id))

    @property
    def num_levels(self) -> int:
        """K+1, the number of history levels in ``history_keys``."""
        return int(self.history_keys.shape[1])

    @property
    def layout(self) -> TrajLayout:
        """Trajectory layout (sorted order and boundaries), computed once and cached."""
        lay = self.__dict__.get("_layout")
        if lay is None:
            lay = TrajLayout.of(self.traj_id, self.t, self.group_id)
            self.__dict__["_layout"] = lay
        return lay

    def _validate(self) -> None:
        if not np.all(np.isfinite(self.reward)):
            bad = int(np.flatnonzero(~np.isfinite(self.reward))[0])
            raise StepArraysError(f"reward must be finite; row {bad} holds {self.reward[bad]}")
        if self.value is not None and not np.all(np.isfinite(self.value)):
            raise StepArraysError("value must be finite")
        if self.terminated is not None and np.any(self.terminated & ~self.done):
            bad = int(np.flatnonzero(self.terminated & ~self.done)[0])
            raise StepArraysError(f"row {bad} has terminated=True but done=False (an episode ends on a done row)")
        if self.n == 0:
            return
        if np.any(self.t < 0):
            raise StepArraysError("step index t must be >= 0")
        order = _sorted_order(self.traj_id, self.t)
        traj, t, grp = self.traj_id[order], self.t[order], self.group_id[order]
        starts = np.r_[True, traj[1:] != traj[:-1]]
        # within a trajectory, t must run 0, 1, 2, ... with no gap and no repeat
        seg = np.cumsum(starts) - 1
        first = np.flatnonzero(starts)
        expected = np.arange(len(t)) - first[seg]
        if np.any(t != expected):
            i = int(np.flatnonzero(t != expected)[0])
            raise StepArraysError(
                f"trajectory {traj[i]} has missing or repeated step indices (expected t={expected[i]}, "
                f"found t={t[i]})"
            )
        mixed = (~starts) & (grp != np.r_[grp[:1], grp[:-1]])
        if np.any(mixed):
            i = int(np.flatnonzero(mixed)[0])
            raise StepArraysError(f"trajectory {traj[i]} is spread over groups {grp[i - 1]} and {grp[i]}")
        last = np.r_[starts[1:], True]
        early = self.done[order] & ~last
        if np.any(early):
            i = int(np.flatnonzero(early)[0])
            raise StepArraysError(f"trajectory {traj[i]} has done=True at t={t[i]}, before its last step")
        lengths = np.diff(np.r_[first, len(t)])
        self.__dict__["_layout"] = TrajLayout(order=order, first=first, lengths=lengths, seg=seg,
                                              group_of_traj=grp[first])

    def select(self, mask: np.ndarray) -> StepArrays:
        """Rows where ``mask`` holds (whole trajectories must be kept whole)."""
        return StepArrays(**{f.name: (None if getattr(self, f.name) is None else getattr(self, f.name)[mask])
                             for f in fields(self)})


@dataclass(frozen=True)
class TrajLayout:
    """Rows sorted by (traj_id, t): what segmented scans and episode sums need.

    ``order``: input-row indices in sorted order; ``first``: position (in sorted order) of each
    trajectory's first row; ``lengths``: steps per trajectory; ``seg``: trajectory index
    (0..T-1) of each sorted row; ``group_of_traj``: ``group_id`` of each trajectory.
    """

    order: np.ndarray
    first: np.ndarray
    lengths: np.ndarray
    seg: np.ndarray
    group_of_traj: np.ndarray

    @property
    def num_traj(self) -> int:
        """Number of trajectories."""
        return int(len(self.first))

    @property
    def max_length(self) -> int:
        """Longest trajectory (0 for an empty batch)."""
        return int(self.lengths.max()) if len(self.lengths) else 0

    @classmethod
    def of(cls, traj_id: np.ndarray, t: np.ndarray, group_id: np.ndarray) -> TrajLayout:
        """Layout of already validated columns."""
        order = _sorted_order(traj_id, t)
        traj = traj_id[order]
        starts = np.r_[True, traj[1:] != traj[:-1]] if len(traj) else np.zeros(0, bool)
        first = np.flatnonzero(starts)
        return cls(order=order, first=first, lengths=np.diff(np.r_[first, len(traj)]),
                   seg=np.cumsum(starts) - 1, group_of_traj=group_id[order][first])


def _default_history(state_key: np.ndarray) -> np.ndarray:
    """``state_key[:, None]``, with key 0 (an ordinary state key, e.g. a 0-based index) moved to a
    nonzero value no row uses: in ``history_keys`` 0 is :data:`MISSING`, which would take those rows
    out of every level-0 group."""
    hk = state_key[:, None].copy()
    zero = hk[:, 0] == np.uint64(MISSING)
    if np.any(zero):
        free = np.uint64(0x9E3779B97F4A7C15)
        while np.any(state_key == free):
            free += np.uint64(1)
        hk[zero, 0] = free
    return hk


def _sorted_order(traj_id: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Row order sorted by (traj_id, t); no sort at all when the rows already come that way."""
    if len(traj_id) <= 1:
        return np.arange(len(traj_id))
    same = traj_id[1:] == traj_id[:-1]
    if np.all(traj_id[1:] >= traj_id[:-1]) and np.all(t[1:][same] > t[:-1][same]):
        return np.arange(len(traj_id))
    return np.lexsort((t, traj_id))


def _anchor_input(name: str, v) -> np.ndarray:
    """``obs_text`` as a 1-D object array of str, ``embedding`` as finite float64 ``[n, d]``."""
    if name == "obs_text":
        if isinstance(v, (str, bytes)):
            raise StepArraysError("obs_text must be a sequence of str (one per row), got a single string")
        a = np.empty(len(v), dtype=object)
        a[:] = list(v)
        bad = next((x for x in a if not isinstance(x, str)), None)
        if bad is not None:
            raise StepArraysError(f"obs_text must hold one str per row, found {type(bad).__name__}: {bad!r}")
        return a
    a = _cast(np.asarray(v), np.float64, name)
    if a.ndim != 2:
        raise StepArraysError(f"embedding must have shape [n, d], got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise StepArraysError("embedding must be finite")
    return a


def _cast(a: np.ndarray, dtype, name: str) -> np.ndarray:
    """``a`` as ``dtype``, refusing casts that would change values silently.

    Ids and step indices given as floats must be whole numbers (``astype`` would truncate 0.7 to 0
    and merge groups); flags given as numbers must be 0 or 1 (``astype(bool)`` reads 0.5 as True).
    """
    if dtype is np.int64 and a.dtype.kind == "f" and not np.all(np.isfinite(a) & (a == np.round(a))):
        bad = a[~(np.isfinite(a) & (a == np.round(a)))][0]
        raise StepArraysError(f"{name} must hold whole numbers (integer ids / step indices), found {bad}")
    if dtype is np.bool_ and a.dtype.kind in "iuf" and not np.all((a == 0) | (a == 1)):
        bad = a[~((a == 0) | (a == 1))][0]
        raise StepArraysError(f"{name} must hold booleans (or 0 or 1), found {bad}")
    try:
        return a.astype(dtype, copy=False)
    except (TypeError, ValueError) as e:
        raise StepArraysError(f"{name} cannot be read as {np.dtype(dtype).name}: {e}") from None


def _as_uint64(a: np.ndarray, name: str) -> np.ndarray:
    if a.dtype == np.uint64:
        return a
    if a.dtype.kind == "i":
        return a.astype(np.uint64)  # reinterpret negative signed hashes bit-for-bit
    if a.dtype.kind == "u":
        return a.astype(np.uint64)
    if a.dtype == object or a.size == 0:
        flat = a.ravel().tolist()
        bad = next((x for x in flat if not isinstance(x, (int, np.integer))), None)
        if bad is not None:
            raise StepArraysError(f"{name} must hold integer keys, found {bad!r}")
        return np.array([int(x) & 0xFFFFFFFFFFFFFFFF for x in flat], dtype=np.uint64).reshape(a.shape)
    raise StepArraysError(f"{name} must hold integer (uint64) keys, got dtype {a.dtype}")


__all__ = ["StepArrays", "TrajLayout", "MISSING"]
