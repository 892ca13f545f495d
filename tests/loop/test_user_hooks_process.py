"""One hook command's run: bounded output, JSON stdin a hook may ignore, and what is read
from its exit code and stdout."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tui_agent.loop.userhooks import HookSpec
from tui_agent.loop.userhooks._process import CAPTURE_LIMIT, run_command
from tui_agent.loop.userhooks._verdict import read_run


async def test_a_flooding_hook_keeps_only_the_first_bytes_and_finishes(tmp_path: Path) -> None:
    flood = f"{sys.executable} -c \"import sys; sys.stdout.write('x' * 20_000_000)\""
    run = await run_command(HookSpec("PostToolUse", flood), b"{}", tmp_path, os.environ)

    assert run.exit_code == 0
    assert len(run.stdout) == CAPTURE_LIMIT and run.truncated


async def test_a_hook_that_never_reads_its_input_still_runs(tmp_path: Path) -> None:
    payload = b'{"prompt": "' + b"y" * 1_000_000 + b'"}'  # more than a pipe holds
    run = await run_command(HookSpec("UserPromptSubmit", "echo fine"), payload, tmp_path, {})

    assert run.exit_code == 0 and run.stdout == "fine\n"


async def test_a_command_that_does_not_exist_is_a_failure_not_a_block(tmp_path: Path) -> None:
    run = await run_command(HookSpec("PreToolUse", "no-such-hook-xyz"), b"{}", tmp_path, {})
    verdict = read_run(run)

    assert run.exit_code == 127 and not verdict.block and verdict.permission is None


async def test_legacy_approve_and_block_decisions_read_as_allow_and_deny(tmp_path: Path) -> None:
    approve = await run_command(
        HookSpec("PreToolUse", """echo '{"decision": "approve"}'"""), b"{}", tmp_path, {}
    )
    block = await run_command(
        HookSpec("PreToolUse", """echo '{"decision": "block", "reason": "no"}'"""),
        b"{}",
        tmp_path,
        {},
    )

    assert read_run(approve).permission == "allow"
    assert read_run(block).permission == "deny" and read_run(block).permission_reason == "no"
