"""Where the app's Textual CSS lives: `styles/` in a checkout, `tui_agent/_styles` in a wheel."""

from __future__ import annotations

from pathlib import Path


def stylesheet_paths() -> list[Path]:
    package = Path(__file__).resolve().parents[1]
    for folder in (package.parent / "styles", package / "_styles"):
        if folder.is_dir():
            return sorted(folder.glob("*.tcss"))
    return []
