"""Permission rules from the person's and the project's files, which project rules the person
trusts, and writing an "always" answer into a file (or taking a rule out of one).

The person's own files are trusted: `[permissions]` in `config.toml` and Claude Code's
`~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json`). A project's files come with its
repository: `.tui-agent/settings.json`, `.tui-agent/settings.local.json`,
`.claude/settings.json`, `.claude/settings.local.json`, each `{"permissions": {"allow": [...],
"ask": [...], "deny": [...]}}`. Their deny and ask rules always apply; their allow rules only
once the person trusted them (asked at start in the app; headless: `--yolo` or an earlier
answer). Trust is kept per workspace and per rule (its file, effect and text) in
`$TUI_AGENT_HOME/permission-trust.json`, so a rule added to the project asks again. A bad rule
in `config.toml` is a `ConfigError`; one in a JSON file is skipped with a problem to show.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from tui_agent.lazy_dataclass import dataclass
from tui_agent.session._config import Config, ConfigError
from tui_agent.session._paths import USER_CLAUDE, AppPaths, claude_user_settings
from tui_agent.session._trust import TrustFile, fingerprint
from tui_agent.tools import EFFECTS, Rule, RuleError, parse_rule
from tui_agent.vocab import RuleScope

PROJECT_FILES = (
    ".tui-agent/settings.json",
    ".tui-agent/settings.local.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
)
LOCAL_FILE = ".tui-agent/settings.local.json"  # where "always, this project" writes
TRUST_FILE = "permission-trust.json"


@dataclass(frozen=True)
class PermissionSetup:
    rules: tuple[Rule, ...]
    problems: tuple[str, ...]  # what was skipped, for the person


def load_permissions(
    config: Config, config_file: Path, workspace: Path, trust: RuleTrust
) -> PermissionSetup:
    rules: list[Rule] = []
    problems: list[str] = []
    table = config.permissions
    for effect in EFFECTS:
        for index, text in enumerate(getattr(table, effect)):
            try:
                rules.append(parse_rule(text, effect, source="config.toml"))
            except RuleError as error:
                key = f"permissions.{effect}[{index}]"
                raise ConfigError(
                    f"{config_file}: {key}: {error}", path=config_file, key=key
                ) from None
    rules += _json_rules(claude_user_settings(), USER_CLAUDE, False, problems)
    for name in PROJECT_FILES:
        for rule in _json_rules(workspace / name, name, True, problems):
            rules.append(replace(rule, trusted=trust.trusted(rule)))
    return PermissionSetup(tuple(rules), tuple(problems))


def _json_rules(file: Path, source: str, project: bool, problems: list[str]) -> list[Rule]:
    try:
        data: Any = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        problems.append(f"{file}: cannot read it, so its permission rules are skipped: {exc}")
        return []
    permissions = data.get("permissions", {}) if isinstance(data, dict) else None
    if not isinstance(permissions, dict):
        problems.append(f'{file}: "permissions" must be an object; its rules are skipped')
        return []
    rules = []
    for effect in EFFECTS:
        texts = permissions.get(effect, [])
        if not isinstance(texts, list):
            problems.append(f"{file}: permissions.{effect} must be a list of rules; skipped")
            continue
        for text in texts:
            try:
                rules.append(parse_rule(str(text), effect, source=source, project=project))
            except RuleError as error:
                problems.append(f"{file}: permissions.{effect}: {error} (rule skipped)")
    return rules


class RuleTrust:
    """The project rules a person trusted, per workspace (`trust_all`: `--yolo`)."""

    def __init__(self, workspace: Path, *, trust_all: bool = False, file: Path | None = None):
        self._all = trust_all
        self._trusted = TrustFile(file or AppPaths.from_env().data_dir / TRUST_FILE, workspace)

    def trusted(self, rule: Rule) -> bool:
        return self._all or _fingerprint(rule) in self._trusted.known()

    def remember(self, rules: Iterable[Rule]) -> None:
        self._trusted.add(map(_fingerprint, rules))


def _fingerprint(rule: Rule) -> str:
    return fingerprint(rule.source, rule.effect, rule.text)


class RuleFiles:
    """Writes the rules an "always" answer keeps, and takes a rule out of its file."""

    def __init__(self, workspace: Path, config_file: Path, trust: RuleTrust) -> None:
        self._workspace = workspace
        self._config_file = config_file
        self._trust = trust

    @property
    def where(self) -> str:
        """For a headless denial: where a rule may be put."""
        return (
            f"under [permissions] allow in {self._config_file} (every project), or to "
            f'"permissions": {{"allow": [...]}} in {LOCAL_FILE} (this project, once trusted)'
        )

    def keep(self, scope: RuleScope, rules: tuple[str, ...]) -> None:
        if scope == "project":
            self._edit_json(self._workspace / LOCAL_FILE, "allow", add=rules)
            # The person chose these here: they need no trust prompt next time.
            self._trust.remember(parse_rule(r, source=LOCAL_FILE, project=True) for r in rules)
        elif scope == "user":
            self._edit_toml("allow", add=rules)

    def trust(self, rules: Iterable[Rule]) -> None:
        self._trust.remember(rules)

    def forget(self, rule: Rule) -> str | None:
        """Take `rule` out of its file; a problem to show, or None."""
        try:
            if rule.source == "config.toml":
                self._edit_toml(rule.effect, remove=rule.text)
            elif rule.source == USER_CLAUDE:
                self._edit_json(claude_user_settings(), rule.effect, remove=rule.text)
            elif rule.source in PROJECT_FILES:
                self._edit_json(self._workspace / rule.source, rule.effect, remove=rule.text)
        except (OSError, ValueError) as exc:
            return f"removed for this session, but {rule.source} could not be written: {exc}"
        return None

    def _edit_json(
        self, file: Path, effect: str, *, add: Iterable[str] = (), remove: str | None = None
    ) -> None:
        try:
            data: Any = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            data = {}
        if not isinstance(data, dict) or not isinstance(data.setdefault("permissions", {}), dict):
            raise ValueError(f"{file} does not hold a permissions object")
        rules = data["permissions"].setdefault(effect, [])
        rules.extend(rule for rule in add if rule not in rules)
        if remove is not None and remove in rules:
            rules.remove(remove)
        file.parent.mkdir(parents=True, exist_ok=True)
        _write_text(file, json.dumps(data, indent=2) + "\n")

    def _edit_toml(
        self, effect: str, *, add: Iterable[str] = (), remove: str | None = None
    ) -> None:
        # tomlkit keeps the person's comments and layout; only the one array changes. Imported
        # here: only saving a rule needs it, and it is a tenth of what a one-shot imports.
        import tomlkit

        try:
            document = tomlkit.parse(self._config_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            document = tomlkit.document()
        table = document.setdefault("permissions", tomlkit.table())
        rules = table.setdefault(effect, tomlkit.array())
        for rule in add:
            if rule not in rules:
                rules.append(rule)
        if remove is not None and remove in rules:
            rules.remove(remove)
        self._config_file.parent.mkdir(parents=True, exist_ok=True)
        _write_text(self._config_file, tomlkit.dumps(document))


def _write_text(file: Path, text: str) -> None:
    partial = file.with_name(file.name + ".tmp")
    partial.write_text(text, encoding="utf-8")
    partial.replace(file)
