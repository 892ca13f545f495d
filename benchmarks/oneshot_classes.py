"""What a one-shot builds and what it uses: classes and modules of ours on the `-p` path.

Runs `tui-agent -p "say hi"` in this process against `startup.py`'s local server, with
`dataclasses._process_class` and pydantic's model metaclass wrapped to record each class built
and the CPU its build took, and a profile hook that records each class whose `__init__`,
`__post_init__`, `model_validate*` or `model_construct` ran and each module one of whose
functions ran; a pydantic model also counts as used when its schema was built. Prints, per
module of ours: whether any of its functions ran, classes used / built, and the unused ones;
then the build CPU by kind (the profile hook inflates it: read it as proportions).

Our dataclasses are built at their first use (`tui_agent.lazy_dataclass`): one never used is
not built, so not listed, and each one built is listed with the subclass that wrote its
`__init__`. A module that ran nothing and defines no used class is a candidate to load where it
is used.
It wraps two private names (`dataclasses._process_class`, pydantic's `ModelMetaclass`), since
neither library has a public hook for "a class was built"; it is a measurement, never imported
by the package.

Run: `.venv/bin/python benchmarks/oneshot_classes.py` (a few seconds).
"""

from __future__ import annotations

import collections
import dataclasses
import inspect
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

import startup

USES = ("__init__", "__post_init__", "__new__", "model_construct")
built: dict[type, tuple[str, float]] = {}  # class -> (kind, CPU seconds to build it)
used: collections.Counter[type] = collections.Counter()
ran: set[str] = set()


def _record_builds() -> None:
    process_class = dataclasses._process_class  # type: ignore[attr-defined]

    def dataclass_built(cls: type, *args: Any, **kwargs: Any) -> type:
        start = time.process_time()
        done: type = process_class(cls, *args, **kwargs)
        frozen = done.__dataclass_params__.frozen  # type: ignore[attr-defined]
        built[done] = ("frozen" if frozen else "dataclass", time.process_time() - start)
        return done

    dataclasses._process_class = dataclass_built  # type: ignore[attr-defined]
    # Imported after the wrap, so that pydantic's own dataclasses are counted too.
    from pydantic._internal import _model_construction

    new_model = _model_construction.ModelMetaclass.__new__

    def model_built(mcs: type, *args: Any, **kwargs: Any) -> type:
        start = time.process_time()
        cls = new_model(mcs, *args, **kwargs)  # type: ignore[arg-type]
        built[cls] = ("pydantic", time.process_time() - start)
        return cls

    _model_construction.ModelMetaclass.__new__ = model_built  # type: ignore[assignment,method-assign]


def _profile(frame: FrameType, event: str, arg: object) -> None:
    if event != "call":
        return
    code = frame.f_code
    if code.co_flags & inspect.CO_OPTIMIZED:  # a function, not a module or class body
        ran.add(code.co_filename)
    if code.co_name in USES or code.co_name.startswith("model_validate"):
        subject = frame.f_locals.get("self", frame.f_locals.get("cls"))
        if subject is not None:
            cls = subject if isinstance(subject, type) else type(subject)
            used.update(cls.__mro__)


def _is_used(cls: type) -> bool:
    validator = getattr(cls, "__pydantic_validator__", None)
    schema_built = validator is not None and not type(validator).__name__.startswith("Mock")
    return used[cls] > 0 or schema_built


def one_shot() -> None:
    home = Path(tempfile.mkdtemp(prefix="tui-agent-classes-"))
    workspace = home / "ws"
    workspace.mkdir()
    with startup.messages_server(0) as url:
        os.environ.update(
            ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY=startup.KEY, TUI_AGENT_HOME=str(home)
        )
        sys.argv = ["tui-agent", *startup.OURS_ARGS, "-p", "say hi"]
        os.chdir(workspace)
        sys.setprofile(_profile)
        threading.setprofile(_profile)
        from tui_agent.entry import main

        status = main()
        sys.setprofile(None)
    if status != 0:
        raise SystemExit(f"the one-shot exited {status}")


def report() -> None:
    ours = {cls: kind for cls, kind in built.items() if cls.__module__.startswith("tui_agent")}
    modules = sorted(name for name in sys.modules if name.startswith("tui_agent"))
    print(f"\nours: {len(ours)} of {len(built)} classes built, {len(modules)} modules loaded")
    print(f"{'module':44} {'ran':>3} {'used/built':>10}  unused")
    for name in modules:
        classes = [cls for cls in ours if cls.__module__ == name]
        unused = [cls.__qualname__ for cls in classes if not _is_used(cls)]
        did_run = "yes" if getattr(sys.modules[name], "__file__", None) in ran else "-"
        count = f"{len(classes) - len(unused)}/{len(classes)}"
        print(f"{name:44} {did_run:>3} {count:>10}  {' '.join(unused)}")
    cpu: collections.Counter[str] = collections.Counter()
    for cls, (kind, seconds) in built.items():
        cpu[("ours " if cls in ours else "others' ") + kind] += seconds
    print("\nbuild CPU by kind (under the profile hook): ", end="")
    print(", ".join(f"{kind} {seconds * 1000:.0f} ms" for kind, seconds in sorted(cpu.items())))


if __name__ == "__main__":
    _record_builds()
    one_shot()
    report()
