"""Named errors of agentgym-credit, each with a message that says what to do.

- ``CreditError``: base class.
- ``ResetNeeded``: ``step`` called before ``reset`` or after the episode ended.
- ``DependencyNotInstalled``: an optional dependency is missing; the message names the extra.
- ``GroupMismatchError``: the rollouts of one group do not share one initial state.
- ``EnvIdWithoutNamespace``: ``gym.make("GridWorld-v0")``: the id lacks ``credit/``; the message names the full id.
- ``NotACreditEnv``: an env id that is not a registered ``credit/*`` env where one is required.
- ``StepArraysError``: malformed step arrays handed to the credit library.
- ``ContractViolation``: an env breaks the env contract (raised by ``check_credit_env``).
- ``SnapshotError``: a snapshot given to ``set_state`` is corrupted, forged or signed with another key,
  foreign (another env or configuration), of an unknown format, or has a field out of range;
  ``SnapshotUnsupported``: this env cannot snapshot; ``SnapshotKeyError``: a weak snapshot key (at first use).
- ``EngineHalted``: a native game engine (jericho's Z-machine) halted, crashed or hung on a step; the env dropped
  that engine (the next ``reset`` or ``set_state`` starts a fresh one) and needs a reset.
- ``PolicyFileError``: a saved policy file (``truth.text_policy``) that cannot be read back: missing,
  truncated, not a policy file, of another format version, or with a field of the wrong type or out of range.

Warnings (the run goes on; the numbers are right but probably not what was meant):

- ``CreditWarning``: base class (a ``UserWarning``).
- ``NoRewardVarianceWarning``: no group of the batch has any reward signal (every reward in a group is the same
  and every rollout of it has the same return), so every estimator returns exact zeros for the batch.
- ``NoHistoryWarning``: ``hgpo`` on step arrays with one history level (no ``history_keys``): the hierarchy has
  one level, and HGPO's step term is GiGPO's.
"""

from __future__ import annotations

from gymnasium import error as gym_error


class CreditWarning(UserWarning):
    """Base class of every warning this package issues on purpose."""


class NoRewardVarianceWarning(CreditWarning):
    """No group of a batch has any reward signal: every advantage is exactly zero."""


class NoHistoryWarning(CreditWarning):
    """HGPO given one history level: it reduces to GiGPO's step term."""


class CreditError(Exception):
    """Base class of every error this package raises on purpose."""


class ResetNeeded(CreditError, gym_error.ResetNeeded, RuntimeError):
    """``step`` was called before ``reset`` or after ``terminated``/``truncated`` (also a
    ``gymnasium.error.ResetNeeded``, for code written against gymnasium)."""


TORCH_CPU_PIN = "pip install torch==2.13.0"
"""Installs the CPU build of torch first (a plain ``torch`` requirement pulls a multi-GB CUDA build)."""

ENGINES_NO_DEPS = "pip install --no-deps alfworld==0.4.2 textworld==1.7.0 jericho==3.3.1"
"""Installs the ALFWorld/TextWorld engines without their declared dependencies (they pull spaCy, which
the engines never import; what they do import is the ``alfworld`` extra)."""

_FIRST: dict[str, tuple[str, ...]] = {
    "trainer": (TORCH_CPU_PIN,),
    "lora": (TORCH_CPU_PIN,),
    "verl": (TORCH_CPU_PIN,),
    "trl": (TORCH_CPU_PIN,),
    "alfworld": (ENGINES_NO_DEPS,),
}
"""Commands that must run before an extra's own requirements."""


def extra_requirements(extra: str) -> list[str]:
    """The requirement specs of one extra of the installed agentgym-credit (markers stripped), or ``[]``
    when the distribution's metadata is not available."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        reqs = requires("agentgym-credit") or []
    except PackageNotFoundError:
        return []
    out = []
    for r in reqs:
        spec, _, marker = r.partition(";")
        if marker.replace("'", '"').split() == ["extra", "==", f'"{extra}"'] and "agentgym-credit" not in spec:
            out.append(spec.strip().replace(" ", ""))
    return out


def install_commands(extra: str) -> tuple[str, ...]:
    """Shell commands that install an extra's packages, in order, and work from a PyPI install and from
    a source checkout alike (the extra's requirements by name, after the CPU torch pin or the
    engines' ``--no-deps`` line where the extra needs one)."""
    reqs = extra_requirements(extra)
    last = "pip install " + " ".join(f"'{r}'" for r in reqs) if reqs else f"pip install -e '.[{extra}]'"
    return (*_FIRST.get(extra, ()), last)


class DependencyNotInstalled(CreditError, ImportError):
    """An optional dependency is missing; the message gives the exact commands that install it.

    ``commands`` (optional) overrides them; by default they are :func:`install_commands` of ``extra``
    (for ``trainer``-like extras the CPU torch pin first, for ``alfworld`` the engines' ``--no-deps``
    line first, then the extra's requirements by name).
    """

    def __init__(self, package: str, extra: str, commands: tuple[str, ...] | list[str] | None = None):
        self.package = package
        self.extra = extra
        self.commands = tuple(commands) if commands else install_commands(extra)
        steps = "\n".join(f"    {c}" for c in self.commands)
        super().__init__(f"{package} is not installed; install the {extra!r} extra of agentgym-credit with:\n{steps}")


class GroupMismatchError(CreditError, ValueError):
    """Rollouts of one group started from different initial states."""


class EnvIdWithoutNamespace(CreditError, gym_error.Error, ValueError):
    """An env id given without its ``credit/`` namespace (``gym.make("GridWorld-v0")``)."""

    def __init__(self, bare: str, full: str):
        self.bare, self.full = bare, full
        super().__init__(f"{bare!r} is registered by agentgym-credit as {full!r}: gym.make({full!r})")


class NotACreditEnv(CreditError, ValueError):
    """An env id that is not a registered ``credit/*`` env where the credit env contract is needed (the
    estimators read its state and observation keys; the verl agent loop and the TRL bridge play only them)."""


class StepArraysError(CreditError, ValueError):
    """Step arrays are malformed (lengths, NaN rewards, step indices, groups)."""


class ContractViolation(CreditError, AssertionError):
    """An environment breaks the agentgym-credit env contract."""


class SnapshotError(CreditError, ValueError):
    """A snapshot was refused: corrupted or forged (its keyed tag does not verify: edited, or signed with
    another process's key), from another env or configuration, of an unknown format, too large or too deeply
    nested, or with an RNG state or payload field of the wrong type or out of range. ``set_state`` raises
    nothing else for a bad snapshot."""


class SnapshotKeyError(CreditError, ValueError):
    """A snapshot key was refused: ``$AGENTGYM_CREDIT_SNAPSHOT_KEY`` (or a key given to ``set_snapshot_key``)
    shorter than 16 characters or trivially weak (a few distinct characters repeated); raised at the first
    snapshot signed or checked, never at import. Set a random key: ``python -c "import secrets;
    print(secrets.token_hex(16))"``."""


class SnapshotUnsupported(CreditError, NotImplementedError):
    """This env (or engine) cannot save and restore its state."""


class EngineHalted(CreditError, RuntimeError):
    """A native game engine halted on a runtime error (jericho's "Emulator halted due to runtime error."), hung or
    crashed while stepping. The env never reuses it: the engine is dropped and rebuilt by the next ``reset`` or
    ``set_state``, and the episode needs a reset (``step`` raises ``ResetNeeded`` until then)."""


class PolicyFileError(CreditError, ValueError):
    """A saved policy file was refused (missing, corrupted, another format or version, a field of the wrong
    type, shape or range, larger than the cap); :meth:`TextPolicy.load` raises nothing else for a bad file."""


class PromptTemplateError(CreditError, ValueError):
    """A prompt template for the verl agent loop was refused: missing or unreadable, without the template it should
    hold, or with a ``{field}`` the loop does not fill (the message lists the fields it fills)."""


__all__ = [
    "CreditError",
    "EnvIdWithoutNamespace",
    "CreditWarning",
    "NoRewardVarianceWarning",
    "NoHistoryWarning",
    "SnapshotKeyError",
    "ResetNeeded",
    "DependencyNotInstalled",
    "install_commands",
    "extra_requirements",
    "GroupMismatchError",
    "NotACreditEnv",
    "StepArraysError",
    "ContractViolation",
    "SnapshotError",
    "SnapshotUnsupported",
    "EngineHalted",
    "PolicyFileError",
    "PromptTemplateError",
]
