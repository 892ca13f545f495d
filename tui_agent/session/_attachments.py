"""What a prompt carries besides the user's words: `@path` mentions, images and `!command` output.

A prompt is sent as the user's words, then one `<context source="…">` section per attachment:
a mentioned file's content with line numbers (bounded as `read_file` bounds it), a folder's
listing, a shell command the user ran with `!` and its output, or an image's name and size (the
image itself follows the text as an image part, see `images_of`). An image may be named outside
the workspace (`@~/Pictures/shot.png`): the person names it, and only image files are read so.
The built-in tools read and run the rest, so the workspace's confinement, limits and process
handling are the same (they are imported when first used: the app draws its first frame
without the tools). The transcript
shows attachments as chips: `split_attachments` gives back the words and the sources, also for
a resumed session.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.lazy_dataclass import dataclass
from tui_agent.session._images import (
    ImageError,
    ImageLimits,
    LoadedImage,
    is_image_path,
    load_image,
)
from tui_agent.vocab import AbortSignal, ImagePart, ToolUpdate

if TYPE_CHECKING:
    from tui_agent.tools import Sandbox, ToolContext, Workspace

SECTION = re.compile(r'\n\n<context source="(?P<source>[^"]*)">\n')
MENTION = re.compile(r'(?<![\w@])@(?:"(?P<quoted>[^"]+)"|(?P<plain>[^\s"]+))')
SHELL_OUTPUT_CAP = 30_000  # characters of a `!` command's output kept for the model


@dataclass(frozen=True)
class Attachment:
    source: str  # "@src/app.py", "@src/", "!make test"
    text: str
    exit_code: int | None = None  # a `!command` that ran to its end: its status
    image: ImagePart | None = None  # an image: sent after the text, `text` names it


def image_attachment(shown: str, image: LoadedImage) -> Attachment:
    """An image as a prompt carries it: its chip (`shown`, its pixels and bytes), a line for
    the model, and the image."""
    return Attachment(f"{shown} · {image.details}", image.note, image=image.part)


def images_of(attachments: Sequence[Attachment]) -> tuple[ImagePart, ...]:
    return tuple(a.image for a in attachments if a.image is not None)


@dataclass(frozen=True)
class Mentions:
    attachments: tuple[Attachment, ...]
    missing: tuple[str, ...]  # mentions that are no path in the workspace (`@dataclass`)
    problems: tuple[str, ...] = ()  # images that cannot be attached, and why


def mentioned_paths(text: str) -> list[str]:
    """The `@path` mentions of a prompt, in order, each once (`@"a b.txt"` for spaces)."""
    seen: list[str] = []
    for match in MENTION.finditer(text):
        path = (match.group("quoted") or match.group("plain") or "").rstrip(".,;:!?)")
        if path and path not in seen:
            seen.append(path)
    return seen


async def read_mentions(workspace: Path, text: str, limits: ImageLimits) -> Mentions:
    """Read every mentioned file or folder, and every image within `limits`; a path that is not
    there is reported, not read."""
    from tui_agent.tools import Glob, GlobArgs, ReadFile, ReadFileArgs, Workspace, WorkspaceError

    root = Workspace(workspace)
    attachments: list[Attachment] = []
    missing: list[str] = []
    problems: list[str] = []
    for path in mentioned_paths(text):
        if is_image_path(path):
            try:
                image = await asyncio.to_thread(_mentioned_image, workspace, path, limits)
            except ImageError as exc:
                problems.append(str(exc))
                continue
            if image is not None:
                attachments.append(image_attachment(f"@{path}", image))
                continue
        try:
            target = root.resolve(path)
        except WorkspaceError:
            missing.append(path)
            continue
        if target.is_dir():
            listing = await Glob(root).execute(GlobArgs(pattern="**/*", path=path), _context(root))
            attachments.append(Attachment(f"@{path.rstrip('/')}/", listing.text))
        elif target.is_file():
            content = await ReadFile(root).execute(ReadFileArgs(path=path), _context(root))
            attachments.append(Attachment(f"@{path}", content.text))
        else:
            missing.append(path)
    return Mentions(tuple(attachments), tuple(missing), tuple(problems))


def _mentioned_image(workspace: Path, path: str, limits: ImageLimits) -> LoadedImage | None:
    target = workspace / Path(path).expanduser()  # an absolute path stays as it is
    return load_image(target, limits) if target.is_file() else None


async def run_user_shell(
    workspace: Path,
    command: str,
    signal: AbortSignal,
    on_output: Callable[[str], None],
    timeout_s: float | None = None,
    sandbox: Sandbox | None = None,
) -> Attachment:
    """Run a `!command` the way the `shell` tool runs one (process group, timeout, cancel,
    the loop's `sandbox`)."""
    from tui_agent.tools import UNSANDBOXED, Shell, ShellArgs, ToolAborted, Workspace

    root = Workspace(workspace)
    ctx = _context(root, signal, on_output)
    exit_code: int | None = None
    shell = Shell(root, sandbox or UNSANDBOXED)
    try:
        result = await shell.execute(ShellArgs(command=command, timeout_s=timeout_s), ctx)
        output = result.text
        code = (result.display or {}).get("exit_code")
        exit_code = code if isinstance(code, int) else None
    except ToolAborted as stopped:
        output = f"{stopped.partial}\n[stopped by the user]".lstrip("\n")
    if len(output) > SHELL_OUTPUT_CAP:
        output = output[-SHELL_OUTPUT_CAP:] + "\n[output cut to its last part]"
    return Attachment(f"!{command}", output, exit_code)


def attach(words: str, attachments: Sequence[Attachment]) -> str:
    """The text sent for a prompt: the words, then each attachment in its own section."""
    sections = [
        f'\n\n<context source="{_quote(a.source)}">\n{a.text.rstrip()}\n</context>'
        for a in attachments
    ]
    return words + "".join(sections)


def split_attachments(text: str) -> tuple[str, list[str]]:
    """The user's words and the sources of what was attached (for chips in the transcript)."""
    first = SECTION.search(text)
    if first is None:
        return text, []
    return text[: first.start()], [m.group("source") for m in SECTION.finditer(text)]


def attachments_of(text: str) -> tuple[str, list[Attachment]]:
    """The user's words and each attachment whole, as `attach` wrote them (for exports)."""
    sections = list(SECTION.finditer(text))
    if not sections:
        return text, []
    found = []
    for index, match in enumerate(sections):
        end = sections[index + 1].start() if index + 1 < len(sections) else len(text)
        body = text[match.end() : end].removesuffix("\n</context>")
        found.append(Attachment(match.group("source"), body))
    return text[: sections[0].start()], found


def _quote(source: str) -> str:
    return source.replace('"', "'").replace("\n", " ")


def _context(
    root: Workspace,
    signal: AbortSignal | None = None,
    on_output: Callable[[str], None] | None = None,
) -> ToolContext:
    from tui_agent.tools import ToolContext

    def update(part: ToolUpdate) -> None:
        if on_output is not None and part.text:
            on_output(part.text)

    return ToolContext(
        signal=signal or AbortSignal(),
        on_update=update,
        detach=lambda ack: None,  # a user's command always runs in the foreground
        workspace=root,
        call_id="user",
    )
