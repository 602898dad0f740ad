"""Env snapshots as data behind a keyed MAC: the byte format behind ``CreditEnv.get_state`` / ``set_state``.

A snapshot is bytes from a stranger until proven otherwise: it crosses process and disk boundaries
(branching sends it to any worker; a user may save it), so it is authenticated with a secret key and
then every field is checked. The format::

    b"agc-snapshot/2\\n" + tag (32 bytes) + body
    body = <env class name> \\n <config fingerprint> \\n <RNG state> \\n <kind: b"j" JSON | b"b" bytes> <payload>

``tag`` is keyed BLAKE2b-256 of the body (BLAKE2's keyed mode is a MAC, RFC 7693; it costs half of
HMAC-SHA256 here, which matters at one snapshot per step). The RNG state is the ``np_random`` bit
generator's (``PCG64 <state> <inc> <has_uint32> <uinteger>`` in hex, or ``J`` + JSON for the other
numpy bit generators, ``-`` for none); the payload is the env's own plain JSON data or its own bytes.

What lives here:

- the key: :func:`snapshot_key`, :func:`set_snapshot_key`, :data:`KEY_ENV`, :data:`MIN_KEY_CHARS`. Each
  process starts with a random key unless ``$AGENTGYM_CREDIT_SNAPSHOT_KEY`` gives one (read at the first
  snapshot, not at import: a weak one — under 16 characters, fewer than 8 distinct ones, or one block repeated; the same check for
  32 raw bytes given to :func:`set_snapshot_key` — is a
  :class:`~agentgym_credit.errors.SnapshotKeyError` there), so a snapshot restores only in the
  process that took it — or wherever the same key is set. The collector's subprocess and Ray backends
  hand their workers the parent's key; to restore a saved snapshot in another run, set the same key
  (environment variable or :func:`set_snapshot_key`) in both.
- :func:`seal` / :func:`open_snapshot` — write and check one snapshot; :func:`binding`, :func:`seal_bound`,
  :func:`open_bound` — the same with the env/config part computed once (what ``CreditEnv`` uses);
  :func:`pack` / :func:`unpack` — the same with the RNG state as numpy's dict (for wrappers and tools);
- :func:`rng_blob` / :func:`rng_state` — the RNG state to bytes and back, checked;
- :func:`inspect_snapshot` — read a snapshot's fields without trusting them (tools, tests);
- :class:`ConfigMemo`, :func:`config_fingerprint` — the configuration a snapshot is bound to;
- :func:`fields`, :func:`nat`, :func:`flag`, :func:`text`, :func:`texts` — checks of an env's payload fields
  (exact types: ``True`` is no int, ``"false"`` no bool), each failure a ``SnapshotError``;
- :data:`MAX_SNAPSHOT_BYTES`, :data:`MAX_JSON_DEPTH`, :data:`MAX_JSON_BYTES`, :data:`MAX_JSON_CONTAINERS`,
  :data:`MAX_JSON_ITEMS` — the size, nesting and count caps; :func:`load_json` parses within them and
  :func:`inflate` decompresses within a size cap checked while decompressing (the work a refusal costs is
  bounded before it is done).

:func:`open_snapshot` refuses with :class:`~agentgym_credit.errors.SnapshotError` (and nothing else)
anything that is not bytes, is larger than the cap, has another header, a tag that does not match
(corrupted, forged, or signed with another key), a body that does not parse, an RNG state that is not
a valid state of a numpy bit generator, JSON nested deeper than the cap, or was taken from another
env class or configuration. What it returns is authentic — made by this package with this key — but
an env still checks every field of its payload (type and range) and recomputes what can be derived
(state keys, ``won``, admissible actions, rewards) from its engine: a bug or an old key must not put an
env in a state its own steps could never reach.

Snapshots this process sealed or has checked once are remembered (:data:`MEMO_SIZE` of them, by their
exact bytes), so restoring one again (branching restores the snapshots it just took, and a worker restores
one it was sent many times) skips the MAC (and, for its own, the parsing); a different byte string is never
found there. Changing the key forgets them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import zlib
from typing import Any

import numpy as np

from agentgym_credit.envs.cachekey import weak_key_reason
from agentgym_credit.errors import SnapshotError, SnapshotKeyError

SNAPSHOT_HEADER = b"agc-snapshot/2"
"""Magic and version at the start of every snapshot (then a newline)."""
_MAGIC = SNAPSHOT_HEADER + b"\n"
_TAG_SIZE = 32
_MAGIC_LEN = len(_MAGIC)
_BODY_AT = _MAGIC_LEN + _TAG_SIZE

KEY_ENV = "AGENTGYM_CREDIT_SNAPSHOT_KEY"
"""Environment variable with the snapshot key (text, at least 16 characters); unset: a random key per process."""

MAX_SNAPSHOT_BYTES = 16 * 2**20
"""Largest snapshot :func:`seal` writes and :func:`open_snapshot` reads (ours are a few kB)."""

_MAX_BODY = MAX_SNAPSHOT_BYTES - _BODY_AT

MAX_JSON_DEPTH = 32
"""Deepest nesting of lists and dicts a JSON payload may have (ours have 3)."""

MAX_JSON_BYTES = 4 * 2**20
"""Largest JSON payload (or JSON field inside one) parsed (ours are a few kB; a TextWorld game's action log
at a thousand actions is ~0.6 MB)."""

MAX_JSON_CONTAINERS = 1 << 17
"""Most ``[`` and ``{`` bytes a JSON text may hold before it is parsed."""

MAX_JSON_ITEMS = 1 << 19
"""Most ``,`` and ``:`` bytes a JSON text may hold before it is parsed."""

MEMO_SIZE = 4096
"""Snapshots sealed by this process that restore without re-checking (the oldest forgotten first)."""

_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")
_PCG = ("PCG64", "PCG64DXSM")
_MEMO: list[dict[bytes, tuple[bytes, bytes, bytes, bytes, Any]]] = [{}, {}]
"""This process's own snapshots (newer and older generation): tag -> (snapshot, its parts)."""
_RNG_SEEN: dict[bytes, Any] = {}


MIN_KEY_CHARS = 16
"""Shortest snapshot key accepted (text or bytes)."""


def _check(raw: bytes, where: str) -> bytes:
    why = weak_key_reason(raw, MIN_KEY_CHARS)
    if why is not None:
        raise SnapshotKeyError(f"{where} {why}; use a random one, e.g. secrets.token_hex(16)")
    return raw


def _derive(key: bytes | str, where: str = "a snapshot key") -> bytes:
    raw = _check(key.encode() if isinstance(key, str) else bytes(key), where)
    return hashlib.blake2b(raw, digest_size=32, person=b"agc-snapshot").digest()


def _load_key() -> bytes:
    text = os.environ.get(KEY_ENV)
    return _derive(text, f"${KEY_ENV}") if text else secrets.token_bytes(32)


_KEY: bytes | None = None  # read from the environment at first use (a bad one must not break the import)
_MAC: Any = None


def _mac() -> Any:
    """The keyed MAC state, made at first use from ``$AGENTGYM_CREDIT_SNAPSHOT_KEY`` (or a random key);
    ``SnapshotKeyError`` there for a weak key (every later use raises it again until it is fixed)."""
    global _KEY, _MAC
    if _MAC is None:
        key = _load_key()
        _KEY, _MAC = key, hashlib.blake2b(key=key, digest_size=_TAG_SIZE)
    return _MAC


def snapshot_key() -> bytes:
    """The key this process signs and checks snapshots with (give it to another process to share them)."""
    _mac()
    return _KEY


def set_snapshot_key(key: bytes | str | None = None) -> bytes:
    """Sign and check snapshots with ``key`` from now on (``None``: a fresh random key); returns the key in
    use. Another key makes every earlier snapshot refused. A key returned by :func:`snapshot_key` is
    used as is; any other bytes or text (at least 16 bytes, not trivially weak: ``SnapshotKeyError``) are
    hashed into one."""
    global _KEY, _MAC
    if key is None:
        new = secrets.token_bytes(32)
    elif isinstance(key, (bytes, bytearray)) and len(key) == 32:
        new = _check(bytes(key), "a 32-byte snapshot key")  # raw bytes too: abcd... x8 is no key
    else:
        new = _derive(key)
    _KEY, _MAC = new, hashlib.blake2b(key=new, digest_size=_TAG_SIZE)
    _clear(True)
    return _KEY


def _tag(body: bytes) -> bytes:
    h = (_MAC or _mac()).copy()
    h.update(body)
    return h.digest()


# -- configuration -----------------------------------------------------------------------------------
def config_fingerprint(config: Any) -> str:
    """A stable hex fingerprint of an env configuration given as plain data."""
    try:
        text = json.dumps(config, sort_keys=True, separators=(",", ":"), allow_nan=True)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"an env's snapshot config must be plain JSON data: {exc}") from exc
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


class ConfigMemo:
    """:func:`config_fingerprint` memoized for one owner: recomputed only when the configuration it is
    given differs from the last one (a snapshot per step hashes the same configuration over and over)."""

    __slots__ = ("_config", "_fingerprint")

    def __init__(self) -> None:
        self._config: Any = None
        self._fingerprint: str | None = None

    def __call__(self, config: Any) -> str:
        if self._fingerprint is None or config != self._config:
            self._fingerprint = config_fingerprint(config)
            self._config = config
        return self._fingerprint


# -- RNG state ---------------------------------------------------------------------------------------
def rng_blob(state: Any) -> bytes:
    """A numpy bit generator's ``state`` dict (or ``None``) as the bytes a snapshot holds."""
    if state is None:
        return b"-"
    name = state.get("bit_generator")
    if name in _PCG:
        s = state["state"]
        return f"{name} {s['state']:x} {s['inc']:x} {int(state['has_uint32'])} {state['uinteger']:x}".encode()
    return b"J" + json.dumps(state, separators=(",", ":"), default=_plain_array).encode()


def _plain_array(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"not JSON data: {type(x).__name__}")


def _hex(text: bytes, bits: int) -> int:
    if not 0 < len(text) <= bits // 4 or not all(c in b"0123456789abcdef" for c in text):
        raise SnapshotError(f"snapshot RNG state has a bad {bits}-bit number")
    return int(text, 16)


def rng_state(blob: bytes) -> dict[str, Any] | None:
    """The bit generator state a snapshot's RNG bytes hold, checked: a numpy bit generator's name and
    numbers it accepts, or :class:`SnapshotError` (never numpy's ``TypeError``/``ValueError``). Memoized
    by the exact bytes (an episode's snapshots often share one RNG state); do not change the dict."""
    state = _RNG_SEEN.get(blob)
    if state is None:
        state = _parse_rng(blob)
        if len(_RNG_SEEN) >= MEMO_SIZE:
            _RNG_SEEN.clear()
        _RNG_SEEN[blob] = state
    return state


def _parse_rng(blob: bytes) -> dict[str, Any] | None:
    if blob == b"-":
        return None
    if blob[:1] == b"J":
        state = load_json(blob[1:], "snapshot RNG state")
        name = state.get("bit_generator") if isinstance(state, dict) else None
        if name not in _BIT_GENERATORS:
            raise SnapshotError(f"snapshot RNG state names no numpy bit generator ({name!r:.40})")
        try:  # the only complete check of another generator's state is numpy's own
            getattr(np.random, name)().state = state
        except Exception as exc:  # noqa: BLE001  (numpy raises TypeError, ValueError, OverflowError, KeyError)
            raise SnapshotError(f"snapshot RNG state is not a valid {name} state: {type(exc).__name__}: {exc}") from None
        return state
    parts = blob.split(b" ")
    if len(parts) != 5 or parts[0].decode("ascii", "replace") not in _PCG or parts[3] not in (b"0", b"1"):
        raise SnapshotError(f"snapshot RNG state is malformed: {blob[:80]!r}")
    inc = _hex(parts[2], 128)
    if not inc & 1:
        raise SnapshotError("snapshot RNG state has an even PCG increment (not a state numpy makes)")
    return {"bit_generator": parts[0].decode(), "state": {"state": _hex(parts[1], 128), "inc": inc},
            "has_uint32": int(parts[3]), "uinteger": _hex(parts[4], 32)}


# -- payload -----------------------------------------------------------------------------------------
def _depth_ok(x: Any, depth: int) -> bool:
    """No list or dict of ``x`` (parsed JSON: exact ``dict``/``list`` classes) sits more than ``depth`` deep; only
    containers are visited (a TextWorld action log holds thousands of strings: 3x faster than a call per value)."""
    kind = x.__class__
    if kind is dict:
        x = x.values()
    elif kind is not list:
        return True
    if depth <= 0:
        return False
    depth -= 1
    for v in x:
        if (v.__class__ is dict or v.__class__ is list) and not _depth_ok(v, depth):
            return False
    return True


def _encode(env_name: str, payload: Any) -> tuple[bytes, bytes]:
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return b"b", bytes(payload)
    try:
        return b"j", json.dumps(payload, separators=(",", ":"), allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{env_name} snapshot payload is not plain JSON data (no NaN/inf either): {exc}") from exc


def load_json(raw: bytes | str, what: str = "snapshot payload") -> Any:
    """Parse JSON from a snapshot within a budget fixed before any work: at most :data:`MAX_JSON_BYTES`
    bytes, :data:`MAX_JSON_CONTAINERS` lists and dicts and :data:`MAX_JSON_ITEMS` separators (counted in C
    over the bytes, strings included, before parsing), nested at most :data:`MAX_JSON_DEPTH` deep; anything
    else is ``SnapshotError``. What it bounds: a refusal's time and memory (16 MiB of small nested lists
    took 5 s and +266 MiB to parse and walk before this)."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if len(data) > MAX_JSON_BYTES:
        raise SnapshotError(f"{what}: {len(data)} bytes of JSON, over MAX_JSON_BYTES={MAX_JSON_BYTES}")
    if data.count(b"[") + data.count(b"{") > MAX_JSON_CONTAINERS:
        raise SnapshotError(f"{what}: more than MAX_JSON_CONTAINERS={MAX_JSON_CONTAINERS} lists and dicts")
    if data.count(b",") + data.count(b":") > MAX_JSON_ITEMS:
        raise SnapshotError(f"{what}: more than MAX_JSON_ITEMS={MAX_JSON_ITEMS} items")
    try:
        payload = json.loads(data)
    except RecursionError:
        raise SnapshotError(f"{what} is nested deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:  # also UnicodeDecodeError, and ints past Python's digit limit
        raise SnapshotError(f"{what} is not valid JSON: {exc}") from None
    if not _depth_ok(payload, MAX_JSON_DEPTH):
        raise SnapshotError(f"{what} is nested deeper than {MAX_JSON_DEPTH} levels")
    return payload


def _decode(kind: bytes, raw: bytes) -> Any:
    if kind == b"b":
        return raw
    if kind != b"j":
        raise SnapshotError(f"snapshot payload has an unknown kind {kind!r}")
    return load_json(raw)


def inflate(data: bytes, limit: int, what: str) -> bytes:
    """zlib-decompress ``data`` into at most ``limit`` bytes, stopping as soon as the output would pass it
    (checked while decompressing: a zip bomb costs at most ``limit`` bytes of work and memory); anything
    longer, truncated or not zlib data is ``SnapshotError``."""
    d = zlib.decompressobj()
    try:
        out = d.decompress(data, limit + 1)
    except zlib.error as exc:
        raise SnapshotError(f"{what} is not zlib data ({exc})") from None
    if len(out) > limit or d.unconsumed_tail:
        raise SnapshotError(f"{what} decompresses to more than {limit} bytes")
    if not d.eof:
        raise SnapshotError(f"{what} is truncated zlib data")
    return out


# -- seal / open -------------------------------------------------------------------------------------
def binding(env_name: str, config: str) -> bytes:
    """The start of the body of every snapshot of ``env_name`` with ``config`` (what a snapshot is bound to;
    an env computes it once per configuration)."""
    name, cfg = env_name.encode(), config.encode()
    if b"\n" in name or b"\n" in cfg:
        raise ValueError("a snapshot's env name and config are one line each")
    return name + b"\n" + cfg + b"\n"


def seal_bound(prefix: bytes, rng: bytes, payload: Any, memo: Any = None) -> bytes:
    """:func:`seal` with the :func:`binding` computed beforehand. ``memo`` (byte payloads only): what
    :func:`open_bound` returns instead of the bytes when this very snapshot comes back to this process
    (an env's already checked, immutable form of its state)."""
    if payload.__class__ is bytes:
        body = b"".join((prefix, rng, b"\nb", payload))
        kind, raw = b"b", payload
    else:
        kind, raw = _encode(prefix.split(b"\n", 1)[0].decode(), payload)
        body, memo = prefix + rng + b"\n" + kind + raw, None
    if len(body) > _MAX_BODY:
        raise SnapshotError(f"snapshot would be {len(body) + _BODY_AT} bytes, over MAX_SNAPSHOT_BYTES")
    h = (_MAC or _mac()).copy()
    h.update(body)
    tag = h.digest()
    snap = b"".join((_MAGIC, tag, body))
    _memo_put(tag, (snap, prefix, rng, kind, raw if memo is None else memo))  # by tag: 32 bytes to hash, not all
    return snap


def _memo_put(tag: bytes, entry: tuple) -> None:
    table = _MEMO[0]
    table[tag] = entry
    if len(table) >= MEMO_SIZE // 2:  # two generations: the older half is dropped whole (O(1) a snapshot)
        _MEMO[1], _MEMO[0] = table, {}


def seal(env_name: str, config: str, rng: bytes, payload: Any) -> bytes:
    """One snapshot: ``rng`` as :func:`rng_blob` bytes, ``payload`` the env's JSON data or bytes."""
    if b"\n" in rng:
        raise ValueError("a snapshot's RNG state is one line")
    return seal_bound(binding(env_name, config), rng, payload)


def clear_memo() -> None:
    """Forget the snapshots this process sealed: restoring one checks it as if it came from elsewhere
    (also every memo registered with :func:`on_clear_memo`)."""
    _clear(False)


def _clear(key_changed: bool) -> None:
    _MEMO[0], _MEMO[1] = {}, {}
    for hook in _CLEAR_HOOKS:
        hook(key_changed)


_CLEAR_HOOKS: list[Any] = []


def on_clear_memo(hook: Any) -> None:
    """Call ``hook(key_changed)`` whenever this process's memo is forgotten: by :func:`clear_memo`
    (``key_changed=False``) or by a new key (:func:`set_snapshot_key`, ``True``). An env that keeps its own
    memo of the snapshots it sealed forgets it then, and MAC states under the old key (:func:`keyed_mac`) on
    a new key."""
    _CLEAR_HOOKS.append(hook)


def keyed_mac() -> Any:
    """A fresh keyed BLAKE2b-256 state under this process's key: ``tag = mac.update(body); mac.digest()``. An
    env that seals many snapshots with one body start absorbs that start once and copies the state (the tag
    is the same as :func:`seal_bound`'s); it must forget such states on :func:`on_clear_memo`."""
    return (_MAC or _mac()).copy()


def magic() -> bytes:
    """The bytes before a snapshot's tag (the tag is :data:`TAG_SIZE` bytes, then the body)."""
    return _MAGIC


TAG_SIZE = _TAG_SIZE
"""Bytes of a snapshot's tag."""


def _split(snapshot: Any) -> tuple[bytes, bytes, bytes, bytes]:
    """Check the header, size and tag; the body's ``(binding, rng, kind, payload)`` bytes."""
    if isinstance(snapshot, (bytearray, memoryview)):
        snapshot = bytes(snapshot)
    if not isinstance(snapshot, bytes):
        raise SnapshotError(f"a snapshot is the bytes get_state() returned, got {type(snapshot).__name__}")
    if len(snapshot) > MAX_SNAPSHOT_BYTES:
        raise SnapshotError(f"snapshot is {len(snapshot)} bytes, over MAX_SNAPSHOT_BYTES={MAX_SNAPSHOT_BYTES}")
    if not snapshot.startswith(_MAGIC):
        old = snapshot.startswith(b"agc-snapshot/")
        raise SnapshotError("snapshot of an older format: take it again with this version" if old else
                            f"not an agentgym-credit snapshot (expected a {SNAPSHOT_HEADER.decode()} header)")
    body = snapshot[_BODY_AT:]
    if len(snapshot) < _BODY_AT or not hmac.compare_digest(snapshot[len(_MAGIC):_BODY_AT], _tag(body)):
        raise SnapshotError(
            "snapshot is corrupted or forged: its tag does not match its contents under this process's key "
            f"(a snapshot from another process or run restores only with the same key: ${KEY_ENV} or "
            "agentgym_credit.envs.snapshot.set_snapshot_key)"
        )
    parts = body.split(b"\n", 3)
    if len(parts) != 4 or not parts[3]:
        raise SnapshotError("snapshot body lacks env/config/rng/payload")
    name, cfg, rng, rest = parts
    return name + b"\n" + cfg + b"\n", rng, rest[:1], rest[1:]


def open_bound(snapshot: Any, prefix: bytes) -> tuple[bytes, Any]:
    """:func:`open_snapshot` with the :func:`binding` computed beforehand."""
    if snapshot.__class__ is bytes:
        tag = snapshot[_MAGIC_LEN:_BODY_AT]
        hit = _MEMO[0].get(tag) or _MEMO[1].get(tag)
        if hit is not None and hit[0] == snapshot and hit[1] == prefix:  # sealed here: checked when it was made
            return hit[2], (hit[4] if hit[3] == b"b" else _decode(hit[3], hit[4]))
    got, rng, kind, raw = _split(snapshot)
    if got != prefix:
        name, cfg, _ = got.split(b"\n", 2)
        env_name, _, _ = prefix.split(b"\n", 2)
        if name != env_name:
            raise SnapshotError(f"snapshot was taken from {name.decode(errors='replace')[:80]}, not {env_name.decode()}")
        raise SnapshotError(
            f"snapshot was taken from a {env_name.decode()} with another configuration; restore it into an env "
            "made with the same arguments"
        )
    rng_state(rng)
    value = raw if kind == b"b" else _decode(kind, raw)
    if snapshot.__class__ is bytes:  # checked once: a second restore of it (branching restores one many times) skips the MAC
        _memo_put(snapshot[_MAGIC_LEN:_BODY_AT], (snapshot, prefix, rng, kind, raw))
    return rng, value


def open_snapshot(snapshot: Any, env_name: str, config: str) -> tuple[bytes, Any]:
    """Check a snapshot taken by ``env_name`` with ``config``; return ``(RNG bytes, payload)``: the RNG
    bytes already checked (:func:`rng_state` of them is memoized), JSON payloads freshly parsed (the
    caller may keep and change them), byte payloads as they are (or, for a snapshot this process sealed
    with a ``memo``, that object)."""
    return open_bound(snapshot, binding(env_name, config))


# -- field checks for an env's payload ----------------------------------------------------------------
def fields(payload: Any, what: str, keys: frozenset[str] | set[str]) -> dict[str, Any]:
    """``payload`` as a dict with exactly ``keys`` (``what`` names the env in the error)."""
    if not isinstance(payload, dict) or payload.keys() != set(keys):
        got = sorted(payload)[:20] if isinstance(payload, dict) else type(payload).__name__
        raise SnapshotError(f"{what} snapshot payload must have exactly the fields {sorted(keys)}, got {got}")
    return payload


def nat(value: Any, what: str, below: int | None = None) -> int:
    """An ``int`` (not a ``bool``) in ``[0, below)``."""
    if value.__class__ is not int or value < 0 or (below is not None and value >= below):
        bound = "" if below is None else f" below {below}"
        raise SnapshotError(f"snapshot payload: {what} must be an int >= 0{bound}, got {value!r:.40}")
    return value


def flag(value: Any, what: str) -> bool:
    """A real ``bool`` (``"false"``, ``0`` or ``None`` are refused, not read as truth values)."""
    if value.__class__ is not bool:
        raise SnapshotError(f"snapshot payload: {what} must be true or false, got {value!r:.40}")
    return value


def text(value: Any, what: str, max_len: int = 10_000, optional: bool = False) -> str | None:
    """A ``str`` of at most ``max_len`` characters (or ``None`` when ``optional``)."""
    if value is None and optional:
        return None
    if value.__class__ is not str or len(value) > max_len:
        raise SnapshotError(f"snapshot payload: {what} must be text of at most {max_len} characters, got "
                            f"{type(value).__name__} {value!r:.40}")
    return value


def texts(value: Any, what: str, max_items: int, max_len: int = 10_000) -> list[str]:
    """A list of at most ``max_items`` texts (a fresh list)."""
    if value.__class__ is not list or len(value) > max_items:
        raise SnapshotError(f"snapshot payload: {what} must be a list of at most {max_items} texts")
    return [text(v, what, max_len) for v in value]


def pack(env_name: str, config: str, rng_state: Any, payload: Any) -> bytes:
    """:func:`seal` with the RNG state as numpy's ``bit_generator.state`` dict (or ``None``)."""
    return seal(env_name, config, rng_blob(rng_state), payload)


def unpack(snapshot: Any, env_name: str, config: str) -> tuple[Any, Any]:
    """:func:`open_snapshot` with the RNG state as numpy's dict (or ``None``): ``(rng_state, payload)``."""
    rng, payload = open_snapshot(snapshot, env_name, config)
    return rng_state(rng), payload


def inspect_snapshot(snapshot: bytes) -> dict[str, Any]:
    """A snapshot's fields *without* checking its tag (for tools and tests that build foreign or forged
    snapshots): ``{"env", "config", "rng" (state dict), "payload", "kind"}``; ``SnapshotError`` if it
    does not even parse."""
    if not isinstance(snapshot, bytes) or not snapshot.startswith(_MAGIC):
        raise SnapshotError("not an agentgym-credit snapshot")
    parts = snapshot[_BODY_AT:].split(b"\n", 3)
    if len(parts) != 4 or not parts[3]:
        raise SnapshotError("snapshot body lacks env/config/rng/payload")
    name, cfg, rng, rest = parts
    return {"env": name.decode(), "config": cfg.decode(), "rng": rng_state(rng), "kind": rest[:1].decode(),
            "payload": _decode(rest[:1], rest[1:])}


__all__ = [
    "KEY_ENV",
    "MIN_KEY_CHARS",
    "binding",
    "clear_memo",
    "keyed_mac",
    "magic",
    "on_clear_memo",
    "TAG_SIZE",
    "open_bound",
    "seal_bound",
    "MAX_JSON_BYTES",
    "MAX_JSON_CONTAINERS",
    "MAX_JSON_DEPTH",
    "MAX_JSON_ITEMS",
    "inflate",
    "load_json",
    "MAX_SNAPSHOT_BYTES",
    "MEMO_SIZE",
    "SNAPSHOT_HEADER",
    "ConfigMemo",
    "config_fingerprint",
    "fields",
    "flag",
    "nat",
    "text",
    "texts",
    "inspect_snapshot",
    "open_snapshot",
    "pack",
    "rng_blob",
    "rng_state",
    "seal",
    "set_snapshot_key",
    "snapshot_key",
    "unpack",
]
