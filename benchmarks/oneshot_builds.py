"""Where a one-shot's instructions go by kind of work: building dataclasses and pydantic model
classes (ours and others'), building pydantic schemas, and the rest.

Runs `tui-agent -p "say hi"` once under valgrind's callgrind with `--dump-before=getppid`: the
run calls `os.getppid()` as a marker just before and just after each outermost
`dataclasses._process_class`, pydantic `ModelMetaclass.__new__`, `complete_model_class` or
`TypeAdapter._init_core_attrs` (core schema) and `model_json_schema` / `TypeAdapter.json_schema`
call, so callgrind writes the instructions of every stretch between two markers to a file of
its own, and the stretches are summed by kind (with how many classes or schemas each counts).
Our dataclasses are split into the classes and the subclasses `tui_agent.lazy_dataclass` builds
to write their `__init__`; our model classes into those whose validator was built and those
whose was not (no `Model(...)` nor `model_validate` of them ran). The markers and wrappers add
a little (the total is ~1 % over `oneshot_instructions.py`'s). pydantic's own import, with the
dataclasses it defines, comes before the wrappers and counts as the rest. Like
`oneshot_classes.py` it wraps private names of the standard library and pydantic, as a
measurement, never imported by the package.

Run: `.venv/bin/python benchmarks/oneshot_builds.py` (needs valgrind; two or three minutes).
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import startup

# The program callgrind runs: the console script's `main` with the markers in place.
MARKED_RUN = """
import dataclasses, json, os, sys
from pydantic import main as pydantic_main, type_adapter
from pydantic._internal import _model_construction as construction

labels = []  # the kind of each stretch, in the order the markers end them
inside = [False]
models = []  # (index in labels, class) of each model class of ours built


def mark(label):
    labels.append(label)
    os.getppid()


def _writes_init(cls):
    # tui_agent.lazy_dataclass builds a class's __init__ on a subclass named as the class.
    return len(cls.__bases__) == 1 and cls.__qualname__ == cls.__bases__[0].__qualname__


def wrap(owner, name, kind):
    raw = vars(owner).get(name) if isinstance(owner, type) else None
    bound = isinstance(raw, classmethod)
    original = raw.__func__ if bound else getattr(owner, name)

    def marked(*args, **kwargs):
        if inside[0]:
            return original(*args, **kwargs)
        mark("the rest")
        inside[0] = True
        whose = ""
        try:
            done = original(*args, **kwargs)
            cls = done if isinstance(done, type) else args[0] if args else None
            ours = isinstance(cls, type) and cls.__module__.startswith("tui_agent")
            whose = " (ours)" if ours else " (others')"
            if ours and kind == "dataclass classes" and _writes_init(cls):
                whose = " (ours, __init__ writers)"
            return done
        finally:
            inside[0] = False
            if kind == "pydantic model classes" and whose == " (ours)":
                models.append((len(labels), cls))
            mark(kind + whose)

    setattr(owner, name, classmethod(marked) if bound else marked)


wrap(dataclasses, "_process_class", "dataclass classes")
wrap(construction.ModelMetaclass, "__new__", "pydantic model classes")
wrap(construction, "complete_model_class", "pydantic core schemas")
wrap(type_adapter.TypeAdapter, "_init_core_attrs", "pydantic core schemas")
wrap(pydantic_main.BaseModel, "model_json_schema", "pydantic JSON schemas")
wrap(type_adapter.TypeAdapter, "json_schema", "pydantic JSON schemas")
sys.argv = ["tui-agent", *sys.argv[1:]]
from tui_agent.entry import main

try:
    main()
finally:
    mark("the rest")
    for index, cls in models:
        # Its own validator never built (still pydantic's stand-in): no `Model(...)` nor
        # `model_validate` of it ran.
        if type(vars(cls).get("__pydantic_validator__")).__name__.startswith("Mock"):
            labels[index] = "pydantic model classes (ours, no validator built)"
    with open(os.environ["BUILDS_LABELS"], "w") as out:
        json.dump(labels, out)
"""
_TOTAL = re.compile(r"^(?:summary|totals):\s+(\d+)", re.MULTILINE)


def main() -> None:
    counts: collections.Counter[str] = collections.Counter()
    built: collections.Counter[str] = collections.Counter()  # classes (or schemas) per kind
    with tempfile.TemporaryDirectory(prefix="tui-agent-builds-") as name:
        folder = Path(name)
        workspace = folder / "ws"
        workspace.mkdir()
        env = {
            **{k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "PYTHONPATH")},
            "ANTHROPIC_API_KEY": startup.KEY,
            "TUI_AGENT_HOME": str(folder / "home"),
            "PYTHONHASHSEED": "0",
            "BUILDS_LABELS": str(folder / "labels.json"),
        }
        callgrind = [
            "valgrind",
            "--tool=callgrind",
            "--dump-before=getppid",
            f"--callgrind-out-file={folder / 'cg'}",
        ]
        argv = [sys.executable, "-c", MARKED_RUN, *startup.OURS_ARGS, "-p", "say hi"]
        with startup.messages_server(0) as url:
            done = subprocess.run(
                [*callgrind, *argv],
                env={**env, "ANTHROPIC_BASE_URL": url},
                cwd=workspace,
                capture_output=True,
                check=True,
            )
        assert done.stdout.strip() == b"hi", done.stdout
        dumps = sorted(folder.glob("cg.*"), key=lambda path: int(path.suffix[1:]))
        stretches = [*dumps, folder / "cg"]  # the last stretch is written at exit
        labels = [*json.loads((folder / "labels.json").read_text()), "the rest"]
        assert len(labels) == len(stretches), (len(labels), len(stretches))
        for label, path in zip(labels, stretches, strict=True):
            found = _TOTAL.search(path.read_text())
            counts[label] += int(found.group(1)) if found else 0
            built[label] += 1
    total = sum(counts.values())
    print('one-shot `-p "say hi"`, instructions by kind of work (valgrind callgrind, one run);')
    print("the last column: how many classes or schemas were built")
    for label, count in counts.most_common():
        many = "" if label == "the rest" else f"{built[label]:>5}"
        print(f"{label:<52} {count / 1e6:>9.1f} M  {count / total:>4.0%}{many}")
    print(f"{'total':<52} {total / 1e6:>9.1f} M")


if __name__ == "__main__":
    main()
