"""API keys, held apart from the environment that tool processes inherit and can read.

A variable names a key when it is a provider's key variable (`OPENAI_API_KEY`,
`ANTHROPIC_API_KEY`), an `api_key_env` of config.toml, or matches a `secret_env` pattern
(default `*_API_KEY`, `*_TOKEN`, `*_SECRET`). Such variables are taken out of `os.environ`
and kept here (`lookup`), so no child process inherits them (`tool_environment`).

Removing a variable does not remove it from `/proc/<pid>/environ`, which shows the bytes of a
process's initial environment block (kept on its stack) for as long as it lives, and which any
command the agent runs can read as `/proc/$PPID/environ`. So `protect`, the command line's
first step, overwrites the key entries of that block with NUL bytes in place, on Linux, and
checks by reading `/proc/self/environ` back that no key value is left. Where that cannot be
done or checked (another system, a kernel that does not say where the block is), it
re-executes the process without them, carrying their values through an inherited pipe (read
and closed at once): a second interpreter start. On Linux it also marks the process
non-dumpable, so processes of the same user (not root) cannot read its memory, open files or
environment through /proc or ptrace. This runs before anything else is imported, so it keeps
to modules the interpreter has already loaded (no `re`, `json` or `pathlib`: a quarter of a
start-up between them) and `ctypes`, which the non-dumpable mark needs anyway.
"""

from __future__ import annotations

import os
import sys
from collections import ChainMap
from collections.abc import Iterable, Mapping

DEFAULT_SECRET_PATTERNS = ("*_API_KEY", "*_TOKEN", "*_SECRET")
PROVIDER_KEY_ENVS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
_CARRIER_ENV = "TUI_AGENT_KEYS_FD"
_CARRIED_MAX = 16 * 1024  # fits any pipe's buffer, so writing it before the exec never blocks
_PR_SET_DUMPABLE = 4

_names: frozenset[str] = frozenset(PROVIDER_KEY_ENVS)
_patterns: tuple[str, ...] = DEFAULT_SECRET_PATTERNS
_held: dict[str, str] = {}


def is_key(name: str) -> bool:
    return name in _names or any(_matches(name, pattern) for pattern in _patterns)


def _matches(name: str, pattern: str) -> bool:
    """Glob matching with `*` (any run of characters), case-sensitive as variable names are."""
    parts = pattern.split("*")
    if len(parts) == 1:
        return name == pattern
    head, tail = parts[0], parts[-1]
    if len(name) < len(head) + len(tail) or not name.startswith(head) or not name.endswith(tail):
        return False
    position, end = len(head), len(name) - len(tail)
    for middle in parts[1:-1]:
        found = name.find(middle, position, end)
        if found < 0:
            return False
        position = found + len(middle)
    return True


def configure(patterns: Iterable[str], names: Iterable[str] = ()) -> None:
    """Set what names a key (provider key variables always do) and take those out of the
    environment; `config.toml`'s `secret_env` and `api_key_env` values come here."""
    global _names, _patterns
    _names = frozenset({*PROVIDER_KEY_ENVS, *names})
    _patterns = tuple(patterns)
    for name in [name for name in os.environ if is_key(name)]:
        _held[name] = os.environ.pop(name)


def names() -> tuple[str, ...]:
    """The key variables known by name: those taken out of this environment and the provider
    and `api_key_env` ones, for a process someone else starts for us (`env -u` each)."""
    return tuple(sorted({*_names, *_held}))


def lookup(name: str) -> str | None:
    """A key's value (or any variable's), whether held here or still in the environment."""
    return _held.get(name) or os.environ.get(name) or None


def environ() -> Mapping[str, str]:
    """The environment as this process was given it, keys included."""
    return ChainMap(_held, os.environ)


def tool_environment() -> dict[str, str]:
    """The environment for a tool's process: everything except keys."""
    return {name: value for name, value in os.environ.items() if not is_key(name)}


def protect(config_file: str) -> None:
    """Hold the keys and, if the environment block had any, wipe them from it (or, where that
    cannot be done, re-execute without them).

    Returns in the process that goes on: this one once the block is clean (or held no key, or
    the exec failed, when the keys are at least out of `os.environ`), or the re-executed one."""
    carrier = os.environ.pop(_CARRIER_ENV, None)
    if carrier is None or not _adopt(carrier):
        patterns, names = _configured(config_file)
        configure(patterns, names)
        if _held and not _wipe_block():
            _reexec()
    _forbid_dumping()


def _configured(config_file: str) -> tuple[tuple[str, ...], list[str]]:
    """`secret_env` and every `api_key_env` from the raw file; a broken file yields the
    defaults here (the configuration loader reports it later with a proper message)."""
    try:
        with open(config_file, "rb") as handle:
            raw = handle.read()
    except OSError:
        return DEFAULT_SECRET_PATTERNS, []
    import tomllib  # only with a file to read: it costs more than the rest of this module

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return DEFAULT_SECRET_PATTERNS, []
    patterns = data.get("secret_env", DEFAULT_SECRET_PATTERNS)
    if not isinstance(patterns, list | tuple) or not all(isinstance(p, str) for p in patterns):
        patterns = DEFAULT_SECRET_PATTERNS
    providers = data.get("providers")
    names = [
        table["api_key_env"]
        for table in (providers.values() if isinstance(providers, dict) else ())
        if isinstance(table, dict) and isinstance(table.get("api_key_env"), str)
    ]
    return tuple(patterns), names


def _wipe_block() -> bool:
    """Overwrite every key entry of the initial environment block with NUL bytes; True once
    `/proc/self/environ` shows no held value. Only entries `os.environ.pop` has already taken
    out of the C library's `environ` are touched, so nothing still points at those bytes."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        with open("/proc/self/stat", "rb") as handle:
            # Fields 50 and 51 (Linux 3.5+) are where the block starts and ends; counting from
            # after the command name, which may hold spaces or parentheses of its own.
            fields = handle.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])
        if not 0 < start < end:
            return False
        block = ctypes.string_at(start, end - start)
        offset = 0
        for entry in block.split(b"\0"):
            name = entry.split(b"=", 1)[0].decode("utf-8", "surrogateescape")
            if name in _held:
                ctypes.memset(start + offset, 0, len(entry))
            offset += len(entry) + 1
        with open("/proc/self/environ", "rb") as handle:
            shown = handle.read()
    except (OSError, ValueError, IndexError):
        return False
    left = [
        value
        for value in _held.values()
        if value and value.encode(errors="surrogateescape") in shown
    ]
    return not left


def _reexec() -> None:
    # Variable names and values never hold a NUL byte: it separates the fields.
    fields = [str(len(_patterns)), *_patterns, str(len(_names)), *_names]
    for name, value in _held.items():
        fields += [name, value]
    payload = "\0".join(fields).encode("utf-8", "surrogateescape")
    if len(payload) > _CARRIED_MAX:
        return
    read, write = os.pipe()
    os.write(write, payload)
    os.close(write)
    os.set_inheritable(read, True)
    env = dict(os.environ)
    env[_CARRIER_ENV] = str(read)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)
    except OSError:
        os.close(read)


def _adopt(carrier: str) -> bool:
    """Take what `_reexec` sent; False (nothing taken) when the variable names no such pipe."""
    global _names, _patterns
    try:
        with os.fdopen(int(carrier), "rb") as pipe:
            fields = pipe.read().decode("utf-8", "surrogateescape").split("\0")
        count = int(fields[0])
        patterns = tuple(fields[1 : 1 + count])
        rest = fields[1 + count :]
        count = int(rest[0])
        names = frozenset(rest[1 : 1 + count])
        rest = rest[1 + count :]
        held = dict(zip(rest[::2], rest[1::2], strict=True))
    except (OSError, ValueError, IndexError):
        return False
    _patterns, _names = patterns, names
    _held.update(held)
    return True


def _forbid_dumping() -> None:
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass
