"""The browser tabs of `tui-agent serve` and their app processes.

Each tab runs its own app process (textual-serve's `AppService`, one session per tab). A tab
names itself with an id the page keeps in the browser tab's `sessionStorage`, which survives a
reload but not a new tab: a websocket that comes back with that id within `reconnect_s` gets the
same app back, still running, instead of a new one. An app with no tab attached after that, or
with no input from its tab for `idle_s`, is asked to quit: it cancels its turn and seals its log
as Ctrl+Q does, so the session resumes from the sessions list. An app that does not quit within
`quit_s` is killed (its log is then repaired when the session is next opened).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
from collections.abc import Mapping

from aiohttp import web

from tui_agent.lazy_dataclass import dataclass
from tui_agent.serve._textual_serve_hooks import AppProcess

# The desktop notification the app asks a terminal for (`ui/notifications.py`): OSC 9.
_NOTIFICATION = re.compile(rb"\x1b\]9;([^\x07\x1b]*)\x07")


@dataclass(frozen=True)
class TabLimits:
    max_sessions: int = 4
    idle_s: float | None = 30 * 60.0  # None: an idle tab's app runs on
    reconnect_s: float = 60.0
    quit_s: float = 10.0


class Tab:
    """One app process and the websocket (if any) of the browser tab that shows it."""

    def __init__(
        self, key: str, command: str, environment: Mapping[str, str], limits: TabLimits
    ) -> None:
        self.key = key
        self.socket: web.WebSocketResponse | None = None
        self.size = (80, 24)
        self.app = AppProcess(
            command,
            write_bytes=self._to_page,
            write_str=self._to_page_text,
            close=self._close_page,
            extra_environment=environment,
        )
        self._limits = limits
        self._last_input = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._ending: asyncio.Task[None] | None = None

    @property
    def ending(self) -> bool:
        return self._ending is not None

    async def start(self, socket: web.WebSocketResponse, width: int, height: int) -> None:
        self.socket = socket
        self.size = (width, height)
        await self.app.start(width, height)
        self.note_input()

    def attach(self, socket: web.WebSocketResponse) -> None:
        """A reloaded page takes the app back; it repaints on the size the page sends next."""
        self.socket = socket
        if self._timer is not None:
            self._timer.cancel()  # the reconnect deadline; the idle one starts again below
            self._timer = None
        self.note_input()

    async def detach(self, socket: web.WebSocketResponse) -> None:
        """The page went away: the app waits `reconnect_s` for it, unseen. It is given another
        width meanwhile, so that the size the returning page sends is a change, on which
        Textual paints the whole screen (an unchanged size repaints nothing)."""
        if self.socket is not socket or self.ending:
            return
        self.socket = None
        width, height = self.size
        await self.app.set_terminal_size(width + 1, height)
        self._schedule(self._limits.reconnect_s)

    async def resize(self, width: int, height: int) -> None:
        self.size = (width, height)
        await self.app.set_terminal_size(width, height)

    def note_input(self) -> None:
        """The tab did something: the idle time starts again."""
        self._last_input = asyncio.get_running_loop().time()
        if self.socket is not None and self._limits.idle_s is not None:
            self._schedule(self._limits.idle_s)

    def end(self) -> asyncio.Task[None]:
        """Ask the app to quit (idempotent); the task ends when its process has."""
        if self._ending is None:
            if self._timer is not None:
                self._timer.cancel()
            self._ending = asyncio.create_task(self._quit())
        return self._ending

    async def _quit(self) -> None:
        # The deadline is on the process, not on textual-serve's `stop`, which waits for its
        # reader of the app's output and swallows a cancellation on the way.
        stopping = asyncio.create_task(self._stop_reader())
        try:
            await asyncio.wait_for(self.app.exited(), self._limits.quit_s)
        except TimeoutError:
            self.app.kill()
            await self.app.exited()
        await stopping  # the reader ends with the process's output
        await self._close_page()

    async def _stop_reader(self) -> None:
        """Ask the app to quit and wait for textual-serve's reader of its output to end."""
        try:
            await self.app.stop()
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # this task is being cancelled
            # textual-serve's reader re-raises the cancellation of its own helper task when the
            # app ended before that task first ran (an app that failed to start): it is done.

    def _schedule(self, delay: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(delay, self._expire)

    def _expire(self) -> None:
        self._timer = None
        loop = asyncio.get_running_loop()
        idle_s = self._limits.idle_s
        if self.socket is None or idle_s is None:
            self.end()  # nobody came back within reconnect_s (an attached tab has an idle_s)
        elif (left := self._last_input + idle_s - loop.time()) > 0:
            self._schedule(left)
        else:
            self.end()

    async def _to_page(self, data: bytes) -> None:
        socket = self.socket
        if socket is None or socket.closed:
            return  # unseen: the returning page gets a whole repaint
        with contextlib.suppress(ConnectionError, RuntimeError):
            await socket.send_bytes(data)
            for match in _NOTIFICATION.finditer(data):
                await socket.send_json(["notify", match[1].decode("utf-8", "replace")])

    async def _to_page_text(self, text: str) -> None:
        socket = self.socket
        if socket is not None and not socket.closed:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await socket.send_str(text)

    async def _close_page(self) -> None:
        if self.socket is not None:
            await self.socket.close()


class Tabs:
    """Every tab's app, at most `limits.max_sessions` of them (those awaiting their page
    included)."""

    def __init__(self, command: str, environment: Mapping[str, str], limits: TabLimits) -> None:
        self._command = command
        self._environment = environment
        self.limits = limits
        self._tabs: dict[str, Tab] = {}
        self._watchers: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        return len(self._tabs)

    def returning(self, key: str) -> Tab | None:
        """The app of the tab `key` when it waits for its page."""
        tab = self._tabs.get(key)
        return tab if tab is not None and tab.socket is None and not tab.ending else None

    @property
    def full(self) -> bool:
        return len(self._tabs) >= self.limits.max_sessions

    async def open(self, key: str, socket: web.WebSocketResponse, width: int, height: int) -> Tab:
        """A new app for the tab `key` (a duplicated browser tab, which copies its id, gets
        one of its own)."""
        if key in self._tabs:
            key = secrets.token_hex(16)
        tab = self._tabs[key] = Tab(key, self._command, self._environment, self.limits)
        await tab.start(socket, width, height)
        watcher = asyncio.create_task(self._forget_when_gone(tab))
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)
        return tab

    async def _forget_when_gone(self, tab: Tab) -> None:
        try:
            await tab.app.exited()
            await tab.end()  # an app that quit by itself (Ctrl+Q) still needs its reader stopped
        finally:
            self._tabs.pop(tab.key, None)

    async def end_all(self) -> None:
        """Every app cancels its turn and seals its log (the server is stopping)."""
        await asyncio.gather(*(tab.end() for tab in list(self._tabs.values())))

    def kill_all(self) -> None:
        for tab in self._tabs.values():
            tab.app.kill()
