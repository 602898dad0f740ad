"""Per-step advantages to per-token advantages.

- :func:`broadcast_to_tokens`: numpy, ``adv[:, None] * response_mask`` with shape checks;
- :func:`broadcast_to_tokens_torch`: the same for torch tensors (torch imported only when called).

A step's scalar advantage tiles over its response tokens; prompt and padding tokens (mask 0) get 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agentgym_credit.errors import DependencyNotInstalled


def _check_shapes(n_adv: tuple[int, ...], n_mask: tuple[int, ...]) -> None:
    if len(n_adv) != 1:
        raise ValueError(f"advantages must be 1-D (one per step), got shape {n_adv}")
    if len(n_mask) != 2 or n_mask[0] != n_adv[0]:
        raise ValueError(f"response_mask must have shape [n_steps={n_adv[0]}, n_tokens], got {n_mask}")


def broadcast_to_tokens(adv: np.ndarray, response_mask: np.ndarray, dtype=np.float32) -> np.ndarray:
    """``[n]`` step advantages and ``[n, L]`` 0/1 mask -> ``[n, L]`` token advantages.

    >>> broadcast_to_tokens(np.array([1.0, -2.0]), np.array([[1, 1, 0], [0, 1, 1]])).tolist()
    [[1.0, 1.0, 0.0], [0.0, -2.0, -2.0]]
    """
    adv = np.asarray(adv)
    mask = np.asarray(response_mask)
    _check_shapes(adv.shape, mask.shape)
    return np.where(mask.astype(bool), adv[:, None], 0).astype(dtype, copy=False)


def broadcast_to_tokens_torch(adv: Any, response_mask: Any) -> Any:
    """torch version: tensors (or arrays) in, a tensor in ``adv``'s float dtype on the mask's device."""
    try:
        import torch
    except ImportError:
        raise DependencyNotInstalled("torch", "trainer") from None
    mask = torch.as_tensor(response_mask)
    a = torch.as_tensor(adv, device=mask.device)
    if not torch.is_floating_point(a):
        a = a.float()
    _check_shapes(tuple(a.shape), tuple(mask.shape))
    return torch.where(mask.to(dtype=torch.bool, device=a.device), a[:, None], torch.zeros((), dtype=a.dtype, device=a.device))


__all__ = ["broadcast_to_tokens", "broadcast_to_tokens_torch"]
