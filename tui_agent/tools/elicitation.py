"""Elicitation: an MCP server asks the person for input in the middle of a call.

A request is either a form (a flat JSON schema of strings, numbers, integers, booleans and
enums) or, in URL mode, a page the person should open. `ElicitRequest` is what a front end
shows; it answers with an `ElicitAnswer` (accept with content, decline, cancel). The schema is
read into `FormField`s here, once, so every front end fills and checks a form the same way:
`FormField.parse` turns what was typed into the value the server gets, or says why it cannot.
Where nobody can answer (headless, ACP) `decline_unanswerable` declines with a notice.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import field
from typing import Any, Literal

from tui_agent.lazy_dataclass import dataclass

ElicitAction = Literal["accept", "decline", "cancel"]
FieldKind = Literal["string", "number", "integer", "boolean", "enum", "multi"]
Value = str | int | float | bool | list[str]


class FieldError(ValueError):
    """What is wrong with one typed value, in words for the person."""


@dataclass(frozen=True)
class FormField:
    name: str
    kind: FieldKind
    title: str
    description: str = ""
    required: bool = False
    default: Value | None = None
    choices: tuple[str, ...] = ()  # enum values, in the server's order
    labels: tuple[str, ...] = ()  # what each choice shows (enumNames / oneOf titles)
    min_length: int | None = None
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    format: str | None = None

    def parse(self, typed: Value | None) -> Value | None:
        """The value to send for what the person entered (None: left empty)."""
        if typed is None or typed == "" or typed == []:
            if self.required:
                raise FieldError("required")
            return None
        if self.kind == "boolean":
            return bool(typed)
        if self.kind == "multi":
            chosen = [str(typed)] if not isinstance(typed, list) else typed
            unknown = [value for value in chosen if value not in self.choices]
            if unknown:
                raise FieldError(f"not one of the choices: {', '.join(map(str, unknown))}")
            return chosen
        text = str(typed).strip()
        if self.kind == "enum":
            if text not in self.choices:
                raise FieldError(f"choose one of: {', '.join(self.choices)}")
            return text
        if self.kind in ("number", "integer"):
            return self._number(text)
        if self.min_length is not None and len(text) < self.min_length:
            raise FieldError(f"at least {self.min_length} characters")
        if self.max_length is not None and len(text) > self.max_length:
            raise FieldError(f"at most {self.max_length} characters")
        if self.format == "email" and ("@" not in text or text.startswith("@")):
            raise FieldError("an email address")
        if self.format in ("uri", "url") and "://" not in text:
            raise FieldError("a URL such as https://example.com")
        return text

    def _number(self, text: str) -> int | float:
        try:
            number: int | float = int(text) if self.kind == "integer" else float(text)
        except ValueError:
            raise FieldError("a whole number" if self.kind == "integer" else "a number") from None
        if isinstance(number, float) and not math.isfinite(number):
            raise FieldError("a finite number")
        if self.minimum is not None and number < self.minimum:
            raise FieldError(f"at least {self.minimum:g}")
        if self.maximum is not None and number > self.maximum:
            raise FieldError(f"at most {self.maximum:g}")
        return number


@dataclass(frozen=True)
class ElicitRequest:
    server: str
    message: str
    fields: tuple[FormField, ...] = ()
    url: str | None = None  # URL mode: the page to open instead of a form

    def defaults(self) -> dict[str, Value]:
        """The form as the server pre-fills it (SEP-1034 defaults)."""
        return {each.name: each.default for each in self.fields if each.default is not None}

    def check(self, typed: Mapping[str, Value | None]) -> tuple[dict[str, Value], dict[str, str]]:
        """The content to send, and the problems by field name (empty when it can be sent)."""
        content: dict[str, Value] = {}
        problems: dict[str, str] = {}
        for each in self.fields:
            try:
                value = each.parse(typed.get(each.name))
            except FieldError as error:
                problems[each.name] = str(error)
                continue
            if value is not None:
                content[each.name] = value
        return content, problems


@dataclass(frozen=True)
class ElicitAnswer:
    action: ElicitAction
    content: dict[str, Value] = field(default_factory=dict)


Elicit = Callable[[ElicitRequest], Awaitable[ElicitAnswer]]


def form_fields(schema: Mapping[str, Any]) -> tuple[FormField, ...]:
    """The fields of a requested schema (top-level properties only, as the spec restricts it)."""
    required = set(schema.get("required") or ())
    fields = []
    for name, prop in (schema.get("properties") or {}).items():
        if isinstance(prop, Mapping):
            fields.append(_field(str(name), prop, name in required))
    return tuple(fields)


def _field(name: str, prop: Mapping[str, Any], required: bool) -> FormField:
    kind: FieldKind = "string"
    choices: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    typ = prop.get("type")
    if "enum" in prop or "oneOf" in prop or "anyOf" in prop:
        kind = "enum"
        choices, labels = _choices(prop)
    elif typ == "array":
        kind = "multi"
        choices, labels = _choices(prop.get("items") or {})
    elif typ in ("number", "integer", "boolean"):
        kind = typ
    return FormField(
        name=name,
        kind=kind,
        title=str(prop.get("title") or name),
        description=str(prop.get("description") or ""),
        required=required,
        default=prop.get("default"),
        choices=choices,
        labels=labels or choices,
        min_length=prop.get("minLength"),
        max_length=prop.get("maxLength"),
        minimum=prop.get("minimum"),
        maximum=prop.get("maximum"),
        format=prop.get("format"),
    )


def _choices(prop: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Values and their labels from `enum` (+ legacy `enumNames`) or titled `oneOf`/`anyOf`."""
    if "enum" in prop:
        values = tuple(str(value) for value in prop["enum"])
        names = prop.get("enumNames")
        return values, tuple(str(name) for name in names) if names else values
    options = [each for each in prop.get("oneOf") or prop.get("anyOf") or () if "const" in each]
    values = tuple(str(each["const"]) for each in options)
    return values, tuple(str(each.get("title") or each["const"]) for each in options)


def decline_unanswerable(
    notice: Callable[[str], None], where: str
) -> Callable[[ElicitRequest], Awaitable[ElicitAnswer]]:
    """An `Elicit` for a front end that cannot ask: declines each request and says so."""

    async def decline(request: ElicitRequest) -> ElicitAnswer:
        notice(
            f'MCP server "{request.server}" asked for input ({request.message!r}); '
            f"declined: {where}"
        )
        return ElicitAnswer("decline")

    return decline
