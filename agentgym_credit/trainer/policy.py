"""The LLM policy: prompt templates per env family and a batched, log-prob-recording policy.

- :class:`PromptTemplate`: renders task, the last H (observation, action) pairs, the current
  observation and the admissible actions into one prompt; :data:`TEMPLATES` holds one per env
  family and :func:`template_for` picks it from an env id;
- :class:`LLMPolicy`: a :class:`~agentgym_credit.wrappers.GroupedRolloutCollector` policy around
  any ``transformers`` causal LM. One call = one batched generation for every active env; it keeps
  each trajectory's history (keyed by ``info["rollout"]["traj_id"]``), applies the tokenizer's chat
  template when there is one, and returns per step ``{"action", "prompt_ids", "response_ids",
  "logprobs", "finished"}`` — the collector records everything but ``action`` in the batch extras.

**Prompt length.** A prompt longer than ``max_prompt_tokens`` loses its *oldest history turns* first;
the system text, the task and the admissible actions are never cut. Each shortened prompt is
counted in ``stats["truncated_prompts"]`` (``stats["dropped_turns"]`` turns in all). A prompt that
does not fit even with no history has its current observation shortened (its head and tail kept around
`` [...] ``; ``stats["truncated_observations"]``); one that does not fit even then fails only its own
trajectory (``{"error": ...}`` to the collector, ``stats["failed_prompts"]``), never the run.

**Chat templates without a system role** (they raise on one, or drop it silently) get the system
text folded into the first user turn, detected once when the policy is built.

The action handed to the env is the whole response text: extracting the action part and mapping
it to an admissible action is the env side's job (``ActionProjection``); an action the env rejects
is a no-op with ``action_valid=False``, which the trainer penalizes. The history shown in later
prompts holds the extracted action (:func:`~agentgym_credit.wrappers.action_projection.extract_action`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentgym_credit.trainer.sampling import BatchedSampler
from agentgym_credit.wrappers.action_projection import extract_action


@dataclass(frozen=True)
class PromptTemplate:
    """How one env family is shown to the model.

    >>> t = TEMPLATES["grid"]
    >>> print(t.render("Reach the exit.", [("Room A.", "go east")], "Room B.", ["go west", "go north"]))
    You move through a grid of rooms. Reply with one action.
    Task: Reach the exit.
    Observation: Room A.
    Action: go east
    Observation: Room B.
    Admissible actions: go west | go north
    Action:
    """

    name: str
    instruction: str
    show_admissible: bool = True
    max_admissible: int = 50  # long action lists (ALFWorld) are cut to this many

    def system_text(self) -> str:
        return self.instruction

    def user_text(self, task: str | None, history: Sequence[tuple[str, str]], observation: str,
                  admissible: Sequence[str] | None) -> str:
        lines = []
        if task:
            lines.append(f"Task: {task.strip()}")
        for obs, act in history:
            lines.append(f"Observation: {obs.strip()}")
            lines.append(f"Action: {act.strip()}")
        lines.append(f"Observation: {observation.strip()}")
        if self.show_admissible and admissible:
            shown = list(admissible)[: self.max_admissible]
            lines.append("Admissible actions: " + " | ".join(shown))
        return "\n".join(lines)

    def render(self, task: str | None, history: Sequence[tuple[str, str]], observation: str,
               admissible: Sequence[str] | None) -> str:
        """A plain-completion prompt ending in ``"Action:"`` (no chat template)."""
        return f"{self.system_text()}\n{self.user_text(task, history, observation, admissible)}\nAction:"


TEMPLATES: dict[str, PromptTemplate] = {
    "grid": PromptTemplate("grid", "You move through a grid of rooms. Reply with one action."),
    "household": PromptTemplate(
        "household", "You are a household robot. Reply with one admissible action, e.g. 'go to shelf 1'."),
    "alfworld": PromptTemplate(
        "alfworld", "You are an expert agent in a text household (ALFWorld). Reply with exactly one admissible "
                    "action and nothing else."),
    "webshop": PromptTemplate(
        "webshop", "You are shopping on a web store for the instruction in the task. Reply with one action: "
                   "search[query] or click[button].", max_admissible=30),
    "generic": PromptTemplate("generic", "You are an agent in a text environment. Reply with one action."),
}
"""One template per env family (see :func:`template_for`)."""

_FAMILY = {
    "GridWorld": "grid", "AliasedGrid": "grid", "CueCorridor": "grid", "Household": "household",
    "ALFWorld": "alfworld", "TextWorld": "alfworld", "WebShop": "webshop",
}


def template_for(env_id: str) -> PromptTemplate:
    """The template of ``env_id``'s family (``"generic"`` for envs outside ``credit/``)."""
    name = env_id.split("/")[-1].split("-v")[0]
    return TEMPLATES[_FAMILY.get(name, "generic")]


def task_text(info: dict[str, Any]) -> str | None:
    """The task description an env puts in ``info`` (``goal``, ``task``, ``instruction``), if any."""
    for key in ("goal", "task", "instruction"):
        v = info.get(key)
        if isinstance(v, str) and v:
            return v
    return None


class LLMPolicy:
    """Batched LLM policy for the collector (see module docstring).

    Args:
        sampler: the :class:`BatchedSampler` (holds the model, tokenizer and sampling settings).
        template: the env family's :class:`PromptTemplate`.
        history_len: H, the (observation, action) pairs of the trajectory shown before the current one.
        chat_template: ``"auto"`` (use it when the tokenizer has one), ``"yes"`` or ``"no"``.
        max_prompt_tokens: longer prompts drop their oldest history turns until they fit (never the
            system text, task or current observation); a prompt too long without history is an error.
        generator: ``torch.Generator`` for sampling (set :attr:`generator` to reseed).
    """

    def __init__(self, sampler: BatchedSampler, template: PromptTemplate, *, history_len: int = 4,
                 chat_template: str = "auto", max_prompt_tokens: int = 2048, generator: Any = None):
        if chat_template not in ("auto", "yes", "no"):
            raise ValueError(f"chat_template must be 'auto', 'yes' or 'no', got {chat_template!r}")
        tok = sampler.tokenizer
        has_chat = getattr(tok, "chat_template", None) is not None
        if chat_template == "yes" and not has_chat:
            raise ValueError("chat_template='yes' but the tokenizer has no chat template")
        self.sampler = sampler
        self.tokenizer = tok
        self.template = template
        self.history_len = int(history_len)
        self.use_chat = has_chat if chat_template == "auto" else chat_template == "yes"
        self.max_prompt_tokens = int(max_prompt_tokens)
        self.generator = generator
        self.fold_system = self.use_chat and not _template_keeps_system(tok)
        self._history: dict[int, list[tuple[str, str]]] = {}
        self._task: dict[int, str | None] = {}
        self.stats = {"calls": 0.0, "rows": 0.0, "prefills": 0.0, "new_tokens": 0.0, "truncated_responses": 0.0,
                      "truncated_prompts": 0.0, "dropped_turns": 0.0, "truncated_observations": 0.0,
                      "failed_prompts": 0.0}

    def reset(self) -> None:
        """Forget every trajectory's history (the collector restarts traj ids each ``collect``)."""
        self._history.clear()
        self._task.clear()

    def prompt_text(self, observation: str, info: dict[str, Any], key: int,
                    history: Sequence[tuple[str, str]] | None = None) -> str:
        """The prompt for one env (plain or chat-formatted) given its trajectory ``key``'s history
        (``history`` overrides the last-H window of it)."""
        if history is None:
            history = self.window(key)
        task = self._task.get(key) or task_text(info)
        adm = info.get("admissible_actions")
        if not self.use_chat:
            return self.template.render(task, history, observation, adm)
        system, user = self.template.system_text(), self.template.user_text(task, history, observation, adm)
        if self.fold_system:
            messages = [{"role": "user", "content": f"{system}\n\n{user}"}]
        else:
            messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def window(self, key: int) -> list[tuple[str, str]]:
        """The last ``history_len`` (observation, action) pairs of trajectory ``key``."""
        hist = self._history.get(key, [])
        return hist[len(hist) - self.history_len:] if self.history_len > 0 else []

    def encode(self, text: str) -> list[int]:
        """Token ids of a rendered prompt (no truncation)."""
        return list(self.tokenizer(text, add_special_tokens=not self.use_chat)["input_ids"])

    def prompt_ids(self, observation: str, info: dict[str, Any], key: int) -> list[int]:
        """Token ids of the prompt, within ``max_prompt_tokens`` by dropping the oldest history turns."""
        hist = self.window(key)
        for drop in range(len(hist) + 1):
            ids = self.encode(self.prompt_text(observation, info, key, hist[drop:]))
            if len(ids) <= self.max_prompt_tokens:
                if drop:
                    self.stats["truncated_prompts"] += 1
                    self.stats["dropped_turns"] += drop
                return ids
        fits = self._shortened_observation(observation, info, key)
        if fits is not None:
            self.stats["truncated_observations"] += 1
            return fits
        raise PromptTooLong(
            f"the prompt needs {len(ids)} tokens without any history (system text, task, current observation and "
            f"admissible actions) and more than {self.max_prompt_tokens} (max_prompt_tokens) with an empty "
            "observation: raise max_prompt_tokens or use a template that shows fewer admissible actions")

    def _shortened_observation(self, observation: str, info: dict[str, Any], key: int) -> list[int] | None:
        """Prompt ids with the longest head + `` [...] `` + tail of ``observation`` that fits (no history), or
        ``None`` when even an empty observation does not fit. Binary search over the kept characters."""
        def ids_for(keep: int) -> list[int]:
            head, tail = observation[:(keep + 1) // 2], observation[len(observation) - keep // 2:] if keep > 1 else ""
            return self.encode(self.prompt_text(f"{head} [...] {tail}" if keep else "[...]", info, key, []))

        if len(ids_for(0)) > self.max_prompt_tokens:
            return None
        lo, hi = 0, len(observation)  # ids_for(lo) fits; ids_for(hi) (the whole text) does not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if len(ids_for(mid)) <= self.max_prompt_tokens else (lo, mid)
        return ids_for(lo)

    def __call__(self, observations: list[str], infos: list[dict[str, Any]]) -> list[dict[str, Any]]:
        keys = []
        for i, info in enumerate(infos):
            ro = info.get("rollout") or {"traj_id": i, "t": len(self._history.get(i, []))}
            key = int(ro["traj_id"])
            if int(ro.get("t", 0)) == 0:
                self._history[key] = []
                self._task[key] = task_text(info)
            keys.append(key)
        prompts, failed = [], {}
        for i, (o, info, k) in enumerate(zip(observations, infos, keys)):
            try:
                prompts.append(self.prompt_ids(o, info, k))
            except PromptTooLong as e:  # fails this trajectory only (the collector records why)
                failed[i] = str(e)
                self.stats["failed_prompts"] += 1
        keep = [i for i in range(len(keys)) if i not in failed]
        out = self.sampler.sample(prompts, generator=self.generator) if prompts else None
        results: list[dict[str, Any]] = [{"error": failed.get(i)} for i in range(len(keys))] if failed else []
        for j, i in enumerate(keep):
            key = keys[i]
            action = out.texts[j].strip()
            self._history.setdefault(key, []).append((observations[i], extract_action(action)))
            row = {"action": action, "prompt_ids": out.prompt_ids[j], "response_ids": out.response_ids[j],
                   "logprobs": out.logprobs[j], "finished": out.finished[j]}
            if failed:
                results[i] = row
            else:
                results.append(row)
        self.stats["calls"] += 1
        self.stats["rows"] += len(prompts)
        if out is not None:
            self.stats["prefills"] += out.num_prefills
            self.stats["new_tokens"] += out.stats.get("new_tokens", 0.0)
            self.stats["truncated_responses"] += sum(not f for f in out.finished)
        return results


class PromptTooLong(ValueError):
    """A prompt that does not fit ``max_prompt_tokens`` even with no history and an empty observation."""


def _template_keeps_system(tokenizer: Any) -> bool:
    """Whether the tokenizer's chat template renders a system message (some raise on one, others drop it)."""
    probe = "SYSTEM-PROBE-7f3a"
    try:
        text = tokenizer.apply_chat_template([{"role": "system", "content": probe}, {"role": "user", "content": "hi"}],
                                             tokenize=False, add_generation_prompt=True)
    except Exception:  # jinja's TemplateError from raise_exception(...), or anything a template raises
        return False
    return probe in text


__all__ = ["PromptTemplate", "TEMPLATES", "template_for", "task_text", "LLMPolicy", "PromptTooLong"]
