"""Start-up and lightness, side by side: tui-agent against a bare-Python floor and Claude Code.

Prints tables of medians over alternating runs (A B A B ..., so a drift in the machine's speed
hits both sides alike) and the ratio of the medians:
- one-shot: `-p "say hi"` as a whole process, wall / CPU / peak RSS, against a local
  Anthropic-compatible server that answers with a short SSE stream;
- streaming: the same with a 2,000-chunk answer; CPU per streamed chunk is the difference
  between the two runs' CPU, divided by 2,000;
- first usable frame of the full-screen app in a real terminal (tmux on a private socket): the
  time from launch until the footer and input are drawn.

The floors: `python -c pass`, a bare `asyncio` + `json` + `httpx` import, a Python one-shot that
streams the same answer with httpx and prints it (the floor of any one-shot that speaks HTTP
through httpx), the same after importing the libraries every turn of ours needs (pydantic with
its fields, python-statemachine, aiofiles, platformdirs: beyond it, a one-shot runs our own
code), `import textual.app` and a bare Textual app's first frame (an `Input` and a
`Footer`: the full-screen app's floor). Beside the tables it prints a `-X importtime` summary
of the one-shot's path and of the app's path to its first frame (`startup_imports.py`).

tui-agent runs as a person runs it: the console script pip generated (`tui-agent` beside the
interpreter running this benchmark; in the repository's `.venv` that is the editable install,
whose `.pth` file only adds the repository to `sys.path`: no import hook). `--base TREE` adds a
"before" side: the same script with `PYTHONPATH=TREE` (for example a `git worktree` of main),
alternated with the rest. Claude Code is measured when it is installed: set `CLAUDE_BIN` to its
`claude` executable (for example after `npm install @anthropic-ai/claude-code` into a temporary
folder). It is pointed at the same server with `ANTHROPIC_BASE_URL` and a dummy
`ANTHROPIC_API_KEY`, in a temporary `HOME` whose config marks onboarding, the folder's trust
dialog and the key as done, with non-essential traffic off.

Run: `.venv/bin/python benchmarks/startup.py [RUNS] [--quick] [--base TREE]` (targets: one-shot
wall <= 0.7x Claude Code's, RSS < 60 MiB, first frame <= 0.7x, CPU per streamed chunk <= 0.5x).
`--quick`: 3 runs, no streaming run, under a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import startup_imports
import startup_programs

RUNS = 7
QUICK_RUNS = 3
CHUNKS = 2_000
KEY = "sk-ant-bench-0000000000000000000000"
FRAME_TIMEOUT_S = 30.0
ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).with_name("tui-agent")  # the console script pip generated
TARGET_RATIO = 0.7


def _sse(event: str, data: dict[str, object]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def answer_stream(texts: list[str], model: str) -> bytes:
    """An Anthropic Messages SSE stream whose text is `texts`, one delta each."""
    message = {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    parts = [
        _sse("message_start", {"type": "message_start", "message": message}),
        _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
    ]
    parts.extend(
        _sse(
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}},
        )
        for t in texts
    )
    parts += [
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": len(texts)},
            },
        ),
        _sse("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(parts)


def answer_json(text: str, model: str) -> bytes:
    return json.dumps(
        {
            "id": "msg_bench",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
    ).encode()


class _Messages(BaseHTTPRequestHandler):
    """`POST /v1/messages`: "hi" (or `chunks` one-letter deltas) as SSE or JSON; anything else
    a small JSON answer, so a client's side requests (token counts) never fail."""

    protocol_version = "HTTP/1.1"
    chunks = 0  # 0: answer "hi" in one delta

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _reply(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._reply(200, "application/json", b"{}")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        model = str(body.get("model", "bench"))
        path = self.path.split("?", 1)[0]
        if path.endswith("/count_tokens"):
            self._reply(200, "application/json", b'{"input_tokens": 10}')
        elif not path.endswith("/v1/messages"):
            self._reply(200, "application/json", b"{}")
        elif body.get("stream"):
            texts = ["x"] * self.chunks if self.chunks else ["hi"]
            self._reply(200, "text/event-stream", answer_stream(texts, model))
        else:
            self._reply(200, "application/json", answer_json("hi", model))


@contextmanager
def messages_server(chunks: int) -> Iterator[str]:
    handler = type("_Handler", (_Messages,), {"chunks": chunks})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}"
    finally:
        server.shutdown()
        server.server_close()


# -- the contenders ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Contender:
    name: str
    one_shot: Callable[[str], list[str]]  # prompt -> argv
    tui: list[str] | None  # argv of the full-screen app
    footer: str  # text that shows the footer and input are drawn ("|" between alternatives)
    env: dict[str, str]


OURS_ARGS = ["--provider", "anthropic", "--model", "bench"]


def tui_agent(home: Path, workspace: Path, tree: Path | None = None) -> Contender:
    """Ours through its console script; `tree`: a "before" checkout imported in its place."""
    base = [str(SCRIPT), *OURS_ARGS]
    env = {"TUI_AGENT_HOME": str(home / "tui-agent")}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return Contender(
        name="tui-agent" if tree is None else "tui-agent before",
        one_shot=lambda prompt: [*base, "-p", prompt],
        tui=base,
        footer="Quit",
        env=env,
    )


def claude_code(binary: str, home: Path, workspace: Path) -> Contender:
    """Claude Code with a HOME of its own where onboarding, trust and the key are settled."""
    cc_home = home / "claude"
    cc_home.mkdir(parents=True, exist_ok=True)
    settled = {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}
    config = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "numStartups": 5,
        "projects": {str(workspace): settled},
        "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
    }
    (cc_home / ".claude.json").write_text(json.dumps(config))
    return Contender(
        name="Claude Code",
        one_shot=lambda prompt: [binary, "-p", prompt],
        tui=[binary],
        # Older versions show the shortcuts hint; 2.1.3xx shows the permission mode there.
        footer="for shortcuts|shift+tab to cycle",
        env={
            "HOME": str(cc_home),
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        },
    )


def floor() -> Contender:
    return Contender("python -c pass", lambda _p: [sys.executable, "-c", "pass"], None, "", {})


def floor_imports() -> Contender:
    code = "import asyncio, json, httpx"
    return Contender("python: asyncio+httpx", lambda _p: [sys.executable, "-c", code], None, "", {})


def floor_httpx() -> Contender:
    argv = [sys.executable, "-c", startup_programs.HTTPX_ONE_SHOT]
    return Contender("python: httpx one-shot", lambda _p: argv, None, "", {})


def floor_libraries() -> Contender:
    argv = [sys.executable, "-c", startup_programs.LIBRARIES_ONE_SHOT]
    return Contender("  + a turn's libraries", lambda _p: argv, None, "", {})


def floor_textual() -> Contender:
    code = "import textual.app"
    return Contender("python: textual.app", lambda _p: [sys.executable, "-c", code], None, "", {})


def bare_textual() -> Contender:
    app = [sys.executable, "-c", startup_programs.BARE_APP]
    return Contender("Textual: bare app", lambda _p: [], app, "Quit", {})


# -- measuring -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    rss_mib: float
    output: bytes


def run_once(argv: list[str], env: dict[str, str], cwd: Path) -> Run:
    start = time.perf_counter()
    with subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE
    ) as proc:
        out = proc.stdout.read() if proc.stdout else b""
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {out[-300:]!r}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out)


def alternate(
    contenders: list[Contender], prompt: str, base_env: dict[str, str], cwd: Path, runs: int
) -> dict[str, list[Run]]:
    """One warm-up each, then `runs` rounds in turn."""
    results: dict[str, list[Run]] = {c.name: [] for c in contenders}
    for round_no in range(runs + 1):
        for contender in contenders:
            run = run_once(contender.one_shot(prompt), {**base_env, **contender.env}, cwd)
            if round_no:
                results[contender.name].append(run)
    return results


@dataclass(frozen=True)
class Frame:
    wall: float  # seconds from launch until the footer is on the screen
    cpu: float  # CPU seconds the app had used by then (its threads and reaped children too)


def _cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    return (utime + stime + cutime + cstime) / os.sysconf("SC_CLK_TCK")


def first_frame(contender: Contender, base_env: dict[str, str], cwd: Path, socket: str) -> Frame:
    """Launch the app in a fresh tmux pane and wait until its footer is drawn."""
    assert contender.tui is not None
    env = {**base_env, **contender.env}
    exports = " ".join(f"{k}={_quote(v)}" for k, v in env.items() if os.environ.get(k) != v)
    command = f"cd {_quote(str(cwd))} && exec env {exports} {' '.join(map(_quote, contender.tui))}"
    tmux = ["tmux", "-L", socket]
    start = time.perf_counter()
    subprocess.run([*tmux, "respawn-pane", "-k", "-t", "bench", command], check=True)
    try:
        while time.perf_counter() - start < FRAME_TIMEOUT_S:
            screen = subprocess.run(
                [*tmux, "capture-pane", "-p", "-t", "bench"], capture_output=True, text=True
            ).stdout
            if any(marker in screen for marker in contender.footer.split("|")):
                wall = time.perf_counter() - start
                pane = subprocess.run(
                    [*tmux, "display-message", "-p", "-t", "bench", "#{pane_pid}"],
                    capture_output=True,
                    text=True,
                ).stdout
                return Frame(wall, _cpu_of(int(pane)))
            time.sleep(0.005)
        raise RuntimeError(f"{contender.name}: no footer after {FRAME_TIMEOUT_S} s:\n{screen}")
    finally:
        subprocess.run([*tmux, "respawn-pane", "-k", "-t", "bench", "sleep 1000"], check=True)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def frames(
    contenders: list[Contender], base_env: dict[str, str], cwd: Path, runs: int
) -> dict[str, list[Frame]]:
    socket = f"startup-bench-{os.getpid()}"
    tmux = ["tmux", "-L", socket]
    subprocess.run(
        [*tmux, "new-session", "-d", "-s", "bench", "-x", "120", "-y", "40", "sleep 1000"],
        check=True,
    )
    subprocess.run([*tmux, "set-option", "-t", "bench", "remain-on-exit", "on"], check=True)
    results: dict[str, list[Frame]] = {c.name: [] for c in contenders}
    try:
        for round_no in range(runs + 1):
            for contender in contenders:
                frame = first_frame(contender, base_env, cwd, socket)
                if round_no:
                    results[contender.name].append(frame)
    finally:
        subprocess.run([*tmux, "kill-server"], check=False)
    return results


# -- printing ------------------------------------------------------------------------------------


def median(values: list[float]) -> float:
    return statistics.median(values)


def _mark(name: str, ratio: float) -> str:
    """The target's mark, for the ratio to Claude Code."""
    if name != "Claude Code":
        return ""
    return f"  target <= {TARGET_RATIO}: {'✓' if ratio <= TARGET_RATIO else '✗'}"


def print_one_shot(title: str, results: dict[str, list[Run]], reference: str | None) -> None:
    print(f"\n{title} (median of {len(next(iter(results.values())))} alternating runs)")
    print(f"{'command':<24} {'wall s':>8} {'CPU s':>8} {'RSS MiB':>8}   ratio of tui-agent to it")
    ours = results["tui-agent"]
    for name, runs in results.items():
        wall = median([r.wall for r in runs])
        cpu = median([r.cpu for r in runs])
        rss = median([r.rss_mib for r in runs])
        note = ""
        if name != "tui-agent":
            wall_ratio = median([r.wall for r in ours]) / wall
            note = (
                f"wall {wall_ratio:.2f}, CPU {median([r.cpu for r in ours]) / cpu:.2f}, "
                f"RSS {median([r.rss_mib for r in ours]) / rss:.2f}{_mark(name, wall_ratio)}"
            )
        print(f"{name:<24} {wall:>8.3f} {cpu:>8.3f} {rss:>8.0f}   {note}")
    if reference is None:
        print("(Claude Code not measured: set CLAUDE_BIN to its `claude` executable)")


def print_frames(drawn: dict[str, list[Frame]]) -> None:
    runs = len(drawn["tui-agent"])
    print(f"\nfirst usable frame in tmux, 120x40 (median of {runs} alternating runs)")
    print(f"{'app':<24} {'wall s':>8} {'CPU s':>8}   ratio of tui-agent to it")
    wall = {name: median([f.wall for f in frames]) for name, frames in drawn.items()}
    cpu = {name: median([f.cpu for f in frames]) for name, frames in drawn.items()}
    for name in drawn:
        note = ""
        if name != "tui-agent":
            wall_ratio, cpu_ratio = wall["tui-agent"] / wall[name], cpu["tui-agent"] / cpu[name]
            note = f"wall {wall_ratio:.2f}, CPU {cpu_ratio:.2f}{_mark(name, wall_ratio)}"
        print(f"{name:<24} {wall[name]:>8.3f} {cpu[name]:>8.3f}   {note}")


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description="Start-up side by side with Claude Code.")
    parser.add_argument("runs", nargs="?", type=int, help=f"alternating runs (default {RUNS})")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_RUNS} runs, no streaming")
    parser.add_argument("--base", type=Path, help="a tree of the code before, run beside it")
    args = parser.parse_args()
    runs = args.runs or (QUICK_RUNS if args.quick else RUNS)
    if not SCRIPT.is_file():
        raise SystemExit(f"no console script at {SCRIPT}: run this with the venv's python")
    claude = os.environ.get("CLAUDE_BIN") or shutil.which("claude")
    print(f"load average at the start: {_load()}")
    with tempfile.TemporaryDirectory(prefix="tui-agent-startup-") as name:
        home = Path(name)
        workspace = home / "ws"
        workspace.mkdir()
        ours = tui_agent(home, workspace)
        before = [tui_agent(home, workspace, args.base.resolve())] if args.base else []
        theirs = claude_code(claude, home, workspace) if claude else None
        rivals = [ours, *before] + ([theirs] if theirs else [])
        base_env = {**os.environ, "ANTHROPIC_API_KEY": KEY}
        # A person's Python reads and writes bytecode (pip compiles a wheel's at install); a
        # shell that turns that off would time the compiler instead of the start-up.
        for name in ("OPENAI_API_KEY", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE"):
            base_env.pop(name, None)
        trees = [ROOT / "tui_agent"] + ([args.base / "tui_agent"] if args.base else [])
        subprocess.run([sys.executable, "-m", "compileall", "-q", *map(str, trees)], check=True)

        with messages_server(0) as url:
            env = {**base_env, "ANTHROPIC_BASE_URL": url}
            floors = [floor(), floor_imports(), floor_httpx(), floor_libraries(), floor_textual()]
            short = alternate([*rivals, *floors], "say hi", env, workspace, runs)
            for run in short["tui-agent"]:
                assert run.output.strip() == b"hi", run.output
            print_one_shot('one-shot `-p "say hi"`', short, theirs and theirs.name)
            if shutil.which("tmux"):
                print_frames(frames([*rivals, bare_textual()], env, workspace, runs))
            ours_env, cwd = {**env, **ours.env}, str(workspace)
            startup_imports.summary(
                "imports of the one-shot (console script, to its answer)",
                startup_imports.profile(ours.one_shot("say hi"), ours_env, cwd),
            )
            startup_imports.summary(
                "imports of the app, to its first frame (headless)",
                startup_imports.profile(["-c", startup_programs.APP_TO_FIRST_FRAME], ours_env, cwd),
            )
        if not args.quick:
            streaming(rivals, base_env, workspace, runs, short, theirs and theirs.name)
    print(f"\nload average at the end: {_load()}")


def streaming(
    rivals: list[Contender],
    base_env: dict[str, str],
    workspace: Path,
    runs: int,
    short: dict[str, list[Run]],
    reference: str | None,
) -> None:
    with messages_server(CHUNKS) as url:
        env = {**base_env, "ANTHROPIC_BASE_URL": url}
        long = alternate(rivals, "say hi", env, workspace, runs)
    print_one_shot(f"one-shot with a {CHUNKS:,}-chunk answer", long, reference)
    print(f"\nCPU per streamed chunk ({CHUNKS:,}-chunk run minus the short one, per chunk)")
    per_chunk = {
        name: (median([r.cpu for r in long[name]]) - median([r.cpu for r in short[name]]))
        / CHUNKS
        * 1e6
        for name in long
    }
    for name, micros in per_chunk.items():
        ratio = "" if name == "tui-agent" else f"   ratio {per_chunk['tui-agent'] / micros:.2f}"
        print(f"{name:<24} {micros:>8.1f} us{ratio}")


if __name__ == "__main__":
    main()
