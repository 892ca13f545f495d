"""Sessions and configuration: where things live, `config.toml`, model resolution, sessions on
disk, and the system prompt with the workspace's `AGENTS.md`.

`AppPaths` finds `$TUI_AGENT_HOME` (or the platform's user directories); `load_config` reads
`config.toml` (`ConfigError` names the file, line and key); `resolve` picks provider, model,
endpoint and key from flags, environment and config; `Session` creates, opens and finds
sessions per workspace; `build_system_prompt` writes the agent's instructions.

`open_loop` and `export_session` (which import the loop stack) load on first use, so importing
this package stays light for the command line's first steps.
"""

from typing import TYPE_CHECKING, Any

from tui_agent.providers import DEFAULT_MODELS, ProviderKind
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
from tui_agent.session._commands import CommandProblem, CustomCommand, load_custom_commands
from tui_agent.session._config import (
    Config,
    ConfigError,
    ModelConfig,
    ProviderConfig,
    load_config,
    parse_config,
)
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
from tui_agent.session._instructions import (
    INSTRUCTION_FILES,
    ProjectInstructions,
    build_system_prompt,
    load_instructions,
)
from tui_agent.session._launch import LoopConfig, LoopSetupError
from tui_agent.session._mcp import client_server, load_mcp_servers
from tui_agent.session._paths import HOME_ENV, AppPaths
from tui_agent.session._prompt_history import PromptHistory
from tui_agent.session._resolve import (
    DEFAULT_CONTEXT_WINDOW,
    MODEL_ENV,
    ResolvedModel,
    known_limits,
    provider_for_model,
    resolve,
)
from tui_agent.session._sessions import Session, SessionInfo, list_sessions, new_session_id

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MODELS",
    "FORMATS",
    "HOME_ENV",
    "INSTRUCTION_FILES",
    "MODEL_ENV",
    "SUFFIX",
    "AppPaths",
    "Attachment",
    "CommandProblem",
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
    "ResolvedModel",
    "Session",
    "SessionInfo",
    "attach",
    "attachments_of",
    "build_system_prompt",
    "client_server",
    "clipboard_image",
    "export_file",
    "export_session",
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
    "mentioned_paths",
    "new_session_id",
    "open_loop",
    "parse_config",
    "pasted_image_path",
    "provider_for_model",
    "read_mentions",
    "resolve",
    "run_user_shell",
    "session_cost",
    "split_attachments",
]

if TYPE_CHECKING:
    from tui_agent.session._costs import session_cost
    from tui_agent.session._export import (
        FORMATS,
        SUFFIX,
        ExportFormat,
        export_file,
        export_session,
    )
    from tui_agent.session._file_index import FileIndex
    from tui_agent.session._open import open_loop


def __getattr__(name: str) -> Any:
    if name == "FileIndex":  # it runs ripgrep through the tools layer
        from tui_agent.session._file_index import FileIndex

        return FileIndex
    if name == "session_cost":  # it replays the log through the loop layer
        from tui_agent.session._costs import session_cost

        return session_cost
    if name == "open_loop":
        from tui_agent.session._open import open_loop

        return open_loop
    if name in ("FORMATS", "SUFFIX", "ExportFormat", "export_file", "export_session"):
        from tui_agent.session import _export

        return getattr(_export, name)
    raise AttributeError(name)
