"""The agent's hands: the tool contract, the conflict-aware scheduler, the batch executor,
approvals, workspace confinement, the six built-in file, search and shell tools,
`todo_write` (the plan), and `web_fetch` / `web_search` and `skill` (added by the session from
its config and the skills it finds).

Imports only the vocabulary, pydantic, aiofiles and the standard library. The MCP client is the
subpackage `tools.mcp`, imported on its own (it loads the MCP SDK when a server connects).
"""

from tui_agent.tools._accesses import FileAccess, FileOp, ToolAccesses, conflict, normalize_path
from tui_agent.tools._approvals import (
    APPROVAL_MODES,
    PLAN_REFUSAL,
    ApprovalMode,
    ApprovalRequest,
    Approvals,
    Ask,
    Decision,
    HookDecision,
)
from tui_agent.tools._base import Tool, ToolAborted, ToolArgs, ToolContext
from tui_agent.tools._diff import unified_diff
from tui_agent.tools._edits import EditFile, WriteFile
from tui_agent.tools._executor import BatchExecutor, CallContext, CallHooks, Checkpointer
from tui_agent.tools._files import EditorFiles, ReadFile, ReadFileArgs, save_file
from tui_agent.tools._groups import end_group, spawn_group, terminate_group
from tui_agent.tools._groups import kill_all as kill_tool_processes
from tui_agent.tools._plan_mode import PLAN_MODE_PROMPT, ExitPlanMode
from tui_agent.tools._registry import BUILTIN_TOOLS, ToolRegistry, default_registry
from tui_agent.tools._results import EMPTY_OUTPUT, SKIPPED, SPILL_THRESHOLD
from tui_agent.tools._results import aborted as aborted_result
from tui_agent.tools._rg import rg_files, rg_path
from tui_agent.tools._rules import (
    EFFECTS,
    Effect,
    Rule,
    RuleError,
    Ruleset,
    RuleStore,
    command_parts,
    parse_rule,
)
from tui_agent.tools._sandbox import (
    UNSANDBOXED,
    Sandbox,
    SandboxMode,
    SandboxPolicy,
    open_sandbox,
)
from tui_agent.tools._scheduler import ToolScheduler
from tui_agent.tools._search import Glob, GlobArgs, Grep
from tui_agent.tools._shell import Shell, ShellArgs, command_prefix
from tui_agent.tools._skill import Skill, SkillTool
from tui_agent.tools._terminal import EditorTerminal
from tui_agent.tools._todo import TodoWrite, plan_in, plan_summary
from tui_agent.tools._walk import walk_files
from tui_agent.tools._web import WebFetch, WebTimeouts
from tui_agent.tools._web_guard import AddressGuard
from tui_agent.tools._web_search import WebSearch
from tui_agent.tools._workspace import Workspace, WorkspaceError

__all__ = [
    "APPROVAL_MODES",
    "BUILTIN_TOOLS",
    "EFFECTS",
    "EMPTY_OUTPUT",
    "PLAN_MODE_PROMPT",
    "PLAN_REFUSAL",
    "SKIPPED",
    "SPILL_THRESHOLD",
    "UNSANDBOXED",
    "AddressGuard",
    "ApprovalMode",
    "ApprovalRequest",
    "Approvals",
    "Ask",
    "BatchExecutor",
    "CallContext",
    "CallHooks",
    "Checkpointer",
    "Decision",
    "EditFile",
    "EditorFiles",
    "EditorTerminal",
    "Effect",
    "ExitPlanMode",
    "FileAccess",
    "FileOp",
    "Glob",
    "GlobArgs",
    "Grep",
    "HookDecision",
    "ReadFile",
    "ReadFileArgs",
    "Rule",
    "RuleError",
    "RuleStore",
    "Ruleset",
    "Sandbox",
    "SandboxMode",
    "SandboxPolicy",
    "Shell",
    "ShellArgs",
    "Skill",
    "SkillTool",
    "TodoWrite",
    "Tool",
    "ToolAborted",
    "ToolAccesses",
    "ToolArgs",
    "ToolContext",
    "ToolRegistry",
    "ToolScheduler",
    "WebFetch",
    "WebSearch",
    "WebTimeouts",
    "Workspace",
    "WorkspaceError",
    "WriteFile",
    "aborted_result",
    "command_parts",
    "command_prefix",
    "conflict",
    "default_registry",
    "end_group",
    "kill_tool_processes",
    "normalize_path",
    "open_sandbox",
    "parse_rule",
    "plan_in",
    "plan_summary",
    "rg_files",
    "rg_path",
    "save_file",
    "spawn_group",
    "terminate_group",
    "unified_diff",
    "walk_files",
]
