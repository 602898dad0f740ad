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

**verl-agent's rules** (:data:`RULES`, the row setting ``rules="verl-agent"``; :func:`verl_agent_projection`,
:func:`verl_agent_reward`): what verl-agent's env managers hand its estimator, restated here from reading its
``projection`` functions and env workers (``agent_system/environments/env_package/{alfworld,webshop}``):

- the reply is lower-cased; the action is what lies between the **first** ``<action>`` and the first
  ``</action>`` (stripped); without both tags the env gets the reply's last 30 characters (WebShop: 20);
- the step is *valid* when both action tags are there, ``<think>`` and ``</think>`` are in the (original-case)
  reply, and it has no CJK ideograph (U+4E00..U+9FFF): the **format alone**; an inadmissible but well-formed
  action is valid (the env answers it with its no-op, and no penalty follows);
- the step's reward is ``won`` (1.0 on the step that wins, else 0; the ``verl-agent`` preset's ``reward_scale``
  makes it verl-agent's 10): ALFWorld ``10 * won``, WebShop 10 when the episode is done and WebShop's own score is
  exactly 1.0, else 0. The env's own reward (ALFWorld's -0.1 for an inadmissible command, WebShop's partial
  scores) is not read in this mode.

**Prompt templates** (:func:`load_prompt_template`, the row setting ``prompt_template``): the ``verl-agent``
prompt above is this project's own wording. A user who wants verl-agent's exact text points
``prompt_template`` at a verl-agent checkout (its ``agent_system/environments/prompts/<family>.py`` is read as
text and its ``<FAMILY>_TEMPLATE_NO_HIS`` / ``<FAMILY>_TEMPLATE`` strings taken; nothing of it is imported or
run), or at a file of their own: a ``.py`` file with ``*_TEMPLATE`` / ``*_TEMPLATE_NO_HIS`` string
constants, or a text file whose whole content is the template of every step. Fields filled
(:data:`TEMPLATE_FIELDS`): ``{task_description}``, ``{step_count}`` (steps taken so far), ``{history_length}``
(steps shown), ``{action_history}`` (``[Step i] Observation: ... / [Step i] Action: ...`` lines, our format),
``{current_step}`` (``step_count + 1``), ``{current_observation}``, ``{admissible_actions}`` and
``{available_actions}`` (the admissible actions, quoted, comma-separated). A template with another field is
refused when loaded (:class:`PromptTemplateError`), not at the first step.

**Under verl-agent's rules** (``rules="verl-agent"``) the fields are filled as verl-agent's env managers fill them,
so that a template loaded from its checkout renders byte for byte its prompt (``tests/test_verl_agent_prompts.py``):
the task as read from the first observation (ALFWorld: after ``Your task is to: ``, its final period kept; WebShop:
the part after ``Instruction:``), the history as ``[Observation i: '<obs>', Action i: '<action>']`` lines, nothing
stripped, the admissible actions unabridged (no ``max_admissible`` cap) in its layout (ALFWorld: quoted, one a line
joined by ``"\n "``, without ``help``; WebShop: ``'search[<your query>]',`` when there is a search bar, then each
``click[...]``, one a line), WebShop observations as the quoted ``[SEP]`` parts after the task, the first template
on step 1 or when ``history_len`` is 0 and on a WebShop prompt over 13,000 characters. The built-in wording shows
the admissible list uncapped too. A reply is projected without stripping it first (:func:`verl_agent_projection`).
"""

from __future__ import annotations

import ast
import re
import string
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from agentgym_credit.errors import PromptTemplateError
from agentgym_credit.trainer.policy import LLMPolicy, template_for
from agentgym_credit.wrappers.action_projection import extract_action

PROMPTINGS = ("plain", "verl-agent")
RULES = ("ours", "verl-agent")
"""How a reply becomes an action, a validity flag and a step reward: ``"ours"`` (:func:`project_response`; valid =
well formed and accepted by the env; the env's reward) or ``"verl-agent"`` (module docstring)."""
TEMPLATE_FIELDS = ("task_description", "step_count", "history_length", "action_history", "current_step",
                   "current_observation", "admissible_actions", "available_actions")
"""The ``{fields}`` a prompt template may use (module docstring)."""
_CJK = re.compile("[\u4e00-\u9fff]")
_TAIL = {"WebShop": 20}  # characters of a tagless reply sent as the action (verl-agent: ALFWorld 30, WebShop 20)
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


def _family(env_id: str) -> str:
    return env_id.split("/")[-1].split("-v")[0]


def verl_agent_projection(text: str, env_id: str) -> tuple[str, bool]:
    """``(action, valid)`` of a reply under verl-agent's rules (module docstring): the first ``<action>`` block,
    lower-cased; valid = both action tags, both think tags, no CJK ideograph."""
    low = text.lower()
    start, end = low.find("<action>"), low.find("</action>")
    if start == -1 or end == -1:
        return low[-_TAIL.get(_family(env_id), 30):], False
    action = low[start + len("<action>"):end].strip()
    valid = "<think>" in text and "</think>" in text and not _CJK.search(text)
    return action, valid


def verl_agent_reward(env_id: str, reward: float, done: bool, info: dict[str, Any]) -> float:
    """The step's reward under verl-agent's rules, in units of a win (module docstring): WebShop 1.0 when ``done``
    and its score ``reward`` is exactly 1.0; every other env ``info["won"]``."""
    if _family(env_id) == "WebShop":
        return 1.0 if (done and float(reward) == 1.0) else 0.0
    return float(bool(info.get("won", False)))


def verl_agent_task(observation: str, env_id: str) -> str | None:
    """The task as verl-agent's env managers read it from the first observation (module docstring), or ``None``."""
    if _family(env_id) == "WebShop":
        parts = observation.split(" [SEP] ")
        return parts[2] if len(parts) > 2 and parts[1] == "Instruction:" else None
    at = observation.find("Your task is to: ")
    return observation[at + len("Your task is to: "):].strip() if at != -1 else None


def verl_agent_observation(observation: str, task: str | None, env_id: str) -> str:
    """An observation as verl-agent shows it: WebShop's quoted ``[SEP]`` parts after the task (the whole text when
    the task is not among them); every other family's text unchanged."""
    if _family(env_id) != "WebShop":
        return observation
    parts = observation.split(" [SEP] ")
    if task not in parts:
        return observation
    return " [SEP] ".join(f"'{p}'" for p in parts[parts.index(task) + 1:])


def verl_agent_actions(admissible: Any, env_id: str) -> str:
    """The admissible actions in verl-agent's layout (module docstring), all of them."""
    acts = [str(a) for a in (admissible or [])]
    if _family(env_id) == "WebShop":
        shown = (["search[<your query>]"] if any(a.startswith("search[") for a in acts) else []) + [
            a for a in acts if a.startswith("click[")]
        return "\n".join(f"'{a}'," for a in shown)
    return "\n ".join(f"'{a}'" for a in acts if a != "help")


def verl_agent_history(history: Any, taken: int) -> str:
    """The last steps as verl-agent's memory lists them: ``[Observation i: '<obs>', Action i: '<action>']``."""
    first = taken - len(history) + 1
    return "\n".join(f"[Observation {first + i}: '{o}', Action {first + i}: '{a}']" for i, (o, a) in enumerate(history))


@dataclass(frozen=True)
class TemplatePair:
    """A loaded prompt: ``first`` renders step 1 (no history yet), ``rest`` every later step."""

    first: str
    rest: str
    source: str

    def render(self, **fields: Any) -> str:
        return (self.rest if int(fields["step_count"]) > 0 else self.first).format(**fields)


def _check_fields(text: str, where: str) -> str:
    try:
        names = {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
    except ValueError as e:
        raise PromptTemplateError(f"prompt template {where}: {e}") from None
    bad = sorted(n for n in names if n not in TEMPLATE_FIELDS)
    if bad:
        raise PromptTemplateError(f"prompt template {where} uses {', '.join('{' + b + '}' for b in bad)}; the fields "
                                  f"filled are {', '.join('{' + f + '}' for f in TEMPLATE_FIELDS)}")
    return text


def _py_templates(path: Path) -> dict[str, str]:
    """The module-level string constants of a Python file, read as text (never imported)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError) as e:
        raise PromptTemplateError(f"prompt template file {path}: cannot read it ({e})") from None
    out = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            out[node.targets[0].id] = node.value.value
    return out


def load_prompt_template(spec: str | Path, env_id: str) -> TemplatePair:
    """The prompt of ``env_id``'s family from ``spec``: a verl-agent checkout (a folder), a ``.py`` file with
    ``*_TEMPLATE`` / ``*_TEMPLATE_NO_HIS`` constants, or a text file (module docstring)."""
    path = Path(spec).expanduser()
    family = _family(env_id)
    prefix = {"TextWorld": "ALFWORLD"}.get(family, family.upper())
    if path.is_dir():
        path = path / "agent_system" / "environments" / "prompts" / f"{prefix.lower()}.py"
    if not path.is_file():
        raise PromptTemplateError(f"prompt template {spec!s}: no such file (a verl-agent checkout must hold "
                                  f"agent_system/environments/prompts/{prefix.lower()}.py)")
    if path.suffix == ".py":
        consts = _py_templates(path)
        names = [k for k in consts if k.endswith("_TEMPLATE")]
        base = f"{prefix}_TEMPLATE" if f"{prefix}_TEMPLATE" in consts else (names[0] if len(names) == 1 else None)
        if base is None:
            raise PromptTemplateError(f"prompt template file {path}: no {prefix}_TEMPLATE string constant (found "
                                      f"{', '.join(sorted(consts)) or 'no string constants'})")
        rest = consts[base]
        first = consts.get(f"{base}_NO_HIS", rest)
    else:
        try:
            rest = first = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise PromptTemplateError(f"prompt template file {path}: cannot read it ({e})") from None
    return TemplatePair(_check_fields(first, str(path)), _check_fields(rest, str(path)), str(path))


class Prompter(LLMPolicy):
    """One trajectory's prompts (key 0) without a sampler: verl's server manager generates.

    ``"plain"`` is :class:`~agentgym_credit.trainer.policy.LLMPolicy`'s prompt (template, chat template or plain
    text, last ``history_len`` (observation, action) pairs, oldest turns dropped to fit ``max_prompt_tokens``);
    ``"verl-agent"`` renders the reason-then-act prompt with the same history window and budget. ``template`` (a
    :class:`TemplatePair` from :func:`load_prompt_template`) replaces either with the loaded text, sent as one user
    message (chat) or as is (plain text), with the same window and budget."""

    def __init__(self, tokenizer: Any, env_id: str, history_len: int, max_prompt_tokens: int, task: str | None,
                 prompting: str = "plain", template: TemplatePair | None = None, rules: str = "ours"):
        if prompting not in PROMPTINGS:
            raise ValueError(f"prompting must be one of {', '.join(PROMPTINGS)}, got {prompting!r}")
        if rules not in RULES:
            raise ValueError(f"rules must be one of {', '.join(RULES)}, got {rules!r}")
        super().__init__(SimpleNamespace(tokenizer=tokenizer), template_for(env_id), history_len=history_len,
                         max_prompt_tokens=max_prompt_tokens)
        self.prompting = prompting
        self.loaded = template
        self.env_id, self.rules = env_id, rules
        self.va_task: str | None = None  # verl-agent's task, read from the first observation (rules="verl-agent")
        self._task[0] = task
        self._history[0] = []

    def add(self, observation: str, action: str) -> None:
        """Record the step just taken (the action the env received)."""
        self._history[0].append((observation, action))

    def prompt_text(self, observation: str, info: dict[str, Any], key: int, history: Any = None) -> str:
        if self.rules == "verl-agent" and not self._history.get(key) and self.va_task is None:
            self.va_task = verl_agent_task(observation, self.env_id) or (self._task.get(key) or "").strip()
        if self.loaded is not None:
            text = self._fill(observation, info, key, self.window(key) if history is None else history)
            if not self.use_chat:
                return text
            return self.tokenizer.apply_chat_template([{"role": "user", "content": text}], tokenize=False,
                                                      add_generation_prompt=True)
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

    def _fill(self, observation: str, info: dict[str, Any], key: int, history: Any) -> str:
        if self.rules == "verl-agent":
            return self._fill_verl_agent(observation, info, key, history)
        taken = len(self._history.get(key, []))
        first = taken - len(history) + 1
        past = "\n".join(f"[Step {first + i}] Observation: {o.strip()}\n[Step {first + i}] Action: {a.strip()}"
                         for i, (o, a) in enumerate(history))
        adm = ", ".join(f"'{a}'" for a in list(info.get("admissible_actions") or [])[: self.template.max_admissible])
        assert self.loaded is not None
        return self.loaded.render(task_description=(self._task.get(key) or "").strip(), step_count=taken,
                                  history_length=len(history), action_history=past, current_step=taken + 1,
                                  current_observation=observation.strip(), admissible_actions=adm,
                                  available_actions=adm)

    def _fill_verl_agent(self, observation: str, info: dict[str, Any], key: int, history: Any) -> str:
        assert self.loaded is not None
        taken, task = len(self._history.get(key, [])), self.va_task or ""
        adm = verl_agent_actions(info.get("admissible_actions"), self.env_id)
        shown = [(verl_agent_observation(o, task, self.env_id), a) for o, a in history]
        fields = dict(task_description=task, step_count=taken, history_length=len(history),
                      action_history=verl_agent_history(shown, taken), current_step=taken + 1,
                      current_observation=verl_agent_observation(observation, task, self.env_id),
                      admissible_actions=adm, available_actions=adm)
        if taken == 0 or self.history_len <= 0:
            return self.loaded.first.format(**fields)
        text = self.loaded.rest.format(**fields)
        if _family(self.env_id) == "WebShop" and len(text) > 13000:  # verl-agent drops the history then
            return self.loaded.first.format(**fields)
        return text

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
            cap = None if self.rules == "verl-agent" else self.template.max_admissible
            lines.append("Admissible actions: [" + ", ".join(f"'{a}'" for a in list(adm)[:cap]) + "]")
        lines.append("Reason step by step about the situation inside <think> </think>, then give exactly one "
                     "admissible action inside <action> </action>.")
        return self.template.instruction.split(". Reply")[0] + ".", "\n".join(lines)


__all__ = ["PROMPTINGS", "RULES", "TEMPLATE_FIELDS", "Prompter", "PromptTemplateError", "TemplatePair",
           "load_prompt_template", "project_response", "verl_agent_actions", "verl_agent_history",
           "verl_agent_observation", "verl_agent_projection", "verl_agent_reward", "verl_agent_task"]
