"""One layout per change of size, where Textual would run two.

After a layout, Textual hands each widget its new size and, when the widget's virtual
(scrollable) size changed, asks for a second layout of the whole screen. For a widget whose
virtual size follows from the layout just run (a leaf that measured its own lines; the
transcript, whose content is what was just arranged) that second pass only repeats the first:
while an answer streams, every frame paid for two layouts and two full recomposites. A
scrollbar that appears or goes still asks for its own layout.
"""

from __future__ import annotations

from tui_agent.ui._textual_hooks import SizeUpdateHook


class LaidOutOnce(SizeUpdateHook):
    """Takes a new virtual size without asking for another layout (see the module); list it
    before the widget class it is mixed into."""

    LAYOUT_ON_VIRTUAL_RESIZE = False
