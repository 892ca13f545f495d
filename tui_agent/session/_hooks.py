"""The person's hook commands from their files, and which of a project's hooks they trusted.

The person's own hooks are trusted: `[[hooks.EVENT]]` tables in `config.toml` (`matcher`,
`command`, `timeout`) and the `hooks` of Claude Code's `~/.claude/settings.json`. A project's
come with its repository and run only once the person trusted them (the start-up prompt;
headless: `--yolo` or an earlier answer): the `hooks` of `.claude/settings.json`,
`.claude/settings.local.json`, `.tui-agent/settings.json` and `.tui-agent/settings.local.json`,
in Claude Code's format:

    {"hooks": {"PreToolUse": [{"matcher": "Bash",
                               "hooks": [{"type": "command", "command": "...", "timeout": 30}]}]}}

Trust is kept per workspace and per hook (its file, event, matcher, command and timeout) in
`$TUI_AGENT_HOME/hook-trust.json`, so a changed hook asks again. A mistake in `config.toml` is
a `ConfigError`; one in a JSON file skips that hook with a problem that names the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop.userhooks import (
    DEFAULT_TIMEOUT_S,
    HOOK_EVENTS,
    HookEvent,
    HookSpec,
    matcher_problem,
)
from tui_agent.session._config import Config, ConfigError
from tui_agent.session._paths import USER_CLAUDE, AppPaths, claude_user_settings
from tui_agent.session._permissions import PROJECT_FILES
from tui_agent.session._trust import TrustFile, TrustLine, fingerprint

TRUST_FILE = "hook-trust.json"
_EVENTS: dict[str, HookEvent] = {event: event for event in HOOK_EVENTS}


@dataclass(frozen=True)
class HookSetup:
    specs: tuple[HookSpec, ...]
    problems: tuple[str, ...]  # what was skipped, for the person


class HookTrust:
    """The project hooks a person trusted, per workspace (`trust_all`: `--yolo`)."""

    def __init__(self, workspace: Path, *, trust_all: bool = False, file: Path | None = None):
        self._all = trust_all
        self._trusted = TrustFile(file or AppPaths.from_env().data_dir / TRUST_FILE, workspace)

    def trusted(self, spec: HookSpec) -> bool:
        return self._all or _fingerprint(spec) in self._trusted.known()

    def remember(self, specs: Iterable[HookSpec]) -> None:
        self._trusted.add(map(_fingerprint, specs))


def _fingerprint(spec: HookSpec) -> str:
    return fingerprint(spec.source, spec.event, spec.matcher, spec.command, str(spec.timeout_s))


def load_hooks(config: Config, config_file: Path, workspace: Path, trust: HookTrust) -> HookSetup:
    specs: list[HookSpec] = []
    for name, tables in config.hooks.items():
        for index, table in enumerate(tables):
            key = f"hooks.{name}[{index}]"
            problem = _problem(name, table.matcher)
            if problem is not None:
                raise ConfigError(f"{config_file}: {key}: {problem}", path=config_file, key=key)
            specs.append(
                HookSpec(
                    event=_EVENTS[name],
                    command=table.command,
                    matcher=table.matcher,
                    timeout_s=table.timeout or DEFAULT_TIMEOUT_S,
                )
            )
    problems: list[str] = []
    specs += _json_hooks(claude_user_settings(), USER_CLAUDE, False, problems)
    for name in PROJECT_FILES:
        for spec in _json_hooks(workspace / name, name, True, problems):
            specs.append(replace(spec, trusted=trust.trusted(spec)))
    return HookSetup(tuple(specs), tuple(problems))


def _problem(event: str, matcher: str) -> str | None:
    if event not in _EVENTS:
        return f"unknown hook event {event!r} (one of {', '.join(HOOK_EVENTS)})"
    return matcher_problem(matcher)


def _json_hooks(file: Path, source: str, project: bool, problems: list[str]) -> list[HookSpec]:
    try:
        data: Any = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        problems.append(f"{file}: cannot read it, so its hooks are skipped: {exc}")
        return []
    hooks = data.get("hooks", {}) if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        problems.append(f'{file}: "hooks" must be an object; its hooks are skipped')
        return []
    specs = []
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else [groups]:
            where = f"{file}: hooks.{event}"
            try:
                specs += _group(event, group, source, project)
            except ValueError as exc:
                problems.append(f"{where}: {exc} (skipped)")
    return specs


def _group(event: str, group: Any, source: str, project: bool) -> list[HookSpec]:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        raise ValueError('each entry must be {"matcher": ..., "hooks": [...]}')
    matcher = group.get("matcher") or ""
    problem = _problem(event, str(matcher))
    if problem is not None:
        raise ValueError(problem)
    specs = []
    for hook in group["hooks"]:
        if isinstance(hook, dict) and hook.get("type", "command") != "command":
            raise ValueError(f"hooks of type {hook['type']!r} are not supported, only commands")
        if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
            raise ValueError('each hook must be {"type": "command", "command": "..."}')
        timeout = hook.get("timeout")
        if timeout is not None and not (isinstance(timeout, int | float) and timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        specs.append(
            HookSpec(
                event=_EVENTS[event],
                command=hook["command"],
                matcher=str(matcher),
                timeout_s=float(timeout or DEFAULT_TIMEOUT_S),
                source=source,
                project=project,
                trusted=not project,
            )
        )
    return specs


class HookItems:
    """The project's hooks not trusted yet, as the start-up trust prompt lists them."""

    def __init__(self, specs: Sequence[HookSpec], trust: HookTrust) -> None:
        self._pending = [spec for spec in specs if not spec.runs]
        self._trust = trust

    def pending(self) -> list[TrustLine]:
        return [
            TrustLine(
                "hook",
                f"{spec.event}" + (f" ({spec.matcher})" if spec.matcher else ""),
                f"{spec.command}   [{spec.source}]",
            )
            for spec in self._pending
        ]

    def trust(self) -> None:
        self._trust.remember(self._pending)
