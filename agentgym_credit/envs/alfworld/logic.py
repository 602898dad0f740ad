"""What the ALFWorld engine modules share: the installed engine packages, domain, grammar and task sentence.

What lives here (imported by both :mod:`~agentgym_credit.envs.alfworld.engine` and
:mod:`~agentgym_credit.envs.alfworld.fast`, importing neither, so the two never import each other in a
circle):

- :func:`require_engine` — import ``textworld``, ``alfworld`` and ``fast_downward`` or raise
  :class:`~agentgym_credit.errors.DependencyNotInstalled` with the exact commands that install them (the
  three engine packages with ``--no-deps`` first, then what they import:
  :func:`~agentgym_credit.errors.install_commands` of the ``alfworld`` extra);
- :func:`require_textworld` — the same for TextWorld alone (``credit/TextWorld-v0``);
- :func:`installed_logic` — the PDDL domain and grammar shipped inside the installed ``alfworld`` wheel
  (``alfworld/data/alfred.pddl`` and ``alfred.twl2``; nothing is downloaded);
- :func:`task_sentence` and :data:`TASK_RULE_RE` — a game grammar's task sentence;
  :data:`INSTALLED_TASK` — the placeholder sentence of the installed grammar.
"""

from __future__ import annotations

import functools
import json
import re

from agentgym_credit.errors import DependencyNotInstalled

TASK_RULE_RE = re.compile(r'"task"\s*:\s*\[\s*\{\s*"rhs"\s*:\s*"((?:[^"\\]|\\.)*)"')
"""The task sentence inside a game's grammar (``"task": [{"rhs": "Your task is to: ..."}]``)."""

INSTALLED_TASK = "Your task is to: UNKNOWN GOAL."
"""The installed grammar's placeholder task sentence (a game fills in its own)."""


def _missing(package: str, exc: ImportError) -> DependencyNotInstalled:
    err = DependencyNotInstalled(package, "alfworld")
    err.__cause__ = exc
    return err


def require_textworld() -> None:
    """Import ``textworld`` (and ``jericho``, which runs its games) or say how to install them."""
    try:
        import textworld  # noqa: F401
        import textworld.challenges  # noqa: F401
    except ImportError as exc:
        raise _missing(f"textworld ({exc.name or exc})", exc) from exc


def require_engine() -> None:
    """Import the ALFWorld engine's packages once, or say exactly how to install them."""
    try:
        import fast_downward  # noqa: F401
    except ImportError as exc:
        raise _missing("fast-downward-textworld", exc) from exc
    try:
        import textworld  # noqa: F401
        import textworld.envs.pddl  # noqa: F401
    except ImportError as exc:
        raise _missing(f"textworld ({exc.name or exc})", exc) from exc
    try:
        import alfworld.info  # noqa: F401
    except ImportError as exc:
        raise _missing(f"alfworld ({exc.name or exc})", exc) from exc


@functools.lru_cache(maxsize=1)
def installed_logic() -> tuple[str, str]:
    """``(pddl_domain, grammar)`` of the installed ``alfworld`` package."""
    require_engine()
    from alfworld.info import ALFRED_PDDL_PATH, ALFRED_TWL2_PATH

    with open(ALFRED_PDDL_PATH) as f:
        domain = f.read()
    with open(ALFRED_TWL2_PATH) as f:
        grammar = f.read()
    if INSTALLED_TASK not in grammar:  # pragma: no cover - guards a future alfworld release
        raise RuntimeError(f"installed alfworld grammar has no {INSTALLED_TASK!r} rule to fill in")
    return domain, grammar


_TEMPLATE_MARKS = frozenset("{}#[]|")
"""Characters that make grammar text more than text (``{expr}`` is Python, ``#symbol#`` a rule)."""


def task_sentence(grammar: str) -> str:
    """The task sentence a game's grammar carries (``"Your task is to: ..."``): plain text, or ``ValueError``. It
    goes into the installed grammar as a template, where ``{expr}`` would be evaluated as Python at reset and
    ``#symbol#`` expanded (issue 43 D7): a sentence with any of ``{ } # [ ] |`` is refused, never evaluated."""
    m = TASK_RULE_RE.search(grammar)
    if m is None:
        raise ValueError("game grammar has no 'task' rule")
    sentence = json.loads(f'"{m.group(1)}"')
    if not isinstance(sentence, str) or _TEMPLATE_MARKS & set(sentence):
        raise ValueError(f"game file's task sentence {str(sentence)[:80]!r} is not plain text (it may not hold any of "
                         "{ } # [ ] |: a game file's text is parsed, never evaluated)")
    return sentence


def grammar_with_task(sentence: str) -> str:
    """The installed grammar carrying ``sentence`` as its task."""
    return installed_logic()[1].replace(INSTALLED_TASK, json.dumps(sentence)[1:-1])


__all__ = [
    "INSTALLED_TASK",
    "TASK_RULE_RE",
    "require_engine",
    "require_textworld",
    "installed_logic",
    "task_sentence",
    "grammar_with_task",
]
