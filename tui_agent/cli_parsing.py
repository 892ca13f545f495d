"""What every subcommand's parser shares: a bad command line raises `UsageError` (its message
printed with exit status 2 by the caller) instead of argparse's own exit."""

from __future__ import annotations

import argparse


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)
