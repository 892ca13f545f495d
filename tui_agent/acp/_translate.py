"""From our words to ACP's: loop events and history entries become `session/update`s.

One `Translator` per session keeps what an update needs from earlier events (a call's name and
arguments, for its title, kind, locations and diff). A call's title and kind are its tool's own
(`Tool.facts`, found by name through `loop.tool_facts`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from acp import schema as acp

from tui_agent.loop import events as ev
from tui_agent.loop.tool_facts import tool_facts
from tui_agent.vocab import FileChange, HistoryEntry, PlanItem, ToolStatus, tool_status

Update = (
    acp.UserMessageChunk
    | acp.AgentMessageChunk
    | acp.AgentThoughtChunk
    | acp.ToolCallStart
    | acp.ToolCallProgress
    | acp.AgentPlanUpdate
    | acp.CurrentModeUpdate
    | acp.AvailableCommandsUpdate
    | acp.UsageUpdate
    | acp.ConfigOptionUpdate
)

Content = acp.ContentToolCallContent | acp.FileEditToolCallContent | acp.TerminalToolCallContent

OUTPUT_CAP = 20_000  # characters of a call's output sent to the client


class Translator:
    def __init__(self, workspace: str) -> None:
        self._workspace = Path(workspace)
        self._calls: dict[str, tuple[str, dict[str, Any]]] = {}
        self._cards: dict[str, acp.ToolCallStart] = {}  # what the client shows for each call
        self._changes: dict[str, FileChange] = {}  # what an approved edit was shown to change
        self._terminals: dict[str, str] = {}  # the client's terminal a command runs in
        self._live: dict[str, str] = {}  # a running call's output so far (no terminal)

    def event(self, event: ev.LoopEvent) -> Iterator[Update]:
        match event:
            case ev.AssistantDelta() if event.text:
                yield acp.AgentMessageChunk(
                    session_update="agent_message_chunk", content=text_block(event.text)
                )
            case ev.ThinkingDelta() if event.text:
                yield acp.AgentThoughtChunk(
                    session_update="agent_thought_chunk", content=text_block(event.text)
                )
            case ev.ToolStarted():
                yield self.tool_start(event.id, event.name, event.arguments)
            case ev.ToolStateChanged() if event.state == "running":
                yield acp.ToolCallProgress(
                    session_update="tool_call_update", tool_call_id=event.id, status="in_progress"
                )
            case ev.ToolUpdated() if event.id not in self._terminals:
                yield self._live_output(event.id, event.text)
            case ev.ToolFinished():
                yield self.tool_end(event.id, event.output, event.status)
            case ev.PlanUpdated():
                yield plan_update(event.todos)
            case ev.UsageChanged():
                yield usage_update(event)
            case ev.ModeChanged():
                yield acp.CurrentModeUpdate(
                    session_update="current_mode_update", current_mode_id=event.mode
                )
            case _:
                pass

    def history(self, entries: Sequence[HistoryEntry]) -> Iterator[Update]:
        """A finished conversation, replayed for `session/load`."""
        for entry in entries:
            message = entry.message
            if message.role == "user" and message.text:
                yield acp.UserMessageChunk(
                    session_update="user_message_chunk", content=text_block(message.text)
                )
            elif message.role == "assistant":
                if message.thinking:
                    yield acp.AgentThoughtChunk(
                        session_update="agent_thought_chunk", content=text_block(message.thinking)
                    )
                if message.text:
                    yield acp.AgentMessageChunk(
                        session_update="agent_message_chunk", content=text_block(message.text)
                    )
                for call in message.tool_calls:
                    yield self.tool_start(call.id, call.name, call.arguments)
            elif message.role == "tool" and message.tool_call_id in self._calls:
                # History keeps no display marks: an error is all it can tell.
                status = tool_status(is_error=message.is_error)
                yield self.tool_end(message.tool_call_id, message.text, status)

    def tool_start(self, call_id: str, name: str, arguments: str) -> acp.ToolCallStart:
        args = _arguments(arguments)
        self._calls[call_id] = (name, args)
        path = args.get("path")
        facts = tool_facts(name)
        card = self._cards[call_id] = acp.ToolCallStart(
            session_update="tool_call",
            tool_call_id=call_id,
            title=facts.title(name, args),
            kind=facts.kind,
            status="pending",
            locations=[acp.ToolCallLocation(path=self._absolute(path))]
            if isinstance(path, str)
            else None,
            raw_input=args,
        )
        return card

    def permission(self, request: ev.ApprovalRequested) -> acp.ToolCallUpdate:
        """The call a permission request asks about: the card the client already shows
        (title, kind, input unchanged) with what the call would do, an edit's diff before the
        file is written."""
        card = self._cards.get(request.call_id)
        content: list[Content] = []
        if request.change is not None:
            self._changes[request.call_id] = request.change
            content.append(_file_diff(request.change))
        elif request.preview and request.preview != request.summary:
            content.append(
                acp.ContentToolCallContent(type="content", content=text_block(request.preview))
            )
        return acp.ToolCallUpdate(
            tool_call_id=request.call_id,
            title=card.title if card else f"{request.name}: {request.summary}"[:200],
            kind=card.kind if card else None,
            raw_input=card.raw_input if card else None,
            locations=card.locations if card else None,
            content=content or None,
        )

    def terminal(self, call_id: str, terminal_id: str) -> acp.ToolCallProgress:
        """The call's card shows the client's terminal, which streams the command's output."""
        self._terminals[call_id] = terminal_id
        return acp.ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=call_id,
            content=[acp.TerminalToolCallContent(type="terminal", terminal_id=terminal_id)],
        )

    def _live_output(self, call_id: str, text: str) -> acp.ToolCallProgress:
        """A command's output so far (an update replaces the card's content): its end."""
        output = (self._live.get(call_id, "") + text)[-OUTPUT_CAP:]
        self._live[call_id] = output
        return acp.ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=call_id,
            content=[acp.ContentToolCallContent(type="content", content=text_block(output))],
        )

    def tool_end(self, call_id: str, output: str, status: ToolStatus) -> acp.ToolCallProgress:
        """ACP knows only completed and failed: a denied or stopped call did not complete. A
        command run in the client's terminal keeps showing it (released, its output stays)."""
        failed = status != "done"
        name, args = self._calls.get(call_id, ("", {}))
        self._live.pop(call_id, None)
        content: list[Content] = []
        terminal_id = self._terminals.pop(call_id, None)
        if terminal_id is not None:
            content.append(acp.TerminalToolCallContent(type="terminal", terminal_id=terminal_id))
        change = self._changes.pop(call_id, None)
        self._cards.pop(call_id, None)
        if failed:
            diff = None
        else:
            diff = _file_diff(change) if change is not None else self._diff(name, args)
        if diff is not None:
            content.append(diff)
        if output and (diff is None or failed) and terminal_id is None:
            shown = output if len(output) <= OUTPUT_CAP else output[:OUTPUT_CAP] + "\n[…cut]"
            content.append(acp.ContentToolCallContent(type="content", content=text_block(shown)))
        return acp.ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=call_id,
            status="failed" if failed else "completed",
            content=content or None,
            raw_output=output[:OUTPUT_CAP],
        )

    def _diff(self, name: str, args: dict[str, Any]) -> acp.FileEditToolCallContent | None:
        path = args.get("path")
        if not isinstance(path, str):
            return None
        if name == "edit_file" and isinstance(args.get("new_string"), str):
            old = args.get("old_string")
            return acp.FileEditToolCallContent(
                type="diff",
                path=self._absolute(path),
                old_text=old if isinstance(old, str) else None,
                new_text=args["new_string"],
            )
        if name == "write_file" and isinstance(args.get("content"), str):
            return acp.FileEditToolCallContent(
                type="diff", path=self._absolute(path), old_text=None, new_text=args["content"]
            )
        return None

    def _absolute(self, path: str) -> str:
        return str(self._workspace / path)


def plan_update(todos: Sequence[PlanItem]) -> acp.AgentPlanUpdate:
    return acp.AgentPlanUpdate(
        session_update="plan",
        entries=[
            acp.PlanEntry(content=item.content, priority="medium", status=item.status)
            for item in todos
        ],
    )


def usage_update(usage: ev.UsageChanged) -> acp.UsageUpdate:
    """The context window's fill, and what the session cost when its price is known."""
    cost = None if usage.cost_usd is None else acp.Cost(amount=usage.cost_usd, currency="USD")
    return acp.UsageUpdate(
        session_update="usage_update",
        used=usage.context_tokens,
        size=usage.context_window,
        cost=cost,
    )


def _file_diff(change: FileChange) -> acp.FileEditToolCallContent:
    return acp.FileEditToolCallContent(
        type="diff", path=change.path, old_text=change.before, new_text=change.after
    )


def _arguments(arguments: str) -> dict[str, Any]:
    try:
        parsed = json.loads(arguments) if arguments else {}
    except ValueError:
        return {"raw": arguments}
    return parsed if isinstance(parsed, dict) else {"value": parsed}


def text_block(text: str) -> acp.TextContentBlock:
    return acp.TextContentBlock(type="text", text=text)
