"""One layout per change of size, where Textual would run two.

After a layout, Textual hands each widget its new size and, when the widget's virtual
(scrollable) size changed, asks for a second layout of the whole screen. For a widget whose
virtual size follows from the layout just run (a leaf that measured its own lines; the
transcript, whose content is what was just arranged) that second pass only repeats the first:
while an answer streams, every frame paid for two layouts and two full recomposites. A
scrollbar that appears or goes still asks for its own layout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.geometry import Size
from textual.widget import Widget

# A mixin, not a Widget subclass: as a base before a container it would bring `Widget`'s
# default CSS ahead of the container's (a transcript that could no longer scroll).
if TYPE_CHECKING:
    _Base = Widget
else:
    _Base = object


class LaidOutOnce(_Base):
    """Takes a new virtual size without asking for another layout (see the module); list it
    before the widget class it is mixed into."""

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        return super()._size_updated(size, virtual_size, container_size, layout=False)
