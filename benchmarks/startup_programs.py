"""The small programs `startup.py` runs beside the contenders: the floors (a bare Textual app, an
httpx one-shot) and the full-screen app drawn headless to its first frame, whose imports
`startup_imports.py` profiles."""

from __future__ import annotations

FIRST_FRAME = "-- first frame drawn --"

# The full-screen app's floor: Textual's import and first layout, with the footer and input
# that make our frame usable.
BARE_APP = """
from textual.app import App
from textual.widgets import Footer, Input

class Bare(App[None]):
    BINDINGS = [("ctrl+q", "quit", "Quit")]

    def compose(self):
        yield Input()
        yield Footer()

Bare().run()
"""

# The floor of a Python one-shot that speaks HTTP as ours does: httpx's async client streams the
# same request's SSE answer and prints its text (httpx loads httpcore, anyio and h11 only here).
HTTPX_ONE_SHOT = """
import asyncio, json, os, httpx

async def main():
    body = {"model": "bench", "max_tokens": 64, "stream": True,
            "messages": [{"role": "user", "content": "say hi"}]}
    url = os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages"
    headers = {"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01"}
    text = []
    async with httpx.AsyncClient(verify=False) as client:
        async with client.stream("POST", url, json=body, headers=headers) as response:
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[6:])
                    if event["type"] == "content_block_delta":
                        text.append(event["delta"]["text"])
    print("".join(text))

asyncio.run(main())
"""

# The same one-shot after importing the libraries every turn of ours needs, whichever tools it
# calls: pydantic with its field machinery (any model with a field loads `pydantic.fields`, and
# with it annotated_types), python-statemachine (the three machines), aiofiles (the session's
# log) and platformdirs (where the configuration and sessions live), with cyclic garbage
# collection off from the start as our entry point runs (`tui_agent.entry`). What a one-shot
# costs beyond this is our own code: its modules, classes and schemas, and the turn.
LIBRARIES_ONE_SHOT = (
    "import gc\ngc.disable()\n"
    "import aiofiles, platformdirs, pydantic.fields, pydantic.main, statemachine\n" + HTTPX_ONE_SHOT
)

# The app as `tui_agent.ui.run` starts it, with a loop that never opens (the real one starts
# loading only after the first frame), drawn headless; the marker goes to stderr at the frame.
# Garbage collection is off, as the command line keeps it until the first frame (`entry`).
APP_TO_FIRST_FRAME = f"""
import gc
gc.disable()
import asyncio, os
from tui_agent.cli import _config, _parser
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.opening import OpeningLoop
from tui_agent.ui.run import _appearance, _starting

async def never_opens():
    await asyncio.Event().wait()

async def first_frame():
    config = _config(_parser().parse_args([]))
    app = TuiAgentApp(OpeningLoop(_starting(config), never_opens), appearance=_appearance())
    async with app.run_test(size=(120, 40)):
        os.write(2, b"{FIRST_FRAME}\\n")

asyncio.run(first_frame())
"""
