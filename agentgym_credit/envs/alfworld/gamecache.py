"""Integrity of the compiled TextWorld games in the on-disk cache, checked before the native engine sees them.

Jericho (the Z-machine under TextWorld) exits the whole Python process from C on a story file it cannot
read ("Fatal error: Story file read error"): no exception, no ``finally``, a worker gone. So a cached game
is checked before it is loaded: the ``.z8`` against its own Z-machine header (length and checksum), and
the ``.z8`` and ``.json`` together against a tag keyed with the per-user cache secret
(:mod:`~agentgym_credit.envs.cachekey`) written when the game was compiled. A game that fails either check
is a warned miss (:class:`GameCacheWarning`) and is compiled again.

What lives here:

- :func:`z_machine_problem` — why bytes are not a complete Z-machine story file, or ``None``;
- :func:`game_problem` — why a cached game may not be loaded (damaged, truncated, untagged, forged), or
  ``None``; memoized per process by a hash of the files' contents;
- :func:`write_tag` — the tag file of a freshly compiled game;
- :class:`GameCacheWarning`.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from agentgym_credit.envs.cachekey import cache_tag, tag_matches

MAX_GAME_BYTES = 64 * 2**20
"""Largest ``.z8`` or ``.json`` read for the check (TextWorld's games are tens of kB)."""

_KIND = "agc-tw-game"
_VERIFIED: dict[bytes, None] = {}
_STAMPS: dict[tuple, bytes] = {}


class GameCacheWarning(UserWarning):
    """A cached game failed its check: it is ignored and compiled again."""


def z_machine_problem(data: bytes) -> str | None:
    """Why ``data`` is not a complete Z-machine story file (version 1-8), or ``None``: shorter than its
    header, an unknown version, shorter than the length its header states, or a checksum mismatch."""
    if len(data) < 64:
        return f"{len(data)} bytes, shorter than a Z-machine header"
    version = data[0]
    if not 1 <= version <= 8:
        return f"Z-machine version {version} (expected 1-8)"
    scale = 2 if version <= 3 else 4 if version <= 5 else 8
    length = int.from_bytes(data[0x1A:0x1C], "big") * scale
    if length > len(data):
        return f"truncated: its header says {length} bytes, the file has {len(data)}"
    checksum = int.from_bytes(data[0x1C:0x1E], "big")
    if length and checksum and sum(data[0x40:length]) % 65536 != checksum:
        return "its contents do not match the checksum in its header"
    return None


def _tag_path(z8: Path) -> Path:
    return z8.with_suffix(".tag")


def _read(path: Path) -> bytes:
    with open(path, "rb") as f:
        data = f.read(MAX_GAME_BYTES + 1)
    if len(data) > MAX_GAME_BYTES:
        raise ValueError(f"{path.name} is larger than {MAX_GAME_BYTES} bytes")
    return data


def _stamp(path: Path) -> tuple[int, int, int, int, int, int]:
    """What changes whenever a file's contents may have: device, inode, size, mtime and *ctime* (set by the
    kernel on every write or metadata change; unlike mtime, no system call sets it back)."""
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode


def _digest(ident: bytes, parts: list[bytes]) -> bytes:
    h = hashlib.blake2b(ident, digest_size=32, person=b"agc-tw-verified")
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.digest()


def game_problem(z8: Path, ident: bytes) -> str | None:
    """Why the cached game ``z8`` (with its ``.json`` and ``.tag`` beside it) may not be loaded, or
    ``None``; ``ident`` names what it was compiled from (challenge, settings, seed). The files are read
    and hashed unless their inode, size, mtime *and ctime* are those seen when they were last hashed: a game
    verified once is remembered by a hash of its contents (never by inode, size and mtime alone, which
    anyone who can write the file can put back; a write always moves ctime)."""
    files = [z8, z8.with_suffix(".json"), _tag_path(z8)]
    links = [p.name for p in files if p.is_symlink()]
    if links:  # the files read now need not be those jericho and textworld open later
        return f"{', '.join(links)} is a symlink (entries are regular files this package wrote)"
    try:
        stamp = (ident, *(_stamp(p) for p in files))
    except OSError:
        return "no tag (compiled by an older version)" if z8.is_file() else "missing"
    if _STAMPS.get(stamp) in _VERIFIED:  # unchanged since its contents were hashed (a write moves ctime)
        return None
    try:
        story, meta, tag = (_read(p) for p in files)
    except (OSError, ValueError) as exc:
        return f"unreadable ({exc})"
    key = _digest(ident, [story, meta, tag])
    if len(_STAMPS) > 4096:
        _STAMPS.clear()
    _STAMPS[stamp] = key
    if key in _VERIFIED:
        return None
    why = z_machine_problem(story)
    if why is not None:
        return why
    if not tag_matches(tag.strip(), _KIND, [ident, story, meta]):
        return "tag mismatch (a damaged file, or one not compiled by this package with this user's cache key)"
    if len(_VERIFIED) > 4096:
        _VERIFIED.clear()
    _VERIFIED[key] = None
    return None


def put(src: Path, dst: Path) -> None:
    """Move the file ``src`` to ``dst`` in one ``rename`` (same folder tree): a symlink at ``dst`` is replaced, never
    followed (a link to a directory made ``shutil.move`` write the game into that directory, issue 43 D6); a
    directory at ``dst`` is a ``RuntimeError`` naming it."""
    if dst.is_dir() and not dst.is_symlink():
        raise RuntimeError(f"TextWorld game cache entry {str(dst)!r} is a directory: remove it to have the game cached")
    os.replace(src, dst)


def write_tag(z8: Path, ident: bytes, target: Path | None = None) -> Path:
    """Write the tag of the compiled game ``z8`` (and its ``.json``) next to ``target`` (default: next to
    ``z8``); returns the tag file."""
    tag = cache_tag(_KIND, [ident, _read(z8), _read(z8.with_suffix(".json"))])
    out = _tag_path(target or z8)
    out.write_text(tag + "\n")
    return out


__all__ = ["GameCacheWarning", "MAX_GAME_BYTES", "game_problem", "put", "write_tag", "z_machine_problem"]
