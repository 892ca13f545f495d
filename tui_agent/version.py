"""The installed package's version, for the places that name us to another program."""

from __future__ import annotations

from functools import cache
from importlib.metadata import PackageNotFoundError, version


@cache
def package_version() -> str:
    try:
        return version("tui-agent")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0"
