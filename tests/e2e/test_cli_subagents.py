"""`task` and `todo_write` through the headless command line and a local server."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_cli import events_of, run_cli, session_logs, tui_agent
from tests.support.openai_server import scripted_openai_server


def test_a_headless_turn_delegates_to_a_sub_agent_and_reports_its_plan(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("alpha\n")
    plan = [{"content": "delegate the reading", "status": "in_progress"}]
    steps = [
        {
            "tool_calls": [
                {"name": "todo_write", "arguments": {"todos": plan}},
                {"name": "task", "arguments": {"description": "read a", "prompt": "Read a.txt"}},
            ]
        },
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},  # the child
        {"text": "a.txt says alpha"},  # the child's report
        {"text": "The sub-agent found alpha."},
    ]
    with scripted_openai_server(steps) as server:
        done = run_cli(server, workspace, "-p", "what is in a.txt", "--output-format", "jsonl")
    assert done.returncode == 0, done.stderr
    events = events_of(done.stdout)
    plans = [e for e in events if e["type"] == "plan.updated"]
    assert [p["todos"] for p in plans] == [plan]
    task_done = next(e for e in events if e["type"] == "tool.finished" and e["name"] == "task")
    assert task_done["output"] == "a.txt says alpha" and not task_done["is_error"]
    assert events[-1]["text"] == "The sub-agent found alpha."

    child_requests = server.requests[1:3]
    for request in child_requests:
        users = [m["content"] for m in request["messages"] if m["role"] == "user"]
        assert users == ["Read a.txt"]  # the job only, never the parent's conversation
        assert "task" not in {t["function"]["name"] for t in request["tools"]}
    (log,) = session_logs()
    child_logs = list((log.parent / "tasks").glob("*.jsonl"))
    assert len(child_logs) == 1 and "alpha" in child_logs[0].read_text()

    exported = tui_agent("export", "--workspace", str(workspace))
    assert exported.returncode == 0, exported.stderr
    nested = exported.stdout.split("**Sub-agent transcript**", 1)[1]
    assert "> ## Prompt" in nested and "> Read a.txt" in nested and "read_file" in nested


def test_a_headless_sub_agents_edit_is_denied_without_yolo(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    steps = [
        {"tool_calls": [{"name": "task", "arguments": {"description": "w", "prompt": "Write"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "b.txt", "content": "b"}}]},
        {"text": "I could not write b.txt"},  # the child's report
        {"text": "The sub-agent was not allowed to write."},
    ]
    with scripted_openai_server(steps) as server:
        done = run_cli(server, workspace, "-p", "write b.txt", "--output-format", "jsonl")
    assert done.returncode == 0, done.stderr
    child_result = server.requests[2]["messages"][-1]
    assert child_result["role"] == "tool"
    assert "needs the person's approval and this run cannot ask anyone" in child_result["content"]
    assert not (workspace / "b.txt").exists()
