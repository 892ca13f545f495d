"""Every place `tui-agent serve` reaches into textual-serve's private surface.

textual-serve (`textual_serve.app_service.AppService`) runs one app process per browser tab and
relays its terminal stream; its public surface has no way to add variables to the process's
environment or to end a process that does not quit. Both private names it needs are here, and
nothing else in `tui_agent/` touches textual-serve's private surface (`scripts/check_fences.py`);
`tests/serve/test_textual_serve_canaries.py` checks each against the installed textual-serve.

PRIVATE NAMES (each has a canary in `tests/serve/test_textual_serve_canaries.py`, which also
checks that this list and its canaries are the same):
- `AppService._build_environment`: the app process's environment (the server's, plus the
  variables that select Textual's web driver); the API keys the app needs are added to it
  (`AppProcess.extra_environment`).
- `AppService._process`: the app process; the server waits for it to end (`AppProcess.exited`)
  and kills one that does not quit when asked (`AppProcess.kill`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager


class AppProcess(AppService):
    """One tab's app process, started with `extra_environment` added to its environment."""

    def __init__(
        self,
        command: str,
        *,
        write_bytes: Callable[[bytes], Awaitable[None]],
        write_str: Callable[[str], Awaitable[None]],
        close: Callable[[], Awaitable[None]],
        extra_environment: Mapping[str, str],
    ) -> None:
        super().__init__(
            command,
            write_bytes=write_bytes,
            write_str=write_str,
            close=close,
            download_manager=DownloadManager(),
        )
        self.extra_environment = dict(extra_environment)

    async def exited(self) -> int:
        """Wait for the started app process to end; its exit status."""
        assert self._process is not None, "the app process was never started"
        return await self._process.wait()

    def kill(self) -> None:
        """End the app process at once (it did not quit when asked)."""
        if self._process is not None and self._process.returncode is None:
            self._process.kill()

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width, height)
        environment.update(self.extra_environment)
        return environment
