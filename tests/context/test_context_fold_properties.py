"""Properties: any prefix of a valid event log folds into a well-formed, wire-valid history."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.context.context_builders import LogBuilder, entry, history_problems, problems
from tui_agent.context import Compaction, Record, fold, project
from tui_agent.vocab import FinishReason, HistoryEntry, TextPart, ThinkPart, ToolCall

ABORTED = "The turn was cancelled before the tool finished."

parts = st.lists(
    st.one_of(
        st.builds(TextPart, text=st.sampled_from(["", " ", "hello", "done."])),
        st.builds(
            ThinkPart,
            think=st.sampled_from(["", "hmm"]),
            signature=st.sampled_from([None, "sig"]),
        ),
    ),
    max_size=3,
)


@st.composite
def event_logs(draw: st.DrawFn) -> list[Record]:
    """Logs as the loop writes them: turns of steps, retries, tools, cancels, compactions."""
    log = LogBuilder()
    calls = 0
    for turn_index in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            log.notify("while idle")
        log.prompt(f"request {turn_index}", prompt_id=f"p{turn_index}")
        turn = log.turn((f"p{turn_index}",))
        for _ in range(draw(st.integers(1, 3))):
            for _ in range(draw(st.integers(0, 2))):  # failed attempts, retried
                failed = log.step()
                for part in draw(parts):
                    log.part(failed, part)
                log.end(failed, FinishReason.ERROR)
            step = log.step()
            for part in draw(parts):
                log.part(step, part)
            outcome = draw(st.sampled_from(["answer", "tools", "cancel"]))
            if outcome == "answer":
                log.end(step)
                break
            ids = [f"c{calls + n}" for n in range(draw(st.integers(1, 3)))]
            calls += len(ids)
            for call_id in ids:
                log.call(step, call_id)
            order = draw(st.permutations(ids))
            if outcome == "tools":
                for call_id in order:
                    if draw(st.booleans()):
                        log.notify("arrived mid-batch")
                    log.result(call_id, draw(st.sampled_from(["", "out"])))
                log.end(step, FinishReason.TOOL_USE)
                continue
            finished = draw(st.integers(0, len(ids)))
            for call_id in order[:finished]:
                log.result(call_id)
            for call_id in order[finished:]:
                log.result(call_id, ABORTED, is_error=True)
            log.end(step, FinishReason.INTERRUPTED)
            break
        log.turn_end(turn)
        if draw(st.booleans()):
            log.records.append(_compaction(draw(st.booleans()), calls))
            calls += 1
    return log.records


def _compaction(unfinished: bool, call_number: int) -> Compaction:
    kept: tuple[HistoryEntry, ...] = (entry("user", "kept request"),)
    if unfinished:
        call = ToolCall(id=f"c{call_number}", name="shell")
        kept += (entry("assistant", calls=[call]),)
    return Compaction(summary="earlier work", kept=kept)


@settings(max_examples=150, deadline=None)
@given(event_logs())
def test_every_prefix_folds_into_a_well_formed_history(records: list[Record]) -> None:
    for end in range(len(records) + 1):
        history = fold(records[:end])
        assert history_problems(history) == [], f"prefix of {end} records"
        assert problems(project(history)) == [], f"prefix of {end} records"


roles = st.sampled_from(["user", "assistant", "tool", "system"])


@st.composite
def arbitrary_histories(draw: st.DrawFn) -> list[HistoryEntry]:
    history = []
    for _ in range(draw(st.integers(0, 12))):
        role = draw(roles)
        text = draw(st.sampled_from(["", "  ", "text"]))
        if role == "assistant":
            ids = draw(st.lists(st.sampled_from(["a", "b", "c"]), unique=True, max_size=3))
            history.append(entry(role, text, calls=[ToolCall(id=i, name="t") for i in ids]))
        elif role == "tool":
            history.append(entry(role, text, call_id=draw(st.sampled_from(["a", "b", "z"]))))
        else:
            history.append(entry(role, text))
    return history


@settings(max_examples=300, deadline=None)
@given(arbitrary_histories())
def test_projection_of_any_history_is_wire_valid(history: list[HistoryEntry]) -> None:
    assert problems(project(history)) == []
