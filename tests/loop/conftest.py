from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import FakeModel, Step
from tui_agent.context import EventLog
from tui_agent.loop.api import LoopInfo
from tui_agent.loop.costs import Metering
from tui_agent.loop.factory import build_loop
from tui_agent.loop.service import AgentLoopService, LoopOptions
from tui_agent.tools import Tool

LoopMaker = Callable[..., Any]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    return root


@pytest.fixture
async def make_loop(tmp_path: Path, workspace: Path) -> AsyncIterator[LoopMaker]:
    opened: list[AgentLoopService] = []

    async def make(
        steps: list[Step],
        *,
        approval_mode: str = "yolo",
        options: LoopOptions = LoopOptions(abort_grace_s=0.5),
        tools: tuple[Tool[Any], ...] = (),
        context_window: int = 128_000,
        model: Any = None,
        metering: Metering | None = None,
        **more: Any,
    ) -> tuple[AgentLoopService, Any, Path]:
        """A loop over `steps` played by a `FakeModel` (or over another fake `model`, when
        given), priced by `metering` when given; `more` goes to `build_loop` as is."""
        model = model or FakeModel(list(steps))
        log_path = tmp_path / f"events-{len(opened)}.jsonl"
        service = await build_loop(
            provider=model,
            info=LoopInfo(
                provider="scripted",
                model=model.model,
                context_window=context_window,
                approval_mode=approval_mode,  # type: ignore[arg-type]
                session_id="test-session",
                workspace=str(workspace),
                demo=False,
            ),
            workspace=workspace,
            spill_dir=tmp_path / "spill",
            log=EventLog(log_path),
            system_prompt=lambda tools: "You are a test agent.",
            options=options,
            extra_tools=tools,
            metering=metering,
            **more,
        )
        opened.append(service)
        return service, model, log_path

    yield make
    for service in opened:
        await service.close()
        assert service.engine.errors == []  # the machines caught nothing unexpected
