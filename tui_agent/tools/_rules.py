"""Permission rules: what people write to allow, ask about or deny tool calls, and how a call is
judged against them.

A rule is written in Claude Code's syntax or ours, and both name the same tools:

    Bash(npm run test:*)   shell commands starting with the words "npm run test"
    Bash(git diff)         exactly that command; `*` anywhere is a wildcard: Bash(git * --help)
    Read(./.env)           read_file of that path (gitignore-style: `src/**`, `*.pem`; `./x` and
                           `/x` from the workspace root, `//x` absolute, `~/x` in the home folder)
    Edit(src/**)           edit_file and write_file under src/;  Write(...) write_file only
    WebFetch(domain:x.com) web_fetch of that host (`domain:*.x.com`: its subdomains)
    WebSearch              web_search (offered when a search service is configured)
    mcp__git               every tool of the MCP server "git";  mcp__git__status one of them
    shell(git status:*), read_file(...)      our own tool names, same forms
    "shell: git status", "edit_file", "mcp__git__*"   the older forms, still read

A shell command is split into its simple commands with a real shell parser (tree-sitter-bash):
`a && b`, `a; b`, `a | b`, `$(b)` and backquotes each count, and so does a redirection that
writes a file (`> out`: no command's rule allows it). A call is denied when any part is
denied, asked about when any part matches an ask rule, and allowed by the rules only when every
part is allowed. A command the parser cannot read is asked about. Deny rules win over every mode
(yolo included); the approvals (`_approvals.py`) apply the mode after the rules.

Rules from a project's files come with the repository: its `allow` rules count only once the
person trusts them (`Rule.trusted`); its `deny` and `ask` rules always count.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from tui_agent.lazy_dataclass import dataclass

if TYPE_CHECKING:
    import pathspec
    from tree_sitter import Node, Parser

    from tui_agent.tools._base import Tool
    from tui_agent.vocab import RuleScope

Effect = Literal["allow", "ask", "deny"]
EFFECTS: tuple[Effect, ...] = ("allow", "ask", "deny")

# Claude Code's tool names and the tools of ours each one covers.
CLAUDE_TOOLS: dict[str, tuple[str, ...]] = {
    "Bash": ("shell",),
    "Read": ("read_file",),
    "Edit": ("edit_file", "write_file"),
    "MultiEdit": ("edit_file",),
    "Write": ("write_file",),
    "Grep": ("grep",),
    "Glob": ("glob",),
    "WebFetch": ("web_fetch",),
    "WebSearch": ("web_search",),
    "Task": ("task",),
    "TodoWrite": ("todo_write",),
}

_CALL_FORM = re.compile(r"^([A-Za-z_][A-Za-z0-9_*-]*)\((.*)\)$", re.DOTALL)
_NAME = re.compile(r"^[A-Za-z_*][A-Za-z0-9_*-]*$")


class RuleError(ValueError):
    """A rule that cannot be read; the message says why, for the file's author."""


@dataclass(frozen=True)
class Rule:
    effect: Effect
    text: str  # as written
    tools: tuple[str, ...]  # the tool names (or `*` globs over them) it covers
    pattern: str | None  # what it matches in a call; None: every call of those tools
    source: str = "session"  # where it was found, for /permissions and messages
    project: bool = False  # came with the repository
    trusted: bool = True  # a project's allow rule counts only once trusted

    @property
    def counts(self) -> bool:
        return self.effect != "allow" or not self.project or self.trusted

    def covers(self, tool_name: str) -> bool:
        return any(name == tool_name or fnmatch.fnmatchcase(tool_name, name) for name in self.tools)

    def matches(self, tool: Tool[Any], args: Any) -> bool:
        return self.covers(tool.name) and (
            self.pattern is None or tool.matches_rule(self.pattern, args)
        )


def parse_rule(
    text: str, effect: Effect = "allow", *, source: str = "session", project: bool = False
) -> Rule:
    """Read one rule in any of the forms the module docstring lists; `RuleError` if none."""
    written = text.strip()
    if not written:
        raise RuleError("an empty rule")
    tools: tuple[str, ...]
    pattern: str | None
    if call := _CALL_FORM.match(written):
        name, inner = call.group(1), call.group(2).strip()
        tools = _tool_names(name)
        pattern = None if inner in ("", "*") else inner
    elif ":" in written and _NAME.match(written.partition(":")[0].strip()):
        # The older "shell: git status" form: a shell rule is a prefix of words.
        name, _, inner = written.partition(":")
        tools = _tool_names(name.strip())
        inner = inner.strip()
        pattern = None if not inner else (f"{inner}:*" if tools == ("shell",) else inner)
    elif _NAME.match(written):
        tools = _tool_names(written)
        pattern = None
    else:
        raise RuleError(f"cannot read the rule {written!r} (e.g. Bash(git diff:*), Edit(src/**))")
    return Rule(effect, written, tools, pattern, source, project, trusted=not project)


def _tool_names(name: str) -> tuple[str, ...]:
    if name in CLAUDE_TOOLS:
        return CLAUDE_TOOLS[name]
    if name.startswith("mcp__") and name.count("__") == 1:
        return (f"{name}__*",)  # a whole server
    return (name,)


class RuleStore(Protocol):
    """The files rules live in (the session layer's): where "always" keeps a rule, how a rule
    leaves its file, and the project rules the person trusts."""

    @property
    def where(self) -> str:
        """For a headless denial: where the person may put a rule."""
        ...

    def keep(self, scope: RuleScope, rules: tuple[str, ...]) -> None: ...

    def forget(self, rule: Rule) -> str | None: ...

    def trust(self, rules: Iterable[Rule]) -> None: ...


@dataclass(frozen=True)
class Verdict:
    """What the rules say about one call: an effect (None: they say nothing) and the rule."""

    effect: Effect | None
    rule: Rule | None = None
    unreadable: bool = False  # a shell command the parser could not read


class Ruleset:
    """The rules in force, in the order they were found; session rules are added at the end."""

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        self._rules: list[Rule] = []
        for rule in rules:
            self.add(rule)

    @property
    def rules(self) -> tuple[Rule, ...]:
        return tuple(self._rules)

    def add(self, rule: Rule) -> None:
        if not any(r.text == rule.text and r.effect == rule.effect for r in self._rules):
            self._rules.append(rule)

    def remove(self, rule: Rule) -> None:
        self._rules = [r for r in self._rules if r != rule]

    def trust(self, rules: Iterable[Rule]) -> None:
        chosen = set(rules)
        self._rules = [replace(r, trusted=True) if r in chosen else r for r in self._rules]

    def untrusted(self) -> tuple[Rule, ...]:
        return tuple(r for r in self._rules if not r.counts)

    def decide(self, tool: Tool[Any], args: Any, *, trusting: bool = False) -> Verdict:
        """`trusting`: as if the project's allow rules were trusted (should the person be asked
        to trust them?)."""
        active = [r for r in self._rules if (r.counts or trusting) and r.covers(tool.name)]
        subjects = tool.rule_subjects(args)
        if subjects is None:
            # Unreadable: a deny rule that matches the whole text still denies; nothing allows.
            denied = next((r for r in active if r.effect == "deny" and r.matches(tool, args)), None)
            return Verdict("deny", denied) if denied else Verdict("ask", unreadable=True)
        for effect in ("deny", "ask"):
            for subject in subjects:
                rule = next(
                    (r for r in active if r.effect == effect and r.matches(tool, subject)), None
                )
                if rule is not None:
                    return Verdict(effect, rule)
        allows = [self._allowing(active, tool, subject) for subject in subjects]
        if allows and all(rule is not None for rule in allows):
            return Verdict("allow", allows[0])
        return Verdict(None)

    def suggestions(self, tool: Tool[Any], args: Any) -> tuple[str, ...]:
        """The rules an "always" answer would add: one for each part not yet allowed."""
        subjects = tool.rule_subjects(args)
        if subjects is None:
            return ()  # no rule can allow a command nobody can read
        active = [rule for rule in self._rules if rule.counts and rule.covers(tool.name)]
        wanted: list[str] = []
        for subject in subjects:
            if self._allowing(active, tool, subject) is None:
                rule = tool.approval_rule(subject)
                if rule not in wanted:
                    wanted.append(rule)
        return tuple(wanted)

    @staticmethod
    def _allowing(active: Sequence[Rule], tool: Tool[Any], subject: Any) -> Rule | None:
        return next((r for r in active if r.effect == "allow" and r.matches(tool, subject)), None)


# ------------------------------------------------------------------ shell commands


def command_parts(command: str) -> tuple[str, ...] | None:
    """The simple commands in `command` (`a && b | c; $(d)` gives four), or None when the
    shell parser cannot read it. A command with no simple command in it (a bare assignment,
    a comment) is its own single part."""
    source = command.encode()
    tree = _bash_parser().parse(source)
    if tree.root_node.has_error:
        return None
    parts: list[str] = []
    _collect_commands(tree.root_node, source, parts)
    return tuple(parts) if parts else (command.strip(),)


def _collect_commands(node: Node, source: bytes, parts: list[str]) -> None:
    if node.type == "command":
        parts.append(_text(node, source))
    elif node.type == "file_redirect" and _writes_file(node, source):
        # Writing a file is a part of its own ("> ~/.bashrc"): a rule for the command does not
        # allow it, so `git status > ~/.bashrc` asks even where `git status` is allowed.
        parts.append(_text(node, source))
    for child in node.children:
        _collect_commands(child, source, parts)


_WRITING = frozenset((">", ">>", "&>", "&>>", ">|"))


def _writes_file(redirect: Node, source: bytes) -> bool:
    operators = {child.type for child in redirect.children}
    destination = redirect.child_by_field_name("destination")
    target = _text(destination, source) if destination is not None else ""
    return bool(operators & _WRITING) and target != "/dev/null"


def _text(node: Node, source: bytes) -> str:
    return " ".join(source[node.start_byte : node.end_byte].decode(errors="replace").split())


@cache
def _bash_parser() -> Parser:
    # Loaded on the first shell rule check: start-up and runs without shell calls never pay.
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def shell_rule_matches(pattern: str, command: str) -> bool:
    """One simple command against a shell rule's pattern: `words:*` a prefix of whole words,
    a pattern with `*` a wildcard match, anything else the exact command (spacing aside)."""
    words = command.split()
    if pattern.endswith(":*"):
        expected = pattern[:-2].split()
        return bool(expected) and words[: len(expected)] == expected
    if "*" in pattern:
        return fnmatch.fnmatchcase(" ".join(words), " ".join(pattern.split()))
    return words == pattern.split()


# ------------------------------------------------------------------ paths


def path_rule_matches(pattern: str, path: str, root: Path) -> bool:
    """A file rule's pattern against a path a tool was given (relative to `root`, the
    workspace). Gitignore-style: `./x` and `/x` from the root, `//x` absolute, `~/x` in the
    home folder, a bare name anywhere below the root."""
    target = os.path.normpath(os.path.join(root, os.path.expanduser(path)))
    if pattern.startswith("//"):
        base, spec = "/", pattern[1:]
    elif pattern.startswith("~/"):
        base, spec = str(Path.home()), pattern[1:]
    else:
        base = str(root)
        spec = pattern[1:] if pattern.startswith("./") else pattern
    relative = os.path.relpath(target, base)
    if relative == ".." or relative.startswith(".." + os.sep):
        return False
    return _spec(spec).match_file(relative)


@cache
def _spec(pattern: str) -> pathspec.PathSpec[pathspec.Pattern]:
    import pathspec  # only a path rule needs it: a start-up with none never loads it

    return pathspec.PathSpec.from_lines("gitignore", [pattern])
