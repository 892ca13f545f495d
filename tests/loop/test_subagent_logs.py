"""Where a sub-agent's log goes: one file per task call id, never shared by two ids, and the
logs of sessions written before the names were kept apart still found."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from tests.context.context_builders import LogBuilder
from tui_agent.loop.subagent import Subagents

FOLDER = Path("/sessions/s/tasks")


def test_ids_that_differ_only_in_punctuation_get_their_own_logs() -> None:
    subagents = Subagents(FOLDER)
    paths = {subagents.log_path(i) for i in ("a.b", "a_b", "a/b", "a b", "a-b")}
    assert len(paths) == 5
    assert subagents.log_path("call_abc-123") == FOLDER / "call_abc-123.jsonl"
    assert all(path.parent == FOLDER for path in paths)


@given(st.text(min_size=1, max_size=300))
@example("a.b")
@example("é" * 300)
def test_an_id_and_its_look_alike_never_share_a_log(call_id: str) -> None:
    subagents = Subagents(FOLDER)
    look_alike = re.sub(r"[^A-Za-z0-9-]", "_", call_id)
    if look_alike != call_id:
        assert subagents.log_path(call_id) != subagents.log_path(look_alike)
    for name in (call_id, look_alike):  # a name the file system takes
        assert len(subagents.log_path(name).name.encode("utf-8", "surrogatepass")) <= 255


def test_a_log_named_the_old_way_is_still_read(tmp_path: Path) -> None:
    log = LogBuilder()
    turn = log.turn()
    step = log.prompt("CHILD JOB").step()
    log.text(step, "done").end(step).turn_end(turn)
    old = tmp_path / "a_b.jsonl"
    old.write_text("".join(r.model_dump_json() + "\n" for r in log.records), "utf-8")
    run = Subagents(tmp_path).get("a.b")
    assert run is not None and run.log_path == old and run.transcript
