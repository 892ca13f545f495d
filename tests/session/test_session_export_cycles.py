"""`tui-agent export` follows each `task` call into its sub-agent's log; a log that leads back
to itself or to an agent above it (damaged or crafted) is said to be a cycle, not followed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.context.context_builders import LogBuilder
from tui_agent.cli import main
from tui_agent.context import Record, ToolResultRecorded
from tui_agent.session import Session


def delegating(log_name: str, job: str) -> list[Record]:
    """A turn whose one `task` call ran the sub-agent whose log is `tasks/<log_name>`."""
    log = LogBuilder()
    turn = log.turn()
    step = log.prompt(job).step()
    log.call(step, "t1", "task", '{"description": "d", "prompt": "p"}').end(step)
    log.records.append(
        ToolResultRecorded(
            call_id="t1", output="report", display={"subagent": {"log": log_name, "steps": 1}}
        )
    )
    return log.turn_end(turn).records


def write(path: Path, records: list[Record]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")


@pytest.mark.parametrize("fmt", ["md", "html"])
@pytest.mark.parametrize(
    "links", [{"a.jsonl": "a.jsonl"}, {"a.jsonl": "b.jsonl", "b.jsonl": "a.jsonl"}]
)
def test_a_sub_agent_log_that_leads_back_to_itself_is_reported_not_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, links: dict[str, str]
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = Session.create(workspace)
    write(session.events_path, delegating("a.jsonl", "PARENT JOB"))
    for name, target in links.items():
        write(session.dir / "tasks" / name, delegating(target, f"JOB {name}"))

    assert main(["export", session.session_id, "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert "JOB a.jsonl" in out and all(f"JOB {name}" in out for name in links)
    assert "sub-agent log tasks/a.jsonl is already shown above (the logs form a cycle)" in out
