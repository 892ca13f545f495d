"""A custom command's `allowed-tools`: the turn its prompt opens may use only those tools (as
permission rules, unasked, even in yolo mode), and the next turn is free again."""

from __future__ import annotations

from pathlib import Path

from tests.ui.real_loop import scripted_loop


def tool_results(loop: object) -> list[str]:
    return [e.message.text for e in loop.history() if e.message.role == "tool"]  # type: ignore[attr-defined]


async def test_a_commands_turn_may_use_only_its_allowed_tools(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("hello\n")
    calls = [
        {"name": "read_file", "arguments": {"path": "notes.txt"}},
        {"name": "shell", "arguments": {"command": "git status"}},
        {"name": "shell", "arguments": {"command": "echo limited"}},
    ]
    shell = [{"name": "shell", "arguments": {"command": "echo free"}}]
    steps = [{"tool_calls": calls}, {"text": "done"}, {"tool_calls": shell}, {"text": "done"}]
    loop = await scripted_loop(steps, workspace=workspace, approval_mode="ask")
    try:
        limited = await loop.submit("go", allowed_tools=["Read", "Bash(echo:*)"])
        await limited.result()
        loop.set_approval_mode("yolo")
        await (await loop.submit("again")).result()
    finally:
        await loop.close()

    read, git, echo, free = tool_results(loop)
    assert "hello" in read
    assert git.startswith('"shell" (git status) is not among the tools this command allows')
    assert "(Read, Bash(echo:*))" in git
    assert "limited" in echo
    assert "free" in free
