"""The Landlock launcher: restricts itself to the sandbox's filesystem rules, then runs the command.

`_sandbox` runs this file as `python -I -S _landlock.py SPEC bash -c COMMAND` where bubblewrap
cannot start. SPEC is JSON: `write` (folders the command may change: the workspace) and
`hide` (paths it may not read or change: the secrets). Everything else may be read and run;
writes go only to `write`, /tmp and the harmless devices. Landlock grants rights on whole
subtrees, so a folder on the way to a hidden path is granted entry by entry, all but the
hidden one (listing names stays allowed everywhere: only contents are hidden). Landlock also
keeps the command from reading the agent's /proc/<pid>/environ (no ptrace of an outer domain).
Any failure ends the launcher with status 126 before the command runs: never unsandboxed.
Standard library only, and nothing of ours: it starts in milliseconds.
"""

from __future__ import annotations

import ctypes
import json
import os
import stat
import sys
from collections.abc import Iterable

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same on every architecture
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
MAKE_SYM, REFER, TRUNCATE = 1 << 12, 1 << 13, 1 << 14
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE  # the rights a file (not folder) takes
_READ = EXECUTE | READ_FILE
# No MAKE_CHAR or MAKE_BLOCK: a device node made in the workspace would open the device itself.
_WRITE = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO
_WRITE |= MAKE_SYM | REFER | TRUNCATE
_DEVICES = (
    *("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts"),
    *("/dev/shm", "/dev/random", "/dev/urandom"),
)


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 where there is none (or it is disabled)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _libc().syscall(
            ctypes.c_long(_CREATE_RULESET), None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION
        )
    except (OSError, AttributeError):  # no C library to call through
        return 0
    return max(int(version), 0)


def _handled(abi: int) -> int:
    rights = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def cover(root: str, hidden: Iterable[str]) -> list[str]:
    """`root` as paths whose subtrees hold none of `hidden`: a folder on the way to a hidden
    path is replaced by its other entries (an unreadable folder's by nothing)."""
    hidden = list(hidden)
    if root in hidden:
        return []
    prefix = root.rstrip("/") + "/"
    inside = [path for path in hidden if path.startswith(prefix)]
    if not inside:
        return [root]
    try:
        entries = sorted(entry.path for entry in os.scandir(root))
    except OSError:
        return []
    return [path for entry in entries for path in cover(entry, inside)]


def _fail(message: str) -> None:
    sys.stderr.write(f"tui-agent sandbox (Landlock): {message}; the command did not run\n")
    sys.exit(126)


def restrict(abi: int, write: Iterable[str], hide: Iterable[str]) -> None:
    """Restrict this process (and what it executes) to the rules."""
    libc = _libc()
    handled = _handled(abi)
    attr = ctypes.c_uint64(handled)  # landlock_ruleset_attr's first field; older ABIs know no more
    ruleset = libc.syscall(
        ctypes.c_long(_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(8), 0
    )
    if ruleset < 0:
        _fail(f"cannot create a ruleset: {os.strerror(ctypes.get_errno())}")
    hide = list(hide)
    rules = [("/", READ_DIR)]
    rules += [(path, _READ) for path in cover("/", hide)]
    for root in (*write, "/tmp"):
        rules += [(path, _WRITE) for path in cover(root, hide)]
    rules += [(path, WRITE_FILE | TRUNCATE) for path in _DEVICES]
    for path, rights in rules:
        try:
            fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue  # gone meanwhile, or a device this machine lacks
        try:
            is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
            allowed = (rights if is_dir else rights & _FILE_RIGHTS) & handled
            beneath = _PathBeneath(allowed, fd)
            added = libc.syscall(
                ctypes.c_long(_ADD_RULE), ruleset, _RULE_PATH_BENEATH, ctypes.byref(beneath), 0
            )
            # A symlink (O_NOFOLLOW) takes no rule: what it points to is covered on its own.
            if added < 0 and not os.path.islink(path):
                _fail(f"cannot add a rule for {path}: {os.strerror(ctypes.get_errno())}")
        finally:
            os.close(fd)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _fail(f"cannot set no_new_privs: {os.strerror(ctypes.get_errno())}")
    if libc.syscall(ctypes.c_long(_RESTRICT_SELF), ruleset, 0) != 0:
        _fail(f"cannot restrict itself: {os.strerror(ctypes.get_errno())}")
    os.close(ruleset)


def main() -> None:
    try:
        spec = json.loads(sys.argv[1])
        command = sys.argv[2:]
        restrict(int(spec["abi"]), spec["write"], spec["hide"])
    except (IndexError, KeyError, ValueError, OSError) as exc:
        _fail(str(exc))
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        _fail(f"cannot run {command[0]}: {exc}")


if __name__ == "__main__":
    main()
