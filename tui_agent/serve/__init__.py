"""`tui-agent serve`: the full-screen app in browser tabs, through textual-serve.

The command line and shutdown are `_command`, the web server and its token and origin checks
`_server`, the tabs and their app processes (reconnect, idle time, the session limit) `_tabs`;
`_textual_serve_hooks` is the one module that touches textual-serve's private surface.
"""

from __future__ import annotations

from tui_agent.serve._command import main

__all__ = ["main"]
