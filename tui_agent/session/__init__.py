"""Sessions and configuration: where things live, `config.toml`, model resolution, sessions on
disk, and the system prompt with the workspace's `AGENTS.md`.

`AppPaths` finds `$TUI_AGENT_HOME` (or the platform's user directories); `load_config` reads
`config.toml` (`ConfigError` names the file, line and key); `resolve` picks provider, model,
endpoint and key from flags, environment and config; `Session` creates, opens and finds
sessions per workspace; `build_system_prompt` writes the agent's instructions.

Only the light modules load with the package (paths, sessions on disk, launch options, custom
commands, trust); the rest load on first use (`_LAZY`): `open_loop` and `export_session` import
the loop stack, and the configuration pydantic with the vocabulary, which the full-screen app's
first frame goes without.
"""

import importlib
from typing import TYPE_CHECKING, Any

from tui_agent.providers import DEFAULT_MODELS, ProviderKind
from tui_agent.session._commands import (
    CommandProblem,
    CommandTrust,
    CustomCommand,
    load_custom_commands,
    shell_verdicts,
    with_outputs,
)
from tui_agent.session._launch import LoopConfig, LoopSetupError
from tui_agent.session._paths import HOME_ENV, AppPaths
from tui_agent.session._sessions import Session, SessionInfo, list_sessions, new_session_id
from tui_agent.session._trust import RepositoryItems, TrustLine

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MODELS",
    "FORMATS",
    "HOME_ENV",
    "MEMORY_FILES",
    "MODEL_ENV",
    "SUFFIX",
    "AppPaths",
    "Attachment",
    "CommandProblem",
    "CommandTrust",
    "Config",
    "ConfigError",
    "CustomCommand",
    "ExportFormat",
    "FileIndex",
    "ImageError",
    "ImageLimits",
    "LoadedImage",
    "LoopConfig",
    "LoopSetupError",
    "ModelConfig",
    "ProjectInstructions",
    "PromptHistory",
    "ProviderConfig",
    "ProviderKind",
    "RepositoryItems",
    "ResolvedModel",
    "Session",
    "SessionInfo",
    "Skill",
    "SkillTrust",
    "StatusLineCommand",
    "StatusLineProblem",
    "TrustLine",
    "attach",
    "attachments_of",
    "available_skills",
    "build_system_prompt",
    "client_server",
    "clipboard_image",
    "export_file",
    "export_session",
    "grow",
    "image_attachment",
    "image_from_bytes",
    "images_of",
    "is_image_path",
    "known_limits",
    "limits_for",
    "list_sessions",
    "load_config",
    "load_custom_commands",
    "load_image",
    "load_instructions",
    "load_mcp_servers",
    "load_skills",
    "logged_tree",
    "mentioned_paths",
    "new_session_id",
    "on_branch",
    "open_loop",
    "parse_config",
    "pasted_image_path",
    "print_tree",
    "provider_for_model",
    "read_mentions",
    "repository_prompt",
    "resolve",
    "run_user_shell",
    "session_cost",
    "shell_verdicts",
    "skill_commands",
    "skill_prompt",
    "split_attachments",
    "status_line_command",
    "text_tree",
    "turn_label",
    "with_outputs",
]

if TYPE_CHECKING:
    from tui_agent.session._attachments import (
        Attachment,
        attach,
        attachments_of,
        image_attachment,
        images_of,
        mentioned_paths,
        read_mentions,
        run_user_shell,
        split_attachments,
    )
    from tui_agent.session._branches import (
        grow,
        logged_tree,
        on_branch,
        print_tree,
        text_tree,
        turn_label,
    )
    from tui_agent.session._config import (
        Config,
        ConfigError,
        ModelConfig,
        ProviderConfig,
        load_config,
        parse_config,
    )
    from tui_agent.session._costs import session_cost
    from tui_agent.session._export import (
        FORMATS,
        SUFFIX,
        ExportFormat,
        export_file,
        export_session,
    )
    from tui_agent.session._file_index import FileIndex
    from tui_agent.session._images import (
        ImageError,
        ImageLimits,
        LoadedImage,
        clipboard_image,
        image_from_bytes,
        is_image_path,
        limits_for,
        load_image,
        pasted_image_path,
    )
    from tui_agent.session._instructions import ProjectInstructions, build_system_prompt
    from tui_agent.session._mcp import client_server, load_mcp_servers
    from tui_agent.session._memory_files import MEMORY_FILES, load_instructions
    from tui_agent.session._open import open_loop
    from tui_agent.session._prompt_history import PromptHistory
    from tui_agent.session._repository import repository_prompt
    from tui_agent.session._resolve import (
        DEFAULT_CONTEXT_WINDOW,
        MODEL_ENV,
        ResolvedModel,
        known_limits,
        provider_for_model,
        resolve,
    )
    from tui_agent.session._skills import (
        Skill,
        SkillTrust,
        available_skills,
        load_skills,
        skill_commands,
        skill_prompt,
    )
    from tui_agent.session._status_line import (
        StatusLineCommand,
        StatusLineProblem,
        status_line_command,
    )

# Where each name not imported above lives: those modules load at first use. The
# configuration (pydantic models, with the vocabulary under them), model resolution and the
# system prompt are the loop's; the full-screen app draws its first frame without them.
# Pasted images, @-mentions, the prompt history and the status line serve the app and ACP: a
# one-shot never builds their classes (tests/test_imports.py counts them). `FileIndex` runs
# ripgrep through the tools layer, `session_cost` and `repository_prompt` read the log and the
# hooks through the loop layer, skills are the tools layer's `Skill`s.
_LAZY = {
    "_config": (
        "Config",
        "ConfigError",
        "ModelConfig",
        "ProviderConfig",
        "load_config",
        "parse_config",
    ),
    "_instructions": ("ProjectInstructions", "build_system_prompt"),
    "_mcp": ("client_server", "load_mcp_servers"),
    "_memory_files": ("MEMORY_FILES", "load_instructions"),
    "_resolve": (
        "DEFAULT_CONTEXT_WINDOW",
        "MODEL_ENV",
        "ResolvedModel",
        "known_limits",
        "provider_for_model",
        "resolve",
    ),
    "_attachments": (
        "Attachment",
        "attach",
        "attachments_of",
        "image_attachment",
        "images_of",
        "mentioned_paths",
        "read_mentions",
        "run_user_shell",
        "split_attachments",
    ),
    "_images": (
        "ImageError",
        "ImageLimits",
        "LoadedImage",
        "clipboard_image",
        "image_from_bytes",
        "is_image_path",
        "limits_for",
        "load_image",
        "pasted_image_path",
    ),
    "_prompt_history": ("PromptHistory",),
    "_status_line": ("StatusLineCommand", "StatusLineProblem", "status_line_command"),
    "_file_index": ("FileIndex",),
    "_costs": ("session_cost",),
    "_skills": (
        "Skill",
        "SkillTrust",
        "available_skills",
        "load_skills",
        "skill_commands",
        "skill_prompt",
    ),
    "_open": ("open_loop",),
    "_branches": ("grow", "logged_tree", "on_branch", "print_tree", "text_tree", "turn_label"),
    "_repository": ("repository_prompt",),
    "_export": ("FORMATS", "SUFFIX", "ExportFormat", "export_file", "export_session"),
}
_HOME = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(name)
    return getattr(importlib.import_module(f"tui_agent.session.{module}"), name)
