"""A text policy for the real envs that learns on CPU (numpy): a stated prior plus learned text parts.

What lives here:

- :class:`TextPolicy` — a softmax over the candidate actions of a step (``info["candidate_actions"]`` or
  ``info["admissible_actions"]``, as :func:`~agentgym_credit.truth.policies.candidate_actions`) with

  ``logit(a) = prior(a) + w · φ(obs, goal, a) + r[(obs_key, a)]``

  * ``prior(a) = expert_bonus·[a is info["expert_action"]] + overlap_weight·|words(a) ∩ words(goal)| / |words(a)|``
    — **fixed, not learned, and stated**: it stands in for what a pretrained LLM agent already knows about
    the task (the expert command is the env's scripted expert: ``ALFWorld(expert=True)``, the WebShop
    expert env). The bonus sets where learning starts (measured starts, 12 tasks × 4 rollouts: ALFWorld
    generated 6% at bonus 1, 35% at bonus 2; WebShop 12% / 38%);
  * ``w · φ`` — the **learned linear part** over hashed text features of (observation, goal, action) that
    name no game: the action's words, (goal word, action word) pairs, (action verb, action word) for
    action words that the observation shows, and (action verb, how many goal words the observation's text
    right after the action's argument shares: a WebShop listing's title and price). Instance numbers become ``#``, so what is learned on one game
    carries to another (the held-out evaluation measures that);
  * ``r[(obs_key, a)]`` — the **learned residual** per (observation key, action): a table, which only helps
    where the same observation comes back (the same game).

  * ``"match"`` (opt-in, not in :data:`DEFAULT_PARTS`) — goal-match features of the page and the action,
    learned in the same weights ``w`` (:mod:`~agentgym_credit.truth.text_match`: does a listing share the most
    goal words on its page, is it within the budget, how well does a product page match, crossed with the
    action's class).
  * ``"scene"`` (opt-in) — the scene as the agent sees it, crossed with the action, in the same weights ``w``:
    whether the agent holds something (some candidate command starts with ``put``: ALFWorld lists ``put …``
    only while the agent holds an object) crossed with the action's verb and with the (goal word, action
    word) pairs, and the observation's first two words (the last event: ``you arrive``, ``you pick``,
    ``you clean``) crossed with the action's words. Text and candidate commands only, so a text-only policy
    (:mod:`~agentgym_credit.truth.text_only`) can use it.

  ``parts`` chooses the learned parts (default ``"linear"`` and ``"residual"``) so each can be shown alone.
  The policy is a function of ``(obs, info)`` only, so it is a
  :class:`~agentgym_credit.truth.policies.SnapshotPolicy`: the Monte-Carlo truth can follow it from a
  restored snapshot (a learned policy saved per seed and arm is a mixed-success behaviour policy).
- :meth:`TextPolicy.act` (the decision with what an update needs), :meth:`TextPolicy.update` (one
  REINFORCE step ``θ += lr · Σ_i c_i ∇ log π(a_i | s_i)``), :meth:`TextPolicy.save` /
  :meth:`TextPolicy.load` (a small ``.npz`` file, written atomically, read as data: ``allow_pickle=False``,
  every field validated, sizes capped before decompression; every failure a
  :class:`~agentgym_credit.errors.PolicyFileError`);
- :class:`TextActor` — the collector's batched policy (samples with its own generator, or greedy).

>>> pi = TextPolicy(expert_bonus=2.0)
>>> info = {"admissible_actions": ["go to desk 1", "take apple 1"], "expert_action": "take apple 1",
...         "goal": "put an apple in the fridge", "obs_key": "o1"}
>>> acts, p = pi.distribution("You see an apple 1.", info)
>>> bool(p[1] > 0.9)
True
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.errors import PolicyFileError
from agentgym_credit.truth.policies import _expert, candidate_actions
from agentgym_credit.truth.text_match import match_names, page_facts

FORMAT = "agentgym-credit/text-policy"
VERSION = 1
PARTS = ("linear", "residual", "match", "scene")
DEFAULT_PARTS = ("linear", "residual")
"""The learned parts a policy has unless told: ``"match"`` (goal-match features, :mod:`.text_match`) and
``"scene"`` (holding and last-event features) are opt-in."""
MAX_FILE_BYTES = 256 << 20
"""Largest policy file :meth:`TextPolicy.load` reads (and largest decompressed member)."""
MAX_BUCKETS = 1 << 24

_WORD = re.compile(r"[a-z]+|\d+")
_SEP = "\x1f"


def _words(text: str) -> list[str]:
    return ["#" if w.isdigit() else w for w in _WORD.findall(text.lower())]


def _bucket(feature: str, buckets: int) -> int:
    return zlib.crc32(feature.encode("utf-8", "surrogatepass")) % buckets


_ARG = re.compile(r"^\s*\w+\[(.*)\]\s*$")


def _context_level(obs: str, action: str, goal_words: set[str]) -> str:
    """How much the observation's text right after the action's argument shares with the goal: ``"-"``
    when the argument is not in the observation, else ``"0"``, ``"1"``, ``"2"``, ``"3+"`` shared words.
    For WebShop's ``click[<asin>]`` that text is the listing (title, price) the click opens; it names no
    product, so what it learns carries to other goals."""
    m = _ARG.match(action)
    arg = (m.group(1) if m else action).strip().lower()
    low = obs.lower()
    at = low.find(arg) if arg else -1
    if at < 0:
        return "-"
    after = low[at + len(arg):]
    seg = " ".join(after.split("[sep]")[:3])[:200]
    shared = len({w for w in _words(seg) if w != "#"} & goal_words)
    return str(min(shared, 3)) + ("+" if shared >= 3 else "")


def scene_of(obs: str, actions: Sequence[str]) -> str:
    """What the ``"scene"`` part reads: ``"hold"`` or ``"free"`` (some candidate starts with ``put``) and the
    observation's first two words, joined by a separator.

    >>> scene_of("You pick up the apple 1 from the table 1.", ["put apple 1 in/on table 1", "look"]).split("\x1f")
    ['hold', 'you pick']
    """
    hold = "hold" if any(a.lower().lstrip().startswith("put ") for a in actions) else "free"
    return hold + _SEP + " ".join(_words(obs)[:2])


@dataclass
class Decision:
    """One step's choice and what the REINFORCE update needs (kept as a step extra by the collector)."""

    action: str
    idx: int
    probs: np.ndarray        # π(·|s) over the candidates, under the acting parameters
    feats: np.ndarray        # flat feature buckets of every candidate
    counts: np.ndarray       # how many of ``feats`` belong to each candidate, in order
    rkeys: list[str]         # residual keys (obs_key, action) of the candidates


class TextPolicy:
    """Prior + learned linear part over hashed text + learned residual per (obs_key, action) (module docstring)."""

    def __init__(self, expert_bonus: float = 1.5, overlap_weight: float = 2.0, buckets: int = 1 << 16,
                 parts: Sequence[str] = DEFAULT_PARTS, name: str = "text-policy"):
        parts = tuple(dict.fromkeys(parts))
        if not parts or any(p not in PARTS for p in parts):
            raise ValueError(f"parts must be a non-empty subset of {PARTS}, got {parts}")
        if not 2 <= int(buckets) <= MAX_BUCKETS:
            raise ValueError(f"buckets must be in [2, {MAX_BUCKETS}], got {buckets}")
        for k, v in (("expert_bonus", expert_bonus), ("overlap_weight", overlap_weight)):
            if not np.isfinite(v):
                raise ValueError(f"{k} must be finite, got {v}")
        self.expert_bonus, self.overlap_weight = float(expert_bonus), float(overlap_weight)
        self.buckets, self.parts, self.name = int(buckets), parts, str(name)
        self.w = np.zeros(self.buckets, dtype=np.float64)
        self.residual: dict[str, float] = {}
        self._cache: dict[tuple[str, str, str, str], tuple[np.ndarray, float]] = {}
        self._facts_key: tuple[str, str] | None = None
        self._facts: dict[str, Any] = {}

    # -- features -------------------------------------------------------------------------------
    def features(self, obs: str, goal: str, action: str, scene: str = "") -> np.ndarray:
        """Sorted unique feature buckets of φ(obs, goal, action) (see the module docstring); ``scene`` as
        :func:`scene_of` gives it (used by the ``"scene"`` part only)."""
        return self._feat(obs, goal, action, scene)[0]

    def _feat(self, obs: str, goal: str, action: str, scene: str = "") -> tuple[np.ndarray, float]:
        key = (obs, goal, action, scene)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        aw = _words(action)
        gw = set(_words(goal))
        names = []
        if "linear" in self.parts:
            ow = set(_words(obs))
            verb = aw[0] if aw else ""
            names += [f"a|{w}" for w in aw]
            names += [f"ga|{g}|{w}" for g in gw for w in aw]
            names += [f"ao|{verb}|{w}" for w in aw[1:] if w in ow and w != "#"]
            names.append(f"ctx|{verb}|{_context_level(obs, action, gw)}")
        if "match" in self.parts:
            fk = (obs, goal)
            if self._facts_key != fk:
                self._facts_key, self._facts = fk, page_facts(obs, goal)
            names += match_names(obs, goal, action, self._facts)
        if "scene" in self.parts:
            hold, _, event = scene.partition(_SEP)
            verb = aw[0] if aw else ""
            names.append(f"h|{hold}|{verb}")
            names += [f"hga|{hold}|{g}|{w}" for g in gw for w in aw]
            names += [f"ev|{event}|{w}" for w in aw]
        idx = np.unique(np.fromiter((_bucket(n, self.buckets) for n in names), dtype=np.int64, count=len(names)))
        uw = set(aw)
        overlap = len(uw & gw) / len(uw) if uw else 0.0
        if len(self._cache) > 100_000:
            self._cache.clear()
        self._cache[key] = out = (idx, overlap)
        return out

    @staticmethod
    def residual_key(obs: str, info: Mapping[str, Any], action: str) -> str:
        """``obs_key`` (or the observation text when the env gives none) and the action."""
        ok = info.get("obs_key")
        return f"{obs if ok is None else ok}{_SEP}{action}"

    # -- acting ---------------------------------------------------------------------------------
    def act(self, obs: str, info: Mapping[str, Any]) -> tuple[list[str], Decision]:
        """The candidates and the distribution over them, with the features an update needs
        (``Decision.idx`` is unset: -1)."""
        acts = candidate_actions(info)
        goal = str(info.get("goal", ""))
        scene = scene_of(obs, acts) if "scene" in self.parts else ""
        feats, counts, prior = [], np.empty(len(acts), dtype=np.int64), np.zeros(len(acts))
        for i, a in enumerate(acts):
            f, ov = self._feat(obs, goal, a, scene)
            feats.append(f)
            counts[i] = len(f)
            prior[i] = self.overlap_weight * ov
        e = _expert(info, acts)
        if e is not None:
            prior[acts.index(e)] += self.expert_bonus
        flat = np.concatenate(feats) if feats else np.zeros(0, dtype=np.int64)
        logit = prior
        if ("linear" in self.parts or "match" in self.parts) and flat.size:
            owner = np.repeat(np.arange(len(acts)), counts)
            logit = logit + np.bincount(owner, weights=self.w[flat], minlength=len(acts))
        rkeys = [self.residual_key(obs, info, a) for a in acts]
        if "residual" in self.parts:
            logit = logit + np.array([self.residual.get(k, 0.0) for k in rkeys])
        z = np.exp(logit - logit.max())
        p = z / z.sum()
        return acts, Decision("", -1, p, flat, counts, rkeys)

    def distribution(self, obs: str, info: Mapping[str, Any]) -> tuple[list[str], np.ndarray]:
        """:class:`~agentgym_credit.truth.policies.SnapshotPolicy`: the candidates and π over them."""
        acts, d = self.act(obs, info)
        return acts, d.probs

    # -- learning -------------------------------------------------------------------------------
    def update(self, decisions: Sequence[Decision], weights: np.ndarray, lr: float) -> dict[str, float]:
        """One REINFORCE step: ``θ += lr · Σ_i weights_i ∇_θ log π(a_i | s_i)`` with π the acting
        distribution stored in each decision (on-policy: the step right after collecting).

        For a softmax, ``∇ log π(a_k) = φ(a_k) − Σ_a π(a) φ(a)`` for the linear part and
        ``e_(key, a_k) − π(·)`` for the residual. Returns the gradient norms of the parts.
        """
        w = np.asarray(weights, dtype=np.float64)
        if len(w) != len(decisions):
            raise ValueError(f"{len(w)} weights for {len(decisions)} decisions")
        if not np.all(np.isfinite(w)):
            raise ValueError("weights must be finite")
        if not np.isfinite(lr) or lr < 0:
            raise ValueError(f"lr must be a finite number >= 0, got {lr}")
        stats = {"grad_linear": 0.0, "grad_residual": 0.0}
        live = [(d, c) for d, c in zip(decisions, w) if c != 0.0 and d.idx >= 0]
        if not live:
            return stats
        if "linear" in self.parts or "match" in self.parts:
            idx_parts, val_parts = [], []
            for d, c in live:
                onehot = -d.probs.copy()
                onehot[d.idx] += 1.0
                idx_parts.append(d.feats)
                val_parts.append(c * np.repeat(onehot, d.counts))
            g = np.bincount(np.concatenate(idx_parts), weights=np.concatenate(val_parts), minlength=self.buckets)
            self.w += lr * g
            stats["grad_linear"] = float(np.sqrt(g @ g))
        if "residual" in self.parts:
            g_r: dict[str, float] = {}
            for d, c in live:
                for j, k in enumerate(d.rkeys):
                    g_r[k] = g_r.get(k, 0.0) + c * ((1.0 if j == d.idx else 0.0) - float(d.probs[j]))
            for k, v in g_r.items():
                self.residual[k] = self.residual.get(k, 0.0) + lr * v
            stats["grad_residual"] = float(np.sqrt(sum(v * v for v in g_r.values())))
        return stats

    # -- files ----------------------------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        return {"expert_bonus": self.expert_bonus, "overlap_weight": self.overlap_weight, "buckets": self.buckets,
                "parts": list(self.parts), "name": self.name}

    def save(self, path: str | os.PathLike, meta: Mapping[str, Any] | None = None) -> Path:
        """Write the policy to ``path`` (``.npz``; a temporary file in the same folder, then ``os.replace``).
        ``meta`` (JSON-serialisable: env, arm, seed, ...) is stored with it."""
        path = Path(path)
        nz = np.flatnonzero(self.w)
        keys = sorted(self.residual)
        arrays = {
            "format": np.array(FORMAT), "version": np.array(VERSION, dtype=np.int64),
            "config": np.array(json.dumps(self.config(), sort_keys=True)),
            "meta": np.array(json.dumps(dict(meta or {}), sort_keys=True)),
            "w_idx": nz.astype(np.int64), "w_val": self.w[nz],
            "res_keys": np.array(keys, dtype=np.str_) if keys else np.zeros(0, dtype="<U1"),
            "res_vals": np.array([self.residual[k] for k in keys], dtype=np.float64),
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez_compressed(fh, **arrays)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> tuple[TextPolicy, dict[str, Any]]:
        """Read a file written by :meth:`save`: ``(policy, meta)``. Anything else is a :class:`PolicyFileError`."""
        path = Path(path)
        try:
            size = path.stat().st_size
        except OSError as e:
            raise PolicyFileError(f"cannot read policy file {str(path)!r}: {e}") from e
        if size > MAX_FILE_BYTES:
            raise PolicyFileError(f"{str(path)!r} is {size} bytes, more than a policy file may be ({MAX_FILE_BYTES})")
        want = {"format", "version", "config", "meta", "w_idx", "w_val", "res_keys", "res_vals"}
        try:
            with zipfile.ZipFile(path) as zf:
                members = {i.filename: i.file_size for i in zf.infolist()}
            if set(members) != {f"{k}.npy" for k in want}:
                raise PolicyFileError(f"{str(path)!r} is not a text-policy file (members {sorted(members)})")
            if max(members.values()) > MAX_FILE_BYTES:
                raise PolicyFileError(f"{str(path)!r} holds a member larger than {MAX_FILE_BYTES} bytes")
            with np.load(path, allow_pickle=False) as z:
                a = {k: z[k] for k in want}
        except PolicyFileError:
            raise
        except Exception as e:  # zip, npy header, object arrays refused by allow_pickle=False
            raise PolicyFileError(f"{str(path)!r} is not a readable text-policy file: {e}") from e
        return cls._from_arrays(a, str(path))

    @classmethod
    def _from_arrays(cls, a: Mapping[str, np.ndarray], where: str) -> tuple[TextPolicy, dict[str, Any]]:
        def bad(msg: str) -> PolicyFileError:
            return PolicyFileError(f"{where!r}: {msg}")

        if a["format"].shape != () or str(a["format"]) != FORMAT:
            raise bad(f"format is not {FORMAT!r}")
        if a["version"].shape != () or a["version"].dtype.kind != "i" or int(a["version"]) != VERSION:
            raise bad(f"version is not {VERSION}")
        try:
            cfg = json.loads(str(a["config"]))
            meta = json.loads(str(a["meta"]))
        except (ValueError, TypeError) as e:
            raise bad(f"config or meta is not JSON: {e}") from e
        if not isinstance(cfg, dict) or set(cfg) != {"expert_bonus", "overlap_weight", "buckets", "parts", "name"}:
            raise bad("config fields are not those of a text policy")
        if not isinstance(meta, dict):
            raise bad("meta is not a JSON object")
        num = (int, float)
        if (not isinstance(cfg["expert_bonus"], num) or not isinstance(cfg["overlap_weight"], num)
                or isinstance(cfg["buckets"], bool) or not isinstance(cfg["buckets"], int)
                or not isinstance(cfg["parts"], list) or not all(isinstance(p, str) for p in cfg["parts"])
                or not isinstance(cfg["name"], str)):
            raise bad("config field of the wrong type")
        try:
            pol = cls(cfg["expert_bonus"], cfg["overlap_weight"], cfg["buckets"], cfg["parts"], cfg["name"])
        except ValueError as e:
            raise bad(f"config out of range: {e}") from e
        wi, wv, rk, rv = a["w_idx"], a["w_val"], a["res_keys"], a["res_vals"]
        if wi.ndim != 1 or wv.ndim != 1 or len(wi) != len(wv) or wi.dtype.kind != "i" or wv.dtype != np.float64:
            raise bad("linear weights malformed (w_idx int 1-d, w_val float64 1-d, equal length)")
        if len(wi) and (wi.min() < 0 or wi.max() >= pol.buckets or len(np.unique(wi)) != len(wi)):
            raise bad("linear weight index out of range or repeated")
        if rk.ndim != 1 or rv.ndim != 1 or len(rk) != len(rv) or rk.dtype.kind != "U" or rv.dtype != np.float64:
            raise bad("residual malformed (res_keys str 1-d, res_vals float64 1-d, equal length)")
        if not (np.all(np.isfinite(wv)) and np.all(np.isfinite(rv))):
            raise bad("non-finite weight")
        keys = [str(k) for k in rk]
        if len(set(keys)) != len(keys):
            raise bad("repeated residual key")
        pol.w[wi] = wv
        pol.residual = dict(zip(keys, rv.tolist()))
        return pol, meta

    def __repr__(self) -> str:
        return (f"TextPolicy(expert_bonus={self.expert_bonus}, overlap_weight={self.overlap_weight}, "
                f"buckets={self.buckets}, parts={self.parts})")


class TextActor:
    """The collector's batched policy: samples from (or takes the argmax of) a :class:`TextPolicy`.

    Each step's extras hold the :class:`Decision` (key ``"decision"``) the REINFORCE update reads.
    """

    def __init__(self, policy: TextPolicy, rng: np.random.Generator, greedy: bool = False):
        self.policy, self.rng, self.greedy = policy, rng, bool(greedy)

    def __call__(self, observations: Sequence[str], infos: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for obs, info in zip(observations, infos):
            acts, d = self.policy.act(obs, info)
            k = int(np.argmax(d.probs)) if self.greedy else int(self.rng.choice(len(acts), p=d.probs))
            d.idx, d.action = k, acts[k]
            out.append({"action": acts[k], "decision": d})
        return out


__all__ = ["TextPolicy", "TextActor", "Decision", "scene_of", "FORMAT", "VERSION", "PARTS", "DEFAULT_PARTS", "MAX_FILE_BYTES"]
