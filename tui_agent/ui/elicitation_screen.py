"""The form an MCP server asks the person to fill in (`elicitation/create`).

`ElicitationForm` builds one input per field of the requested schema: a text box for strings
and numbers, a checkbox for booleans, a choice list for enums, a multi-select for arrays of
choices; each pre-filled with the server's default. Accept checks every field (the rules live
with the request, `ElicitRequest.check`) and shows what is wrong under each field instead of
sending; Decline and Cancel (Esc) send no data. In URL mode the form shows the page's address;
on Accept the MCP client opens it in the browser. Tab moves between fields, Enter in a text
box accepts. `ask` is what the app hands the loop as its `Elicit`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Select, SelectionList, Static

from tui_agent.loop.elicitation import ElicitAnswer, ElicitRequest, FormField, Value

if TYPE_CHECKING:
    from textual.app import App


class ElicitationForm(ModalScreen[ElicitAnswer]):
    # Its own look: the form is self-contained and shown by nothing else.
    DEFAULT_CSS = """
    ElicitationForm { align: center middle; }
    #elicitation-box {
        width: 80%; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    #elicitation-box .title { text-style: bold; color: $accent; margin: 1 0 0 0; }
    #elicitation-message { margin: 0 0 1 0; }
    #elicitation-box .field-label { text-style: bold; }
    #elicitation-box .field-help { color: $text-muted; }
    #elicitation-box .field-error { color: $error; display: none; }
    #elicitation-box .field-error.shown { display: block; }
    #elicitation-box SelectionList { height: auto; max-height: 8; }
    #elicitation-buttons { height: auto; margin: 1 0; }
    #elicitation-buttons Button { margin: 0 2 0 0; }
    """
    # Tab is the form's own: the app turns its keys off while a dialog is up.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("tab", "next_field", show=False),
        Binding("shift+tab", "previous_field", show=False),
    ]

    def __init__(self, request: ElicitRequest) -> None:
        super().__init__()  # no id: two servers may ask at once, each gets a form
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        with VerticalScroll(id="elicitation-box"):
            yield Static(f'MCP server "{request.server}" asks', classes="title")
            yield Static(request.message, id="elicitation-message", markup=False)
            if request.url is not None:
                yield Static(f"Accept opens: {request.url}", id="elicitation-url", markup=False)
            defaults = request.defaults()
            for field in request.fields:
                if field.kind != "boolean":  # a checkbox carries its own label
                    label = field.title + (" *" if field.required else "")
                    yield Static(label, classes="field-label", markup=False)
                if field.description:
                    yield Static(field.description, classes="field-help", markup=False)
                yield _input(field, defaults.get(field.name))
                yield Static("", id=f"error-{field.name}", classes="field-error", markup=False)
            with Horizontal(id="elicitation-buttons"):
                yield Button("Accept", id="accept", variant="primary")
                yield Button("Decline", id="decline")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        # The form takes the keyboard at once (the app sends typing to its prompt otherwise).
        first = self.request.fields[0].name if self.request.fields else None
        self.query_one(f"#field-{first}" if first else "#accept").focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "accept":
            self._accept()
        elif event.button.id == "decline":
            self.dismiss(ElicitAnswer("decline"))
        else:
            self.dismiss(ElicitAnswer("cancel"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._accept()  # Enter in a text box sends the form, as in a browser

    def action_cancel(self) -> None:
        self.dismiss(ElicitAnswer("cancel"))

    def action_next_field(self) -> None:
        self.focus_next()

    def action_previous_field(self) -> None:
        self.focus_previous()

    def _accept(self) -> None:
        if self.request.url is not None:
            self.dismiss(ElicitAnswer("accept"))  # the client opens the page (where it can)
            return
        typed = {field.name: self._typed(field) for field in self.request.fields}
        content, problems = self.request.check(typed)
        for field in self.request.fields:
            error = self.query_one(f"#error-{field.name}", Static)
            error.update(problems.get(field.name, ""))
            error.set_class(field.name in problems, "shown")
        if problems:
            first = next(f for f in self.request.fields if f.name in problems)
            self.query_one(f"#field-{first.name}").focus()
            return
        self.dismiss(ElicitAnswer("accept", content))

    def _typed(self, field: FormField) -> Value | None:
        widget = self.query_one(f"#field-{field.name}")
        if isinstance(widget, Checkbox):
            return widget.value
        if isinstance(widget, Select):
            value = widget.value
            return None if value is Select.BLANK else str(value)
        if isinstance(widget, SelectionList):
            return [str(value) for value in widget.selected]
        assert isinstance(widget, Input)
        return widget.value


def _input(field: FormField, default: Value | None) -> Any:
    wid = f"field-{field.name}"
    if field.kind == "boolean":
        return Checkbox(field.title, value=bool(default), id=wid)
    if field.kind == "enum":
        options = list(zip(field.labels, field.choices, strict=True))
        value = str(default) if default is not None else Select.BLANK
        return Select(options, value=value, allow_blank=not field.required, id=wid)
    if field.kind == "multi":
        chosen = set(default) if isinstance(default, list) else set()
        items = [
            (label, value, value in chosen)
            for label, value in zip(field.labels, field.choices, strict=True)
        ]
        return SelectionList[str](*items, id=wid)
    placeholder = {"number": "a number", "integer": "a whole number"}.get(field.kind, "")
    text = "" if default is None else str(default)
    return Input(text, placeholder=placeholder, id=wid)


async def ask(app: App[Any], request: ElicitRequest) -> ElicitAnswer:
    """Show the form and wait for the person's answer."""
    answer: asyncio.Future[ElicitAnswer] = asyncio.get_running_loop().create_future()

    def done(result: ElicitAnswer | None) -> None:
        if not answer.done():
            answer.set_result(result or ElicitAnswer("cancel"))

    form = ElicitationForm(request)
    app.push_screen(form, callback=done)
    try:
        return await answer
    except asyncio.CancelledError:
        # The call that asked was cancelled (or its server went away): take the form down.
        if form.is_active:
            form.dismiss(ElicitAnswer("cancel"))
        raise
