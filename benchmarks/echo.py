"""Key echo in a real terminal while a long Markdown answer streams, tui-agent beside Claude Code.

Each app runs in a pseudo-terminal of 120x40 and talks to one local Anthropic-compatible server
(the SSE helpers of `benchmarks/startup.py`), which streams a ~10 KB Markdown answer (headings,
lists, code blocks, tables: `benchmarks/ui.py`'s) at a steady rate once a prompt asks for it
(the prompt says `rate=N`, characters a second). While it streams, the harness types into the
input about ten keys a second (100 ms apart with +-50 % jitter, never before the last key showed)
and times each from the write of the key to the read of the output that makes the terminal show
it in the input line. Every byte an app writes goes through one terminal model, so both apps
are judged by the same screen: a key has shown when a row holds the draft typed so far followed
only by blanks and frame characters (letters lengthen the draft, backspaces shorten it, so each
key changes what that row must show). The model is asciinema's `avt` (Rust, through `pyavt`):
`pyte` was tried first and parsed 120 KB a second, which cost the harness a quarter of a core
and made it read late. The same is measured with nothing streaming (idle), and for the
terminal's own echo (`cat` on the pty: the kernel echoes), the harness's floor.

The apps take turns (A B, then B A, ...), each round one fresh process per app doing idle, then
each rate. Printed: p50/p95/p99/max per app and phase over all rounds, each round's p95, the
ratios to Claude Code, the CPU the app used per second of the phase, and the harness's own
cost: its CPU per second (terminal model and server) and, per key, the time it spent in the
terminal model while the key was out (a key shown in output read while the harness was busy is
timed late by up to that much). Load average at the start and the end.

Claude Code runs when `CLAUDE_BIN` names its `claude` executable, in a temporary HOME that
skips onboarding and the trust dialog (`startup.claude_code`). Both apps get the local server
as their base URL and a proxy that refuses everything else, so neither reaches the network.

Run: `.venv/bin/python benchmarks/echo.py [--quick] [--rounds N] [--before DIR]` (targets:
while streaming, p95 <= 0.8x Claude Code's and p99 <= 33 ms). `--quick` is one round of idle
and one 3,000 chars/s answer (under a minute); `--before DIR` adds our app run from another
tree (`git worktree add DIR main`) as a third contender, for a before/after in the same run.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import fcntl
import io
import json
import os
import random
import re
import select
import shutil
import signal
import struct
import tempfile
import termios
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path

import avt
import startup
from ui import markdown_answer, percentile

COLUMNS, ROWS = 120, 40
PREFIX = "zq"  # starts every measured draft: no answer or prompt holds it
LETTERS = "abcdefghijklmnopqrstuvwxyz"
DRAFT_MAX = 40  # letters after the prefix before some are rubbed out again
RUB_OUT = 8  # backspaces in a row, when the draft is full
KEY_GAP_S = 0.1  # between keys, +-50 %
KEY_TIMEOUT_S = 3.0  # a key not shown by then counts as this and is reported
SETUP_TIMEOUT_S = 20.0  # for the keys of the set-up (prompt, draft), on a starved machine too
READY_TIMEOUT_S = 30.0
CLAUDE_PROMPT = "\u276f"  # Claude Code's input line starts with it once keys are taken
PIECE = 4  # characters per streamed delta, about a token
SEND_EVERY_S = 0.01  # the server writes what is due this often
# Everything but the local server goes to a proxy that is not there.
NO_NETWORK = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
NO_NETWORK |= {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}


# -- the server ----------------------------------------------------------------------------------


def asked_rate(body: bytes) -> int | None:
    """The rate a streamed main request asks for (`rate=N` in its last user message); None for
    side requests (titles, token counts, anything without tools)."""
    try:
        request = json.loads(body or b"{}")
    except ValueError:
        return None
    if not (request.get("stream") and request.get("tools")):
        return None
    users = [m for m in request.get("messages", ()) if m.get("role") == "user"]
    found = re.findall(r"rate=(\d+)", json.dumps(users[-1])) if users else []
    return int(found[-1]) if found else None


class AnswerServer(ThreadingHTTPServer):
    """`startup`'s Messages server, whose main requests stream `answer` at the rate asked."""

    daemon_threads = True

    def __init__(self, answer: str) -> None:
        super().__init__(("127.0.0.1", 0), PacedMessages)
        self.answer = answer
        self.streams_started = 0
        self.streams_ended = 0

    def streaming(self) -> bool:
        return self.streams_ended < self.streams_started

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


class PacedMessages(startup._Messages):
    server: AnswerServer

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        rate = asked_rate(raw)
        if rate is None:
            self.rfile = io.BytesIO(raw)  # the base handler reads the body again
            super().do_POST()
            return
        model = str(json.loads(raw).get("model", "bench"))
        text = self.server.answer
        pieces = [text[i : i + PIECE] for i in range(0, len(text), PIECE)]
        events = [e + b"\n\n" for e in startup.answer_stream(pieces, model).split(b"\n\n") if e]
        head, deltas, tail = events[:2], events[2 : 2 + len(pieces)], events[2 + len(pieces) :]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(sum(map(len, events))))
        self.end_headers()
        self.server.streams_started += 1
        try:
            self._write(head)
            start, sent, chars = time.perf_counter(), 0, 0
            while sent < len(deltas):
                due = (time.perf_counter() - start) * rate
                batch = []
                while sent < len(deltas) and chars < due:
                    batch.append(deltas[sent])
                    chars += len(pieces[sent])
                    sent += 1
                self._write(batch)
                time.sleep(SEND_EVERY_S)
            self._write(tail)
        except OSError:
            pass  # the app went away mid-answer
        finally:
            self.server.streams_ended += 1

    def _write(self, events: list[bytes]) -> None:
        if events:
            self.wfile.write(b"".join(events))
            self.wfile.flush()


# -- the terminal --------------------------------------------------------------------------------


def _frame(char: str) -> bool:
    """Blank, or drawing a box or bar (U+2500..U+259F) rather than text."""
    return char.isspace() or "\u2500" <= char <= "\u259f"


def shows(rows: list[str], draft: str) -> bool:
    """Some row holds `draft` with nothing but blanks and frame characters after it."""
    for row in rows:
        at = row.rfind(draft)
        if at >= 0 and all(_frame(c) for c in row[at + len(draft) :]):
            return True
    return False


class Terminal:
    """An app in a pseudo-terminal (its controlling terminal); what it writes kept in `avt`."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        self.pid = os.fork()
        if self.pid == 0:  # the child: only exec from here
            try:
                os.close(master)
                os.login_tty(slave)
                os.chdir(cwd)
                os.execvpe(argv[0], argv, env)
            finally:
                os._exit(127)
        os.close(slave)
        self.fd = master
        self.vt = avt.Vt(COLUMNS, ROWS)
        self._decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        self.rows: list[str] = [""] * ROWS  # the screen's text, row by row
        self.feeding = 0.0  # seconds spent in the terminal model so far

    def send(self, data: bytes) -> None:
        os.write(self.fd, data)

    def pump(self, timeout: float) -> float | None:
        """Read what the app wrote within `timeout` into the screen; when it read something,
        the time the read returned (before the harness's own work on it)."""
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not ready:
            return None
        try:
            data = os.read(self.fd, 1 << 16)
        except OSError:  # the app is gone
            data = b""
        read_at = time.perf_counter()
        if not data:
            raise RuntimeError(f"the app exited:\n{self.text()}")
        self.vt.feed_str(self._decode(data))
        self.rows = [line.text for line in self.vt.view()]
        self.feeding += time.perf_counter() - read_at
        return read_at

    def wait_for(self, condition: Callable[[], bool], timeout: float, what: str) -> float:
        """Pump until `condition` holds; the time of the read that made it hold."""
        deadline = time.perf_counter() + timeout
        at = time.perf_counter()
        while not condition():
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"no {what} after {timeout} s:\n{self.text()}")
            at = self.pump(min(left, 0.05)) or at
        return at

    def idle_for(self, seconds: float) -> None:
        end = time.perf_counter() + seconds
        while (left := end - time.perf_counter()) > 0:
            self.pump(left)

    def text(self) -> str:
        return "\n".join(row.rstrip() for row in self.rows)

    def cpu(self) -> float:
        """CPU seconds the app has used (all its threads)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        """End the app's session (the app and whatever it started): SIGTERM, then SIGKILL."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, sig)
            if self._reaped(within=3.0):
                break
        os.close(self.fd)

    def _reaped(self, within: float) -> bool:
        end = time.perf_counter() + within
        while time.perf_counter() < end:
            try:
                if os.waitpid(self.pid, os.WNOHANG)[0]:
                    return True
            except ChildProcessError:
                return True  # reaped already
            with contextlib.suppress(RuntimeError):  # its side of the terminal is closed
                self.pump(0.05)  # an app that writes as it exits is not left stuck
        return False


# -- typing --------------------------------------------------------------------------------------


def draft_shown(term: Terminal, draft: str) -> Callable[[], bool]:
    return lambda: shows(term.rows, draft)


class Typist:
    """The keys and the draft each leaves: letters, and a few backspaces when it is full. The
    draft starts with `PREFIX`, typed (not timed) when the typist starts."""

    def __init__(self, term: Terminal) -> None:
        self.term = term
        for n in range(1, len(PREFIX) + 1):
            term.send(PREFIX[n - 1].encode())
            term.wait_for(draft_shown(term, PREFIX[:n]), SETUP_TIMEOUT_S, "the draft")
        self.draft = PREFIX
        self._letters = iter(LETTERS * 10_000)
        self._rubbing = 0

    def next(self) -> bytes:
        if self._rubbing or len(self.draft) >= len(PREFIX) + DRAFT_MAX:
            self._rubbing = (self._rubbing or RUB_OUT) - 1
            self.draft = self.draft[:-1]
            return b"\x7f"
        letter = next(self._letters)
        self.draft += letter
        return letter.encode()

    def rub_out(self) -> None:
        """Empty the draft (not timed)."""
        for _ in self.draft:
            self.term.send(b"\x7f")
            self.term.idle_for(0.03)
        gone = lambda: not any(PREFIX in row for row in self.term.rows)  # noqa: E731
        self.term.wait_for(gone, SETUP_TIMEOUT_S, "an empty draft")


@dataclass
class Key:
    latency: float  # seconds from the write to the read that showed it
    harness: float  # seconds of that spent feeding the terminal model


def type_keys(
    term: Terminal, typist: Typist, rng: random.Random, go_on: Callable[[], bool]
) -> list[Key]:
    """Keys about ten a second while `go_on()`; each timed until the terminal shows it."""
    keys: list[Key] = []
    next_at = time.perf_counter() + KEY_GAP_S
    while go_on():
        now = time.perf_counter()
        if now < next_at:
            term.pump(min(next_at - now, 0.05))
            continue
        data = typist.next()
        fed = term.feeding
        term.send(data)
        written = time.perf_counter()
        try:
            shown = term.wait_for(draft_shown(term, typist.draft), KEY_TIMEOUT_S, "echo")
        except TimeoutError:
            shown = written + KEY_TIMEOUT_S
        keys.append(Key(shown - written, term.feeding - fed))
        next_at = max(written + KEY_GAP_S * rng.uniform(0.5, 1.5), shown)
    return keys


# -- the contenders ------------------------------------------------------------------------------


@dataclass
class Phase:
    keys: list[Key] = field(default_factory=list)
    wall: float = 0.0
    app_cpu: float = 0.0
    harness_cpu: float = 0.0


@dataclass
class Contender:
    name: str
    argv: list[str]
    env: dict[str, str]
    ready: str  # text on the screen once the app takes keys
    streams: bool = True  # False: the floor (a terminal echo), idle only
    phases: dict[str, Phase] = field(default_factory=dict)
    round_p95: dict[str, list[float]] = field(default_factory=dict)

    def measure(
        self, phase: str, term: Terminal, rng: random.Random, go_on: Callable[[], bool]
    ) -> None:
        """Type while `go_on()` and add the keys and the CPU used to `phase`."""
        typist = Typist(term)
        wall, app, own = time.perf_counter(), term.cpu(), time.process_time()
        keys = type_keys(term, typist, rng, go_on)
        run = self.phases.setdefault(phase, Phase())
        run.keys += keys
        run.wall += time.perf_counter() - wall
        run.app_cpu += term.cpu() - app
        run.harness_cpu += time.process_time() - own
        p95 = percentile([k.latency for k in keys], 0.95) if keys else float("nan")
        self.round_p95.setdefault(phase, []).append(p95)
        typist.rub_out()


def run_contender(
    who: Contender, server: AnswerServer, cwd: Path, args: argparse.Namespace, rng: random.Random
) -> None:
    """One fresh process: idle keys, then each rate's answers with keys typed through them."""
    term = Terminal(who.argv, who.env, cwd)
    try:
        term.wait_for(lambda: who.ready in term.text(), READY_TIMEOUT_S, f"{who.name} ready")
        term.idle_for(1.0)  # whatever the app does once its first frame is up
        end = time.perf_counter() + args.idle
        who.measure("idle", term, rng, lambda: time.perf_counter() < end)
        if not who.streams:
            return
        for rate, answers in args.phases:
            for _ in range(answers):
                prompt = f"rate={rate} please explain"
                for n in range(1, len(prompt) + 1):
                    term.send(prompt[n - 1].encode())
                    term.wait_for(draft_shown(term, prompt[:n]), SETUP_TIMEOUT_S, "the prompt")
                term.send(b"\r")
                term.wait_for(server.streaming, 20.0, "an answer")
                who.measure(f"{rate} chars/s", term, rng, server.streaming)
                term.idle_for(1.0)  # the turn ends; the next prompt starts a fresh one
    finally:
        term.close()


def contenders(args: argparse.Namespace, home: Path, cwd: Path) -> list[Contender]:
    ours = startup.tui_agent(home, cwd)
    assert ours.tui is not None
    root = str(startup.ROOT)
    found = [Contender("tui-agent", ours.tui, {**ours.env, "PYTHONPATH": root}, ours.footer)]
    if args.before:
        before = str(Path(args.before).resolve())
        env = {**ours.env, "PYTHONPATH": before}
        found.append(Contender("tui-agent before", ours.tui, env, ours.footer))
    binary = os.environ.get("CLAUDE_BIN") or shutil.which("claude")
    if binary:
        theirs = startup.claude_code(binary, home, cwd)
        assert theirs.tui is not None
        found.append(Contender(theirs.name, theirs.tui, theirs.env, CLAUDE_PROMPT))
    found.append(Contender("terminal's own echo", ["cat"], {}, "", streams=False))
    return found


# -- printing ------------------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def print_table(field_: list[Contender], rounds: int) -> None:
    print(f"\nkey echo in a {COLUMNS}x{ROWS} pty, {rounds} round(s), apps alternating; ms")
    print(
        f"{'phase':<16} {'app':<20} {'keys':>5} {'p50':>6} {'p95':>6} {'p99':>6} {'max':>7}"
        f" {'lost':>4}  {'app CPU':>7}  {'harness CPU':>11}  {'harness in key p95':>18}"
    )
    names = list(dict.fromkeys(p for c in field_ for p in c.phases))
    for phase in names:
        for who in field_:
            if phase not in who.phases:
                continue
            run = who.phases[phase]
            lat = [k.latency for k in run.keys]
            if not lat:
                print(f"{phase:<16} {who.name:<20} no key was typed while it lasted")
                continue
            lost = sum(k.latency >= KEY_TIMEOUT_S for k in run.keys)
            app = f"{run.app_cpu / run.wall:.0%}" if run.wall else "-"
            own = f"{run.harness_cpu / run.wall:.0%}" if run.wall else "-"
            print(
                f"{phase:<16} {who.name:<20} {len(lat):>5} {ms(percentile(lat, 0.5)):>6}"
                f" {ms(percentile(lat, 0.95)):>6} {ms(percentile(lat, 0.99)):>6}"
                f" {ms(max(lat)):>7} {lost:>4}  {app:>7}  {own:>11}"
                f"  {ms(percentile([k.harness for k in run.keys], 0.95)):>18}"
            )
    print("\neach round's p95 (ms)")
    for who in field_:
        for phase, values in who.round_p95.items():
            print(f"{phase:<16} {who.name:<20} " + " ".join(f"{ms(v):>6}" for v in values))
    ours = field_[0]
    for other in field_[1:]:
        if not other.streams:
            continue
        print(f"\n{ours.name} / {other.name}")
        print(f"{'phase':<16} {'p50':>6} {'p95':>6} {'p99':>6}  targets (streaming)")
        for phase, run in ours.phases.items():
            if phase not in other.phases:
                continue
            a = [k.latency for k in run.keys]
            b = [k.latency for k in other.phases[phase].keys]
            if not (a and b):
                continue
            ratios = [percentile(a, q) / percentile(b, q) for q in (0.5, 0.95, 0.99)]
            target = ""
            if phase != "idle" and other.name == "Claude Code":
                p95_ok = "✓" if ratios[1] <= 0.8 else "✗"
                p99_ok = "✓" if percentile(a, 0.99) <= 0.033 else "✗"
                target = f"p95 <= 0.8x {p95_ok}; our p99 <= 33 ms {p99_ok}"
            print(f"{phase:<16} " + " ".join(f"{r:>6.2f}" for r in ratios) + f"  {target}")


def parse_phase(text: str) -> tuple[int, int]:
    """`RATE` or `RATExANSWERS`: characters a second, and how many answers at that rate."""
    rate, _, answers = text.partition("x")
    return int(rate), int(answers or 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round, idle and 3,000 chars/s")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--idle", type=float, default=6.0, help="seconds of idle typing")
    parser.add_argument(
        "--phase",
        dest="phases",
        type=parse_phase,
        action="append",
        help="RATE[xANSWERS], repeatable (default: 600 and 3000x3)",
    )
    parser.add_argument("--size", type=int, default=10_000, help="characters in the answer")
    parser.add_argument("--before", help="also run our app from this tree (a git worktree)")
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.idle, args.phases = 1, 3.0, args.phases or [(3000, 1)]
    args.phases = args.phases or [(600, 1), (3000, 3)]
    rng = random.Random(args.seed)
    print(f"load average at the start: {Path('/proc/loadavg').read_text().strip()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="tui-agent-echo-") as name:
        home = Path(name)
        cwd = home / "ws"
        cwd.mkdir()
        server = AnswerServer(markdown_answer(args.size))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            field_ = contenders(args, home, cwd)
            base = {k: v for k, v in os.environ.items() if not k.startswith(("TEXTUAL", "OPENAI"))}
            base |= {"ANTHROPIC_API_KEY": startup.KEY, "ANTHROPIC_BASE_URL": server.url}
            base |= {**NO_NETWORK, "TERM": "xterm-256color", "COLORTERM": "truecolor"}
            for who in field_:
                who.env = {**base, **who.env}
            for round_no in range(args.rounds):
                order = field_ if round_no % 2 == 0 else field_[::-1]
                for who in order:
                    print(f"round {round_no + 1}: {who.name}", flush=True)
                    run_contender(who, server, cwd, args, rng)
        finally:
            server.shutdown()
            server.server_close()
    print_table(field_, args.rounds)
    print(f"\nload average at the end: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()
