"""Prompts of the verl agent loop: our trainer's (``"plain"``) or verl-agent's reason-then-act format.

What lives here:

- :data:`PROMPTINGS`: ``"plain"`` (our trainer's :class:`~agentgym_credit.trainer.policy.LLMPolicy` prompt: the
  family template, "reply with the action", the last H (observation, action) pairs) and ``"verl-agent"``;
- :class:`Prompter`: one trajectory's prompt builder (history window, token budget) for either format;
- :func:`project_response`: a reply -> (the action sent to the env, whether its format was valid).

**``"verl-agent"``** (the format verl-agent's ALFWorld/WebShop results rely on), in our own wording: the
prompt states the task, a step-count header ("N step(s) taken so far"), the last H steps (verl-agent's
``history_length``, 2 in its ALFWorld recipe) with their observations and actions, the current step number and
observation, the admissible actions, and asks for reasoning inside ``<think>...</think>`` followed by one
action inside ``<action>...</action>``. A reply is well formed when it has exactly one ``<think>`` block
followed by exactly one ``<action>`` block with a non-empty action; a malformed reply still steps the env
(with the ``<action>`` content when there is one, else the reply's last line, as the env would see a wrong
action) and the step is recorded invalid (``agc_valid=False``), which the ``verl-agent`` estimator preset
penalizes (``invalid_penalty=-0.1``, as verl-agent's ``invalid_action_penalty_coef``).
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

from agentgym_credit.trainer.policy import LLMPolicy, template_for
from agentgym_credit.wrappers.action_projection import extract_action

PROMPTINGS = ("plain", "verl-agent")
_THINK = re.compile(r"<think>(.*?)</think>", re.IGNORECASE | re.DOTALL)
_ACTION = re.compile(r"<action>(.*?)</action>", re.IGNORECASE | re.DOTALL)


def project_response(text: str, prompting: str = "plain") -> tuple[str, bool]:
    """``(action, well_formed)`` of a model reply under ``prompting`` (module docstring)."""
    if prompting == "plain":
        return extract_action(text), True
    thinks, actions = list(_THINK.finditer(text)), list(_ACTION.finditer(text))
    action = actions[-1].group(1).strip() if actions else extract_action(text)
    ok = (len(thinks) == 1 and len(actions) == 1 and thinks[0].end() <= actions[0].start()
          and bool(thinks[0].group(1).strip()) and bool(action))
    return action, ok


class Prompter(LLMPolicy):
    """One trajectory's prompts (key 0) without a sampler: verl's server manager generates.

    ``"plain"`` is :class:`~agentgym_credit.trainer.policy.LLMPolicy`'s prompt (template, chat template or plain
    text, last ``history_len`` (observation, action) pairs, oldest turns dropped to fit ``max_prompt_tokens``);
    ``"verl-agent"`` renders the reason-then-act prompt with the same history window and budget."""

    def __init__(self, tokenizer: Any, env_id: str, history_len: int, max_prompt_tokens: int, task: str | None,
                 prompting: str = "plain"):
        if prompting not in PROMPTINGS:
            raise ValueError(f"prompting must be one of {', '.join(PROMPTINGS)}, got {prompting!r}")
        super().__init__(SimpleNamespace(tokenizer=tokenizer), template_for(env_id), history_len=history_len,
                         max_prompt_tokens=max_prompt_tokens)
        self.prompting = prompting
        self._task[0] = task
        self._history[0] = []

    def add(self, observation: str, action: str) -> None:
        """Record the step just taken (the action the env received)."""
        self._history[0].append((observation, action))

    def prompt_text(self, observation: str, info: dict[str, Any], key: int, history: Any = None) -> str:
        if self.prompting == "plain":
            return super().prompt_text(observation, info, key, history)
        if history is None:
            history = self.window(key)
        system, user = self._reason_act(observation, info, key, history)
        if not self.use_chat:
            return f"{system}\n{user}\n"
        messages = ([{"role": "user", "content": f"{system}\n\n{user}"}] if self.fold_system else
                    [{"role": "system", "content": system}, {"role": "user", "content": user}])
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def _reason_act(self, observation: str, info: dict[str, Any], key: int, history: Any) -> tuple[str, str]:
        taken = len(self._history.get(key, []))
        task = self._task.get(key) or ""
        lines = [f"Your task: {task.strip()}" if task else "Your task is described in the observation.",
                 f"So far you have taken {taken} step(s)."]
        if history:
            first = taken - len(history) + 1
            lines.append(f"Your last {len(history)} step(s), oldest first:")
            for i, (obs, act) in enumerate(history):
                lines.append(f"[Step {first + i}] Observation: {obs.strip()}\n[Step {first + i}] Action: {act.strip()}")
        lines.append(f"This is step {taken + 1}. Current observation: {observation.strip()}")
        adm = info.get("admissible_actions")
        if adm:
            lines.append("Admissible actions: [" + ", ".join(f"'{a}'" for a in list(adm)[: self.template.max_admissible])
                         + "]")
        lines.append("Reason step by step about the situation inside <think> </think>, then give exactly one "
                     "admissible action inside <action> </action>.")
        return self.template.instruction.split(". Reply")[0] + ".", "\n".join(lines)


__all__ = ["PROMPTINGS", "Prompter", "project_response"]
