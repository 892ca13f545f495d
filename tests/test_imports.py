"""What each entry path imports, checked in a fresh interpreter (the test process has everything
loaded already): the headless path never loads Textual nor a package only a file or a setting it
did not meet would need, and the full-screen app draws its first frame before the loop stack
(providers, tools, kernel, HTTP, state machines) and what the frame does not show (other screens,
reports) are imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOOP_STACK = ("tui_agent.llm", "tui_agent.tools", "tui_agent.kernel", "httpx", "statemachine")
# Not shown by the first frame, so imported when first used: the screens a key or a command
# opens (and the trust question, asked after the frame), the reports of /status, /cost and
# /permissions, and /context's view with the context layer (and aiofiles) under it; and Markdown
# with its parser, linkifier and Pygments (the first frame shows none: the welcome is plain text),
# loaded at the first answer, diff or question drawn; pydantic with the vocabulary, the loop's
# events and the configuration's models (the view model takes the loop's events once it opens,
# and config.toml's theme is read for the frame without them); the pricer, shown with the first
# cost, and the package's version (importlib.metadata), sent to a status-line command.
NOT_ON_THE_FIRST_FRAME = (
    "tui_agent.ui.inspector",
    "tui_agent.ui.trust_screen",
    "tui_agent.ui.tree_view",
    "tui_agent.ui.sessions_screen",
    "tui_agent.ui.rewind_screen",
    "tui_agent.ui.context_view",
    "tui_agent.loop.reports",
    "tui_agent.context",
    "aiofiles",
    "tui_agent.ui.widgets.markdown_blocks",
    "rich.markdown",
    "rich.syntax",
    "markdown_it",
    "linkify_it",
    "mdurl",
    "pygments",
    "pydantic",
    "tui_agent.vocab",
    "tui_agent.loop.events",
    "tui_agent.loop.api",
    "tui_agent.session._config",
    "tui_agent.usage",
    "tui_agent.version",
)
# Loaded where they are used, never by a plain one-shot: PyYAML reads the front matter of skills
# and custom commands, tomlkit saves a permission rule, pathspec matches path rules and ignore
# files; tomllib reads config.toml (the tests' home has none); Textual, Rich and markdown-it
# draw the app.
NOT_FOR_A_ONE_SHOT = ("yaml", "tomlkit", "pathspec", "tomllib", "textual", "rich", "markdown_it")
# Ours that a one-shot never runs (instrumented: none of their functions ran, none of their
# classes was instantiated), loaded by the app and ACP where used: pasted images and
# @-mentions, the prompt history, the status line; the loop's snapshot, MCP offers (and the
# MCP list hook, added only with servers), branch switches and the session tree; running a
# user hook and reading its answer (a home without hooks fires none).
OURS_NOT_FOR_A_ONE_SHOT = (
    "tui_agent.session._attachments",
    "tui_agent.session._images",
    "tui_agent.session._prompt_history",
    "tui_agent.session._status_line",
    "tui_agent.loop.snapshot",
    "tui_agent.loop.mcp_offers",
    "tui_agent.loop.branches",
    "tui_agent.loop.session_tree",
    "tui_agent.loop.userhooks._process",
    "tui_agent.loop.userhooks._verdict",
)


def loaded_after(code: str) -> set[str]:
    """The modules loaded once `code` has run in a new interpreter."""
    script = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_the_headless_path_never_imports_textual() -> None:
    loaded = loaded_after("import tui_agent.cli\nimport tui_agent.session._open")
    assert "tui_agent.loop.service" in loaded  # the whole headless stack is there
    assert not any(name == "textual" or name.startswith("textual.") for name in loaded)


def test_a_whole_one_shot_loads_nothing_it_does_not_use(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [{"text": "hi", "chunk_delay_s": 0}]}))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    argv = ["-p", "say hi", "--script", str(script), "--workspace", str(workspace)]
    # pydantic looks for plugins by scanning every installed distribution's entry points
    # (`importlib.metadata.distributions`): the one-shot must build its schemas with none found
    # and no scan made.
    code = f"""
import importlib.metadata as metadata
import sys
scans = []
real_distributions = metadata.distributions
def counted(**kwargs):
    scans.append(kwargs)
    return real_distributions(**kwargs)
metadata.distributions = counted
from tui_agent.entry import main
sys.argv = ["tui-agent", *{argv!r}]
assert main() == 0
from pydantic.plugin import _loader
assert list(_loader.get_plugins()) == [] and len(scans) == 0, scans
"""
    loaded = loaded_after(code)
    assert "tui_agent.loop.service" in loaded  # it ran the real loop
    unused = sorted(name for name in loaded if name.split(".")[0] in NOT_FOR_A_ONE_SHOT)
    assert len(unused) == 0, unused
    ours_unused = sorted(loaded.intersection(OURS_NOT_FOR_A_ONE_SHOT))
    assert len(ours_unused) == 0, ours_unused


def one_shot_then(tmp_path: Path, after: str = "") -> str:
    """Code that runs a scripted `-p "say hi"` through the entry point, then `after`."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [{"text": "hi", "chunk_delay_s": 0}]}))
    argv = ["-p", "say hi", "--script", str(script), "--workspace", str(tmp_path)]
    return f"""
import sys
from tui_agent.entry import main
sys.argv = ["tui-agent", *{argv!r}]
assert main() == 0
{after}"""


def test_a_one_shot_builds_only_the_dataclasses_it_uses(tmp_path: Path) -> None:
    # Our dataclasses are built at their first use (tui_agent.lazy_dataclass): the kernel's
    # events and results of paths a plain answer never takes (an abort, a failed step, a
    # compaction) stay unbuilt, and more classes wait than are built.
    code = one_shot_then(
        tmp_path,
        """
from tui_agent.context._compaction import CompactionResult
from tui_agent.kernel.events import AbortBegun, StepBegun, StepFailed
unbuilt = [cls.__name__ for cls in (CompactionResult, AbortBegun, StepFailed, StepBegun)
           if "__dataclass_waiting__" in vars(cls)]
classes = [value for module in list(sys.modules.values())
           if getattr(module, "__name__", "").startswith("tui_agent")
           for value in vars(module).values()
           if isinstance(value, type) and value.__module__ == module.__name__]
waiting = sum("__dataclass_waiting__" in vars(cls) for cls in classes)
built = sum("__dataclass_fields__" in vars(cls) for cls in classes) - waiting
print(unbuilt, waiting > built)
""",
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[-1] == "['CompactionResult', 'AbortBegun', 'StepFailed'] True"


def test_the_app_builds_the_loop_stacks_dataclasses_with_its_modules_off_the_event_loop() -> None:
    # The app loads the loop stack in a worker thread (`ui.run._load_open_loop`); it builds their
    # waiting dataclasses there too, so that their first uses on the event loop cost no key.
    code = """
from tui_agent.ui.run import _load_open_loop
from tui_agent.kernel.events import AbortBegun
from tui_agent.context._compaction import CompactionResult
before = ["__dataclass_waiting__" in vars(cls) for cls in (AbortBegun, CompactionResult)]
_load_open_loop()
print(before, ["__dataclass_waiting__" in vars(cls) for cls in (AbortBegun, CompactionResult)])
"""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[-1] == "[True, True] [False, False]"


def test_a_one_shot_never_loads_importlib_metadata(tmp_path: Path) -> None:
    # Only pydantic's plugin loader would (with zipfile, csv and half of email): it is replaced
    # by one that finds no plugin (tui_agent._pydantic_hooks).
    assert "importlib.metadata" not in loaded_after(one_shot_then(tmp_path))


def test_the_app_draws_its_first_frame_before_the_loop_stack_is_imported() -> None:
    code = """
import asyncio
import sys
from pathlib import Path
from tui_agent.session import LoopConfig
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.opening import OpeningLoop
from tui_agent.ui.run import _starting

async def never_opens():
    await asyncio.Event().wait()

async def first_frame():
    config = LoopConfig(workspace=Path.cwd())
    app = TuiAgentApp(OpeningLoop(_starting(config), never_opens))
    async with app.run_test(size=(120, 36)):
        drawn = set(sys.modules)  # what the first frame needed; work after it may load more
        assert app.screen.query_one("#footer").region.height > 0
        assert app.prompt_input.has_focus
    return drawn

drawn = asyncio.run(first_frame())
for name in list(sys.modules):
    if name not in drawn:
        del sys.modules[name]
"""
    loaded = loaded_after(code)
    assert "textual" in loaded
    assert not [name for name in loaded if name.startswith(LOOP_STACK)]
    assert not [name for name in loaded if name.startswith(NOT_ON_THE_FIRST_FRAME)]
