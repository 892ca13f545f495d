"""The rerun's approvals: asked about exactly the calls the log shows the person was asked about.

A live session asked because of its mode, its permission rules and what each real tool is
(read-only, an edit, a sandboxed command); the log keeps none of the rules, and the recorded
tools are not the real ones, so the rerun cannot work out again whether a call asks. It takes
that from the log: a call with an `approval.answered` record asks (the bar shows what the
person saw in one line: the command, the file; not an edit's diff, which the log does not
keep), every other call runs as it did. The answer itself comes from the
conductor, at the record's point, through the loop's approval queue like any front end's; a
denial is worded by `Approvals` as it was live, so a changed decision shows in the result.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from tui_agent.context import ApprovalAnswered
from tui_agent.tools import (
    ApprovalMode,
    ApprovalRequest,
    Approvals,
    Ask,
    HookDecision,
    Rule,
    Tool,
)
from tui_agent.vocab import ToolResult


class LoggedApprovals(Approvals):
    def __init__(
        self,
        answers: Mapping[str, ApprovalAnswered],  # the tool calls' answers, by call id
        mode: ApprovalMode = "ask",
        rules: Iterable[str | Rule] = (),
        ask: Ask | None = None,
        **settings: Any,
    ) -> None:
        super().__init__(mode, rules, ask, **settings)
        self._answers = answers

    async def review(
        self,
        tool: Tool[Any],
        args: Any,
        call_id: str,
        on_waiting: Callable[[], None],
        hook: HookDecision | None = None,
    ) -> ToolResult | None:
        answer = self._answers.get(call_id)
        if answer is None or self._ask is None:
            return None
        request = ApprovalRequest(
            request_id=uuid.uuid4().hex,
            call_id=call_id,
            tool_name=answer.name,
            description=answer.summary,
            preview=answer.summary,  # the recorded tool's own would only name it
            rule=answer.rule,
            rules=answer.rules,
            why=answer.why,
        )
        async with self._asking:
            return await self._put(request, on_waiting)
