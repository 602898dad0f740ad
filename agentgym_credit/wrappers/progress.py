"""``RolloutProgress``: the collector's progress bar — trajectories done, steps, steps per second.

Uses ``tqdm`` when it is installed (``pip install -e '.[progress]'``) and does nothing
otherwise or when disabled; postfix updates are throttled so the bar costs nothing per step.
"""

from __future__ import annotations

import time
from typing import Any


class RolloutProgress:
    """A progress bar over trajectories with ``steps`` and ``steps/s`` in its postfix."""

    def __init__(self, total: int, enabled: bool = True, desc: str = "rollouts", min_interval: float = 0.25):
        self.steps = 0
        self._bar: Any = None
        self._t0 = time.perf_counter()
        self._last = 0.0
        self._min_interval = min_interval
        if enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                return
            self._bar = tqdm(total=total, desc=desc, unit="traj", leave=False, dynamic_ncols=True)

    def update(self, finished: int, steps: int) -> None:
        """Add ``finished`` trajectories and ``steps`` steps."""
        self.steps += steps
        if self._bar is None:
            return
        if finished:
            self._bar.update(finished)
        now = time.perf_counter()
        if now - self._last >= self._min_interval:
            self._last = now
            self._postfix(now, refresh=False)

    def _postfix(self, now: float, refresh: bool) -> None:
        rate = self.steps / max(now - self._t0, 1e-9)
        self._bar.set_postfix(steps=self.steps, sps=f"{rate:.0f}", refresh=refresh)

    def close(self) -> None:
        """Show the final figures (the throttled postfix may be stale), then close the bar."""
        if self._bar is not None:
            self._postfix(time.perf_counter(), refresh=True)
            self._bar.close()
            self._bar = None


__all__ = ["RolloutProgress"]
