"""kill -9 at every event of a scripted multi-step turn with writes and edits.

Each run starts `tui-agent -p ... --output-format jsonl` against the local scripted server,
reads its event lines, and kills it with SIGKILL right after line k (plus a seeded pause of up
to 20 ms, so kills also land inside the write or edit that follows the line). The turn prints
about 22 lines before its shell command starts (then every kill lands while it runs), so k
sweeps 1..`RUNS`: each moment once, and a few in the shell. This used to be 50 seeded draws
of k from 1..30: nearly a third of them the same in-shell moment, the rest covering about 17
of the 21 earlier moments, some twice; the sweep kills at every moment those draws could
reach, with half the runs. Nothing here times anything: the kill moments come from what the
test observes, the checks from what is on disk. Runs go three at a time; each costs one to two
seconds of CPU, most of it the interpreter starting.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.context.context_builders import history_problems, problems
from tests.e2e.test_cli import FAKE_KEY
from tests.support.openai_server import scripted_openai_server
from tests.support.processes import processes_where
from tui_agent.context import Prompt, fold, project, read_log

SEED = 20261130
# The module's runs are made once, by whichever of its tests xdist runs first: each test may
# have to wait for all of them.
pytestmark = pytest.mark.timeout(240)
RUNS = 25  # kill moments: after line 1, 2, ..., 25 (the last few while the shell runs)
PARALLEL = 3
BIG = "".join(f"line {n}\n" for n in range(100_000))  # ~1.1 MB: its rewrite takes a while
BIG_EDITED = BIG.replace("line 50000\n", "LINE 50000\n")
NOTES = "alpha\n" + "note\n" * 200
NOTES_EDITED = NOTES.replace("alpha", "omega")
STEPS = [
    {
        "tool_calls": [
            {"name": "write_file", "arguments": {"path": "notes.txt", "content": NOTES}},
            {
                "name": "edit_file",
                "arguments": {
                    "path": "big.txt",
                    "old_string": "line 50000\n",
                    "new_string": "LINE 50000\n",
                },
            },
        ]
    },
    {
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {"path": "notes.txt", "old_string": "alpha", "new_string": "omega"},
            },
            {"name": "shell", "arguments": {"command": "echo started; sleep 30"}},
        ]
    },
    {"text": "All done."},
]


@dataclass
class Run:
    number: int
    kill_after_line: int
    pause_s: float
    lines_seen: int = 0
    acknowledged: bool = False  # the CLI reported turn.started before it died
    finished: bool = False  # the turn ended before the kill moment
    in_shell: bool = False  # killed while the shell command ran
    damaged_files: list[str] = field(default_factory=list)
    log_problems: list[str] = field(default_factory=list)
    prompt_on_disk: bool = False
    leftover_processes: list[int] = field(default_factory=list)


def _marked_processes(marker: str) -> list[int]:
    """Processes whose environment carries `marker`: the CLI's tool processes."""
    needle = f"TUI_AGENT_FAULT_RUN={marker}".encode()
    return processes_where("environ", lambda environ: needle in environ.split(b"\0"))


def _one_run(run: Run, base: Path) -> Run:
    workspace = base / f"ws{run.number}"
    home = base / f"home{run.number}"
    workspace.mkdir()
    (workspace / "big.txt").write_text(BIG)
    marker = uuid.uuid4().hex
    env = {**os.environ, "TUI_AGENT_HOME": str(home), "OPENAI_API_KEY": FAKE_KEY}
    env["TUI_AGENT_FAULT_RUN"] = marker
    with scripted_openai_server([dict(step) for step in STEPS]) as server:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "tui_agent", "--provider", "openai",
                "--base-url", server.base_url, "--model", "test-model",
                "--workspace", str(workspace), "--yolo", "--output-format", "jsonl",
                "-p", "write the notes and edit the files",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )  # fmt: skip
        assert process.stdout is not None
        for line in process.stdout:
            run.lines_seen += 1
            run.acknowledged |= b'"type":"turn.started"' in line
            run.in_shell |= b'"text":"started' in line
            # The shell step never ends by itself: a run that gets that far is killed while
            # its command runs, which is what the leftover-process check is about.
            if run.lines_seen == run.kill_after_line or b'"text":"started' in line:
                time.sleep(run.pause_s)
                break
        else:
            run.finished = True
        process.send_signal(signal.SIGKILL)
        process.wait()
        process.stdout.close()
    _check_files(run, workspace)
    _check_log(run, home)
    deadline = time.monotonic() + 2.0  # the bound is 1 s for tool processes to die
    while (left := _marked_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    run.leftover_processes = left
    for pid in left:  # never leave them to the next test
        os.kill(pid, signal.SIGKILL)
    return run


def _check_files(run: Run, workspace: Path) -> None:
    if (workspace / "big.txt").read_text() not in (BIG, BIG_EDITED):
        run.damaged_files.append("big.txt")
    notes = workspace / "notes.txt"
    if notes.exists() and notes.read_text() not in (NOTES, NOTES_EDITED):
        run.damaged_files.append("notes.txt")


def _check_log(run: Run, home: Path) -> None:
    logs = list(home.glob("sessions/*/events.jsonl"))
    if not logs:
        return
    bad_lines: list[int] = []
    records = read_log(logs[0], bad_lines)
    if bad_lines:
        run.log_problems.append(f"damaged lines {bad_lines}")
    history = fold(records)
    run.log_problems += history_problems(history) + problems(project(history))
    run.prompt_on_disk = any(isinstance(record, Prompt) for record in records)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Run]:
    draw = random.Random(SEED)
    planned = [
        Run(number, kill_after_line=number + 1, pause_s=draw.uniform(0, 0.02))
        for number in range(RUNS)
    ]
    base = tmp_path_factory.mktemp("faults")
    with ThreadPoolExecutor(PARALLEL) as pool:
        return list(pool.map(lambda run: _one_run(run, base), planned))


def test_no_file_is_ever_left_empty_or_half_written(runs: list[Run]) -> None:
    assert [(run.number, run.damaged_files) for run in runs if run.damaged_files] == []
    assert sum(run.acknowledged for run in runs) >= RUNS // 2  # most kills land mid-turn
    assert any(run.in_shell for run in runs)  # and some while a command runs


def test_every_history_folds_well_formed_after_a_kill(runs: list[Run]) -> None:
    assert [(run.number, run.log_problems) for run in runs if run.log_problems] == []


def test_no_acknowledged_prompt_is_lost(runs: list[Run]) -> None:
    lost = [run.number for run in runs if run.acknowledged and not run.prompt_on_disk]
    assert lost == []


def test_no_tool_process_outlives_the_killed_agent(runs: list[Run]) -> None:
    assert [(run.number, run.leftover_processes) for run in runs if run.leftover_processes] == []
