"""A spilled output says how many lines the whole output has (the UI counts those, not the
lines of the pointer that replaced it)."""

from __future__ import annotations

from pathlib import Path

from tests.tools.tool_fakes import FakeArgs, call, collect, executor, make_tool
from tui_agent.tools import Shell, ToolContext, Workspace
from tui_agent.vocab import ToolResult


async def test_a_spilled_result_counts_the_lines_of_the_whole_output(tmp_path: Path) -> None:
    big = "".join(f"line {i}\n" for i in range(20_000)) + "THE END"  # 20,001 lines

    async def flood(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output=big, display={"kept": True})

    results = await collect(executor(tmp_path, make_tool("flood", flood)), [call("flood")])
    result = results[0][1]
    assert result.spill is not None
    assert result.display == {"kept": True, "output_lines": 20_001}
    assert result.text.count("\n") + 1 < 20_001  # the pointer is far shorter


async def test_a_streamed_shell_spill_counts_every_line_written(tmp_path: Path) -> None:
    shell = Shell(Workspace(tmp_path / "ws"))
    results = await collect(executor(tmp_path, shell), [call("shell", command="seq 1 200000")])
    result = results[0][1]
    assert result.spill is not None
    whole = _read(Path(result.spill.output_path))
    assert result.display is not None
    assert result.display["output_lines"] == len(whole.splitlines()) == 200_002  # and status
    assert whole.startswith("1\n2\n") and whole.endswith("\n200000\n\nExit code: 0")


async def test_a_streamed_spill_with_stderr_counts_the_lines_of_its_file(tmp_path: Path) -> None:
    shell = Shell(Workspace(tmp_path / "ws"))
    command = "seq 1 300000; printf 'no newline'; echo warn >&2; echo again >&2"
    results = await collect(executor(tmp_path, shell), [call("shell", command=command)])
    result = results[0][1]
    assert result.spill is not None and result.display is not None
    whole = _read(Path(result.spill.output_path))
    assert "\nstderr:\nwarn\nagain\n" in whole
    assert result.display["output_lines"] == len(whole.splitlines())


def _read(path: Path) -> str:
    return path.read_text()
