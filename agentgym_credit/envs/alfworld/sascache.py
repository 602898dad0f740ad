"""The on-disk cache of Fast Downward translations (SAS text), stored as data, never as code.

What lives here:

- :func:`sas_cache_dir` — the cache folder (``$AGENTGYM_CREDIT_SAS_CACHE``, ``=0`` turns it off;
  default ``~/.cache/agentgym_credit/alfworld_sas``);
- :func:`entry_path` — where the translation of one ``(version tag, optimize, domain, problem)`` lives;
- :func:`read_entry` / :func:`write_entry` — read and write one entry;
- :func:`sas_problem` — why a text is not a well-formed translation (checked before it is used).

An entry is ``agc-sas/2 <tag>\\n`` followed by the zlib-compressed UTF-8 JSON body
``{"key": <the entry's key>, "sas": <SAS text>}``. Only text is stored: the planner task object the
translator also returns is rebuilt from the PDDL by parsing (about 5 % of a translation's time), so a file
in the cache can never carry code. The tag is keyed BLAKE2b of the body with the per-user cache secret
(:mod:`~agentgym_credit.envs.cachekey`, kept outside the cache folder), so a well-formed entry written by
another hand — the translation of another game under this game's key — does not verify. A missing entry
is a miss; a damaged (bad header, tag,
compression or JSON), foreign (another key: a file copied or planted under this name) or old-format
entry (the zlib pickles of earlier versions) is a miss too, with a :class:`SasCacheWarning`, and the
caller's fresh translation overwrites it. So is an entry that is not a regular file (a FIFO, a link to
a device), larger than :data:`SAS_CACHE_MAX_BYTES` on disk or inflated (never read or inflated whole), or
whose text is not a well-formed translation (:func:`sas_problem`: a forged entry with a correct checksum
would otherwise make the native planner exit the process). Writes go to a temporary file in the same folder, then
``os.replace``, so a reader never sees half an entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import warnings
import zlib
from pathlib import Path

from agentgym_credit.envs.cachekey import cache_tag, tag_matches

SAS_CACHE_HEADER = b"agc-sas/2"
"""Magic and version on the first line of every entry."""

SAS_CACHE_MAX_ENTRIES = 6000
"""About how many translations the disk cache keeps (~600 MB; ALFWorld's train + eval sets are 3,827
games); past that, new translations are only kept in memory."""


SAS_CACHE_MAX_BYTES = 32 * 2**20
"""Largest entry read from disk, and largest body inflated (a translation is ~100 kB of text)."""


class SasCacheWarning(UserWarning):
    """A cache entry was damaged, foreign or of an old format: it is ignored and rebuilt."""


def sas_cache_dir() -> Path | None:
    """Folder of the on-disk translation cache, or ``None`` when ``AGENTGYM_CREDIT_SAS_CACHE=0``."""
    value = os.environ.get("AGENTGYM_CREDIT_SAS_CACHE", "")
    if value == "0":
        return None
    return Path(value).expanduser() if value else Path.home() / ".cache" / "agentgym_credit" / "alfworld_sas"


def entry_key(tag: str, optimize: bool, domain: str, problem: str) -> str:
    """The hex key of one translation (versions, options and both texts)."""
    text = f"{tag}\0{bool(optimize)}\0{domain}\0{problem}"
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


def entry_path(folder: Path, key: str) -> Path:
    """Path of the entry of ``key`` under ``folder``."""
    return folder / key[:2] / f"{key}.sas.z"


def _digest(body: bytes) -> bytes:
    """The entry's tag: keyed with the per-user cache secret (:mod:`~agentgym_credit.envs.cachekey`)."""
    return cache_tag("agc-sas", [body]).encode()


def _damaged(path: Path, why: str) -> None:
    warnings.warn(f"ALFWorld translation cache entry {str(path)!r} ignored and rebuilt: {why}",
                  SasCacheWarning, stacklevel=3)


def read_entry(path: Path, key: str) -> str | None:
    """The SAS text stored for ``key`` at ``path``, or ``None`` (a miss; see the module docstring)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # O_NONBLOCK: a FIFO must not block the open
    except OSError:
        return None  # missing (or unreadable): a plain miss
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size > SAS_CACHE_MAX_BYTES:
        os.close(fd)  # checked before fdopen, which refuses a directory with an exception
        _damaged(path, "not a regular file" if not stat.S_ISREG(info.st_mode)
                 else f"{info.st_size} bytes, larger than any entry")
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            raw = f.read(SAS_CACHE_MAX_BYTES + 1)
    except OSError:
        return None  # unreadable: a plain miss
    head, sep, body = raw.partition(b"\n")
    parts = head.split(b" ")
    if not sep or len(parts) != 2 or parts[0] != SAS_CACHE_HEADER:
        _damaged(path, f"not a {SAS_CACHE_HEADER.decode()} entry")
        return None
    if not tag_matches(parts[1], "agc-sas", [body]):
        _damaged(path, "tag mismatch (a damaged file, or one not written by this package with this user's "
                       "cache key)")
        return None
    try:
        inflate = zlib.decompressobj()
        text = inflate.decompress(body, SAS_CACHE_MAX_BYTES)
        if inflate.unconsumed_tail:
            _damaged(path, f"body inflates past {SAS_CACHE_MAX_BYTES} bytes")
            return None
        doc = json.loads(text.decode("utf-8"))
    except (zlib.error, UnicodeDecodeError, ValueError) as exc:
        _damaged(path, f"unreadable body ({type(exc).__name__})")
        return None
    if not isinstance(doc, dict) or doc.get("key") != key or not isinstance(doc.get("sas"), str):
        _damaged(path, "entry belongs to another translation")
        return None
    why = sas_problem(doc["sas"])
    if why is not None:
        _damaged(path, f"not a well-formed translation ({why})")
        return None
    return doc["sas"]


def sas_problem(sas: str) -> str | None:
    """Why ``sas`` is not a well-formed Fast Downward translation (SAS version 3), or ``None``.

    Checks the section structure and that every variable and value index is in range (mutex groups,
    initial state, goal, operators, axioms), so that a text the native planner would reject (it exits
    the process) or misread never reaches it. About 1 ms for an ALFWorld game."""
    lines = sas.split("\n")
    pos = 0
    ranges: list[int] = []

    def take() -> str:
        nonlocal pos
        pos += 1
        return lines[pos - 1]

    def expect(word: str) -> None:
        if take() != word:
            raise ValueError(f"line {pos}: expected {word!r}")

    def count(hi: int = 10**7) -> int:
        n = int(take())
        if not 0 <= n <= hi:
            raise ValueError(f"line {pos}: count {n} out of range")
        return n

    def fact(var: int, val: int, pre: bool = False) -> None:
        if not (0 <= var < len(ranges) and (0 <= val < ranges[var] or (pre and val == -1))):
            raise ValueError(f"line {pos}: variable {var} = {val} out of range")

    def pairs(n: int) -> None:
        for _ in range(n):
            var, val = map(int, take().split())
            fact(var, val)

    try:
        for word in ("begin_version", "3", "end_version", "begin_metric"):
            expect(word)
        if take() not in ("0", "1"):
            raise ValueError(f"line {pos}: metric must be 0 or 1")
        expect("end_metric")
        for _ in range(count()):
            expect("begin_variable")
            take()  # name
            int(take())  # axiom layer
            ranges.append(count())
            pos += ranges[-1]  # value names
            expect("end_variable")
        for _ in range(count()):
            expect("begin_mutex_group")
            pairs(count())
            expect("end_mutex_group")
        expect("begin_state")
        for var in range(len(ranges)):
            fact(var, int(take()))
        expect("end_state")
        expect("begin_goal")
        pairs(count())
        expect("end_goal")
        for _ in range(count()):
            expect("begin_operator")
            take()  # name
            pairs(count())  # prevail conditions
            for _ in range(count()):  # effects: n_cond, (var val) * n_cond, var, pre, post
                nums = list(map(int, take().split()))
                if not nums or len(nums) != 2 * nums[0] + 4:
                    raise ValueError(f"line {pos}: malformed effect")
                for i in range(nums[0]):
                    fact(nums[1 + 2 * i], nums[2 + 2 * i])
                fact(nums[-3], nums[-2], pre=True)
                fact(nums[-3], nums[-1])
            int(take())  # cost
            expect("end_operator")
        for _ in range(count()):
            expect("begin_rule")
            pairs(count())
            var, pre, post = map(int, take().split())
            fact(var, pre, pre=True)
            fact(var, post)
            expect("end_rule")
    except (IndexError, ValueError) as exc:
        return str(exc) if str(exc).startswith("line") else f"line {pos}: {exc}"
    if any(line.strip() for line in lines[pos:]):
        return f"line {pos + 1}: text after the last section"
    return None


def write_entry(path: Path, key: str, sas: str) -> None:
    """Store ``sas`` for ``key`` atomically; a full or read-only disk only costs speed (nothing raised)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() and len(os.listdir(path.parent)) * 256 >= SAS_CACHE_MAX_ENTRIES:
            return  # bounded: ~100 kB an entry
        body = zlib.compress(json.dumps({"key": key, "sas": sas}).encode("utf-8"), 6)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(SAS_CACHE_HEADER + b" " + _digest(body) + b"\n" + body)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


__all__ = [
    "SAS_CACHE_HEADER",
    "SAS_CACHE_MAX_BYTES",
    "SAS_CACHE_MAX_ENTRIES",
    "SasCacheWarning",
    "sas_cache_dir",
    "entry_key",
    "entry_path",
    "read_entry",
    "sas_problem",
    "write_entry",
]
