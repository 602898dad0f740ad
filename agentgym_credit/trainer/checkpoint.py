"""What a training run writes to disk: logs, checkpoints and a plain Hugging Face export.

Everything is written atomically (a temporary file in the same folder, then ``os.replace``), so a
run killed mid-write leaves the previous file intact, and read back as data (``torch.load`` with
``weights_only=True``: tensors and plain containers only, never code).

- :func:`atomic_write_text`, :func:`atomic_torch_save`: the two writers;
- :func:`write_logs`: ``log.jsonl`` and ``log.csv`` rewritten from the in-memory log (one line per
  iteration, so a resumed run never repeats iterations that its checkpoint did not hold);
- :func:`save_checkpoint` / :func:`load_checkpoint`: trainable weights, optimizer state, KL reference
  (when there is one), iteration, log, config, tokenizer; ``state.json`` is written last and marks a
  complete checkpoint;
- :func:`export_pretrained`: ``save_pretrained`` of the model (LoRA merged into the base, or the
  PEFT adapter alone) and the tokenizer, loadable with ``AutoModelForCausalLM.from_pretrained``
  (the adapter folder with ``peft``'s ``PeftModel.from_pretrained``).
"""

from __future__ import annotations

import copy
import csv
import io
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None  # type: ignore[assignment]


def _tmp(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp{os.getpid()}")


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder and ``os.replace``."""
    path = Path(path)
    tmp = _tmp(path)
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path


def atomic_torch_save(obj: Any, path: str | os.PathLike) -> Path:
    """``torch.save`` to ``path`` atomically."""
    path = Path(path)
    tmp = _tmp(path)
    torch.save(obj, tmp)
    os.replace(tmp, path)
    return path


def json_num(v: Any) -> Any:
    """``None`` for NaN/inf floats (JSON has no such numbers), the value otherwise."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def write_logs(out_dir: str | os.PathLike, log: Sequence[Mapping[str, float]], columns: Sequence[str]) -> None:
    """``log.jsonl`` (every key) and ``log.csv`` (``columns`` first, then any others) from ``log``."""
    out_dir = Path(out_dir)
    atomic_write_text(out_dir / "log.jsonl", "".join(json.dumps({k: json_num(v) for k, v in r.items()}) + "\n"
                                                     for r in log))
    cols = list(columns) + sorted({k for r in log for k in r} - set(columns))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, restval="")
    w.writeheader()
    for r in log:
        w.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in r.items()})
    atomic_write_text(out_dir / "log.csv", buf.getvalue())


def save_checkpoint(path: str | os.PathLike, model: Any, optimizer: Any, cfg: Any, tokenizer: Any,
                    iteration: int, log: Sequence[Mapping[str, float]], ref_model: Any = None) -> Path:
    """Write a checkpoint folder (see module docstring); returns it."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    trainable = {n: p.detach().cpu() for n, p in model.named_parameters() if p.requires_grad}
    atomic_torch_save(trainable, path / "trainable.pt")
    atomic_torch_save(optimizer.state_dict(), path / "optimizer.pt")
    if ref_model is not None:
        atomic_torch_save({n: p.detach().cpu() for n, p in ref_model.named_parameters()}, path / "reference.pt")
    cfg.save(path / "config.json")
    tokenizer.save_pretrained(str(path / "tokenizer"))
    # state.json last: its presence marks a complete checkpoint
    atomic_write_text(path / "state.json", json.dumps({"iteration": int(iteration),
                                                       "log": [{k: json_num(v) for k, v in r.items()} for r in log]}))
    return path


def _load_tensors(path: Path, device: Any) -> dict[str, Any]:
    return torch.load(path, map_location=device, weights_only=True)


def copy_weights(target: Any, saved: Mapping[str, Any], where: str) -> None:
    """Copy ``saved`` (name -> tensor) into ``target``'s parameters of the same names."""
    named = dict(target.named_parameters())
    missing = sorted(set(saved) - set(named))
    if missing:
        raise ValueError(f"{where} holds parameters this model lacks: {missing[:5]}")
    with torch.no_grad():
        for n, v in saved.items():
            named[n].copy_(v)


def load_checkpoint(path: str | os.PathLike, model: Any, optimizer: Any, device: Any,
                    ref_model: Any = None) -> tuple[int, list[dict[str, float]], dict[str, Any] | None]:
    """Restore weights and optimizer state in place; returns ``(iteration, log, reference weights or None)``."""
    path = Path(path)
    if not (path / "state.json").exists():
        raise FileNotFoundError(f"{path} is not a complete checkpoint (no state.json)")
    copy_weights(model, _load_tensors(path / "trainable.pt", device), f"checkpoint {path}")
    optimizer.load_state_dict(_load_tensors(path / "optimizer.pt", device))
    ref = _load_tensors(path / "reference.pt", device) if (path / "reference.pt").exists() else None
    state = json.loads((path / "state.json").read_text())
    log = [{k: (float("nan") if v is None else v) for k, v in r.items()} for r in state.get("log", [])]
    return int(state["iteration"]), log, ref


def export_pretrained(model: Any, tokenizer: Any, path: str | os.PathLike, merge: bool = True,
                      dtype: Any = None) -> Path:
    """A plain Hugging Face folder at ``path``: ``save_pretrained`` of the model and the tokenizer.

    A LoRA model is merged into its base (``merge=True``, loadable with
    ``AutoModelForCausalLM.from_pretrained``) or saved as the PEFT adapter alone (``merge=False``). An
    adapter records its base in ``adapter_config.json``; when the base has no path of its own (a model
    built from a config), the base weights are saved beside it in ``base/`` and recorded by absolute path,
    so ``from_pretrained`` of the adapter folder loads. ``dtype`` casts the exported weights (e.g.
    ``torch.bfloat16``); the training model is not changed.
    """
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    out = model
    is_peft = hasattr(model, "merge_and_unload")
    if is_peft and merge:
        out = copy.deepcopy(model).merge_and_unload()
    elif dtype is not None:
        out = copy.deepcopy(model)
    if dtype is not None:
        out = out.to(dtype)
    out.save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    if is_peft and not merge:
        _record_adapter_base(out, path, dtype)
    return path


def _record_adapter_base(model: Any, path: Path, dtype: Any) -> None:
    """Write the adapter's base model beside it when ``adapter_config.json`` names none that exists."""
    cfg_file = path / "adapter_config.json"
    cfg = json.loads(cfg_file.read_text())
    base = cfg.get("base_model_name_or_path")
    hub_id = bool(base) and not Path(base).is_absolute() and base.count("/") == 1
    if base and (Path(base).exists() or hub_id):
        return  # a local folder or a hub id ("org/name") the user loaded the base from
    base_dir = path / "base"
    plain = copy.deepcopy(model).unload()  # the base weights, adapters removed (not merged)
    if dtype is not None:
        plain = plain.to(dtype)
    plain.save_pretrained(str(base_dir))
    cfg["base_model_name_or_path"] = str(base_dir.resolve())
    atomic_write_text(cfg_file, json.dumps(cfg, indent=2))


__all__ = ["atomic_write_text", "atomic_torch_save", "json_num", "write_logs", "save_checkpoint", "load_checkpoint",
           "copy_weights", "export_pretrained"]
