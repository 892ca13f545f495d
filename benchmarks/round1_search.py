"""A child process of `benchmarks/tools.py`: runs the `grep` and `glob` tools of whatever
`tui_agent` package comes first on PYTHONPATH (there, round 1's, extracted from git) and
measures each call.

Run as `python round1_search.py <workspace>`. It first prints the file of the `tui_agent` it
imported, so the parent can check that it is the old package; then for each request line on
stdin, `{"tool": "grep", "args": {...}}`, it calls the tool through its public API and prints
`{"wall": s, "cpu": s, "is_error": bool, "text": output}`.
"""

from __future__ import annotations

import asyncio
import gc
import json
import resource
import sys
import time
from typing import Any


def cpu_seconds() -> float:
    """CPU time of this process (all its threads) and of the children it waited for."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


async def serve(root: str) -> None:
    import tui_agent
    from tui_agent.tools import ToolContext, Workspace, default_registry
    from tui_agent.vocab import AbortSignal

    print(json.dumps(tui_agent.__file__), flush=True)
    workspace = Workspace(root)
    registry = default_registry(workspace)
    ctx = ToolContext(AbortSignal(), lambda u: None, lambda a: None, workspace, "round1")
    for line in sys.stdin:
        request = json.loads(line)
        tool: Any = registry.get(request["tool"])
        args = tool.Args.model_validate(request["args"])
        gc.collect()
        wall, cpu = time.perf_counter(), cpu_seconds()
        result = await tool.execute(args, ctx)
        reply = {
            "wall": time.perf_counter() - wall,
            "cpu": cpu_seconds() - cpu,
            "is_error": result.is_error,
            "text": result.text,
        }
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1]))
