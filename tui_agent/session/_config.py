"""`config.toml`: providers, models and loop settings, validated with messages a user can act on.

    default_model = "gpt-4.1"          # or TUI_AGENT_MODEL, or --model
    approval_mode = "ask"              # plan | ask | auto-edit | yolo
    max_steps_per_turn = 100
    max_attempts_per_step = 10
    turn_end_notice = "bell+desktop"   # a turn ended or an approval waits, unfocused:
                                       # bell+desktop | bell | desktop | off
    retry_budget_s = 60                # a step stops retrying once its waits add up to this
    max_retry_after_s = 60             # a longer Retry-After fails at once ("retry after HH:MM")
    secret_env = ["*_API_KEY", "*_TOKEN", "*_SECRET"]  # kept from tools (with every api_key_env)
    sandbox = "workspace-write"        # commands' OS sandbox: workspace-write | read-only | off
    sandbox_network = false            # let sandboxed commands reach the network
    sandbox_hide = ["~/.config/op"]    # hidden from commands, besides ~/.ssh, ~/.aws and the like
    prompt_cache = true                # Anthropic: cache_control breakpoints (false: none)
    max_budget_usd = 5.0               # a session stops before a request once it spent this
    max_turn_budget_usd = 1.0          # the same, for one turn
    theme = "tui-agent-light"          # tui-agent-dark (default) | tui-agent-light | Textual's
    status_line = "~/bin/status.sh"    # its first line shows in the status bar (session as JSON
                                       # on stdin); or {command = "...", padding = 1}

    [providers.local]                  # a name of your choosing
    kind = "openai"                    # the wire format: one of --provider's choices
    base_url = "http://127.0.0.1:8080/v1"
    api_key_env = "LOCAL_API_KEY"      # the NAME of the variable; keys never live in the file

    [models."qwen3-coder"]
    provider = "local"
    model = "Qwen/Qwen3-Coder-30B"     # the id sent to the provider (default: the table name)
    context_window = 262144
    max_output_tokens = 16384
    echo_reasoning = false
    price_input_per_mtok = 0.0         # USD per million tokens (default: genai-prices' table)
    price_output_per_mtok = 0.0        # also price_cache_read_per_mtok, price_cache_write_per_mtok

    [permissions]                      # rules (session/_permissions.py, tools/_rules.py)
    allow = ["Bash(npm run test:*)", "Edit(src/**)"]
    ask = ["Bash(git push:*)"]
    deny = ["Read(./.env)", "Bash(rm -rf:*)"]

    [web]                              # web_fetch and web_search (tools/_web.py)
    allow_private = false              # let web_fetch reach loopback, private, link-local hosts
    search_url = "http://127.0.0.1:8888"  # a SearXNG (JSON API); no search tool without one

    [mcp_servers.git]                  # an MCP server, trusted (see session/_mcp.py)
    command = "uvx"
    args = ["mcp-server-git"]
    tool_timeout_s = 60

    [[hooks.PreToolUse]]               # a hook command, trusted (see session/_hooks.py)
    matcher = "Bash|edit_file"         # Claude Code's tool names or ours; "" or "*": every tool
    command = "~/bin/check-call"       # gets Claude Code's JSON on stdin
    timeout = 30                       # seconds (default 60)

A missing file is an empty configuration. A bad one raises `ConfigError`, whose message names
the file, and the line (TOML syntax) or the key (a bad value).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeFloat,
    PositiveFloat,
    PositiveInt,
    ValidationError,
)

from tui_agent.keys import DEFAULT_SECRET_PATTERNS
from tui_agent.providers import PROVIDER_KINDS, ProviderKind
from tui_agent.session._paths import AppPaths
from tui_agent.vocab import ApprovalMode

if TYPE_CHECKING:
    import tomllib

TurnEndNotice = Literal["bell+desktop", "bell", "desktop", "off"]
SandboxMode = Literal["workspace-write", "read-only", "off"]

BUILTIN_PROVIDERS: tuple[str, ...] = PROVIDER_KINDS

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


class ConfigError(Exception):
    """A configuration problem; `str()` is the whole message for the user."""

    def __init__(
        self,
        message: str,
        *,
        path: Path | None = None,
        line: int | None = None,
        key: str | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.key = key


class _Table(BaseModel):
    """Empty lists and tables are plain defaults, which pydantic copies for each instance: with
    `default_factory=list` it would read `list`'s signature from its text, compiling the
    tokenizer's regular expressions (~4 ms) in a one-shot that needs them for nothing else."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class ProviderConfig(_Table):
    kind: ProviderKind
    base_url: str | None = None
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")


class ModelConfig(_Table):
    provider: str | None = None
    model: str | None = None
    context_window: PositiveInt | None = None
    max_output_tokens: PositiveInt | None = None
    echo_reasoning: bool | None = None
    price_input_per_mtok: NonNegativeFloat | None = None
    price_output_per_mtok: NonNegativeFloat | None = None
    price_cache_read_per_mtok: NonNegativeFloat | None = None
    price_cache_write_per_mtok: NonNegativeFloat | None = None


class McpOAuthTable(_Table):
    """`[mcp_servers.NAME.oauth]`: a pre-registered client and login settings (see
    `tools.mcp.McpOAuth`); values may use `${VAR}` like the server's other strings."""

    client_id: str | None = None
    client_secret: str | None = None
    scope: str | None = None
    callback_port: int | None = Field(default=None, ge=1, le=65535)
    client_metadata_url: str | None = Field(default=None, pattern=r"^https://")
    grant: Literal["authorization_code", "client_credentials"] = "authorization_code"
    private_key_file: str | None = None  # client credentials signed with this key (PEM)
    signing_algorithm: str = "RS256"
    issuer: str | None = Field(default=None, pattern=r"^https?://")


class McpServerTable(_Table):
    """One MCP server: `command` (with `args`, `env`) for stdio, or `url` (with `headers`)."""

    type: Literal["stdio", "http", "sse"] | None = None
    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    url: str | None = None
    headers: dict[str, str] = {}
    enabled: bool = True
    startup_timeout_s: PositiveFloat | None = None
    tool_timeout_s: PositiveFloat | None = None
    oauth: McpOAuthTable | None = None


class PermissionsTable(_Table):
    """`[permissions]`: rule strings, read by `session._permissions` (which checks them)."""

    allow: list[str] = []
    ask: list[str] = []
    deny: list[str] = []


class WebTable(_Table):
    """`[web]`: web_fetch's address guard and the optional search service."""

    allow_private: bool = False
    search_url: str | None = Field(default=None, pattern=r"^https?://")


class StatusLineTable(_Table):
    """`status_line = {command = "..."}`, the shape of Claude Code's `statusLine` setting."""

    type: Literal["command"] = "command"
    command: str = Field(min_length=1)
    padding: int = Field(default=0, ge=0, le=8)


class HookTable(_Table):
    """One `[[hooks.EVENT]]` entry (`session._hooks` checks the event and the matcher)."""

    matcher: str = ""
    command: str = Field(min_length=1)
    timeout: PositiveFloat | None = None


class Config(_Table):
    default_model: str | None = None
    approval_mode: ApprovalMode = "ask"
    max_steps_per_turn: PositiveInt = 100
    max_attempts_per_step: PositiveInt = 10
    turn_end_notice: TurnEndNotice = "bell+desktop"
    retry_budget_s: PositiveFloat = 60.0
    max_retry_after_s: PositiveFloat = 60.0
    secret_env: list[str] = Field(default_factory=lambda: list(DEFAULT_SECRET_PATTERNS))
    sandbox: SandboxMode = "workspace-write"
    sandbox_network: bool = False
    sandbox_hide: list[str] = []
    prompt_cache: bool = True
    max_budget_usd: PositiveFloat | None = None
    max_turn_budget_usd: PositiveFloat | None = None
    theme: str | None = None
    status_line: str | StatusLineTable | None = None
    providers: dict[str, ProviderConfig] = {}
    models: dict[str, ModelConfig] = {}
    mcp_servers: dict[str, McpServerTable] = {}
    # Tables left out of the file: their defaults are valid, so nothing is validated for them.
    permissions: PermissionsTable = Field(default_factory=PermissionsTable.model_construct)
    web: WebTable = Field(default_factory=WebTable.model_construct)
    hooks: dict[str, list[HookTable]] = {}


def load_config(path: Path | str | None = None) -> Config:
    """Read `config.toml` (default: the one under the app paths); missing means defaults."""
    file = Path(path) if path is not None else AppPaths.from_env().config_file
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        # The defaults are valid by construction: building the validator for them (a sixth of
        # a one-shot's run after its imports) would check nothing.
        return Config.model_construct()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read the configuration: {exc}", path=file) from exc
    return parse_config(text, file)


def parse_config(text: str, file: Path) -> Config:
    import tomllib  # only with a file to read: its import costs ~10 ms a run without one skips

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _syntax_error(exc, file) from exc
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise _value_error(exc, file) from exc
    known = {*config.providers, *BUILTIN_PROVIDERS}
    for name, model in config.models.items():
        if model.provider is not None and model.provider not in known:
            key = f"models.{toml_key(name)}.provider"
            raise ConfigError(
                f"{file}: {key}: unknown provider {model.provider!r} "
                f"(define [providers.{toml_key(model.provider)}] or use one of "
                f"{', '.join(BUILTIN_PROVIDERS)})",
                path=file,
                key=key,
            )
    return config


def toml_key(name: str) -> str:
    """A key as it is written in TOML: bare when it can be, quoted otherwise."""
    return name if _BARE_KEY.match(name) else '"' + name.replace('"', '\\"') + '"'


def _syntax_error(exc: tomllib.TOMLDecodeError, file: Path) -> ConfigError:
    message = str(exc)
    position = _TOML_POSITION.search(message)
    if position is None:
        return ConfigError(f"{file}: invalid TOML: {message}", path=file)
    line = int(position.group(1))
    reason = message[: position.start()]
    return ConfigError(
        f"{file}, line {line}, column {position.group(2)}: invalid TOML: {reason}",
        path=file,
        line=line,
    )


def _value_error(exc: ValidationError, file: Path) -> ConfigError:
    error = exc.errors()[0]
    key = ".".join(toml_key(str(part)) for part in error["loc"])
    if error["loc"] and error["loc"][-1] == "api_key_env":
        # Never echo this value: a common mistake is to paste the key itself here.
        detail = "must be the name of an environment variable, e.g. OPENAI_API_KEY"
    elif error["type"] == "extra_forbidden":
        detail = "unknown key"
        if error["loc"][-1] in ("api_key", "key", "token"):
            detail += " (keys are never stored in the file: set api_key_env to a variable name)"
    else:
        detail = f"{error['msg']} (got {_shown(error.get('input'))})"
    more = len(exc.errors()) - 1
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    return ConfigError(f"{file}: {key}: {detail}{suffix}", path=file, key=key)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
