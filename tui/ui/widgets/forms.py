"""Form building blocks shared by every section: labelled rows with an inline error line, mapping
`field_errors()` output onto them, as-you-type validators, and the one place that decides cursor blink.

    row = FieldRow("Recipient", TextInput(id="recipient", validators=[RecipientValidator()]), field="phone")
    ...
    request = validated(rows, lambda: SendText(phone=..., message=...), fallback=error_line)
    if request is None:
        return  # errors are shown inline; nothing is sent

Field paths are the dotted paths of `tui.api.models.field_errors` (`buttons.1.text`). A row owns one
or more paths (`fields=("phone", "Phone")`); an error on `poll.2.name` lands on the row owning `poll`
(the longest owned prefix) with the rest of the path named in the message. Build nested items as
dicts inside the `build` callable (`buttons=[{"id": "1", "text": t}]`), not as sub-models, so
pydantic reports the full path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from types import UnionType
from typing import Annotated, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.validation import ValidationResult, Validator
from textual.widget import Widget
from textual.widgets import Input, Label, Static

from tui.api.models import PHONE_RULE, RECIPIENT_RULE, field_errors, is_phone, is_recipient, normalized_phone
from tui.api.wording import labelled
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.focus import TypingInForms, takes_typed_key

# The single switch for cursor blink in every input this package builds. Tests and snapshots set it
# to False (tests/sections/conftest.py does), so screenshots do not depend on timing.
CURSOR_BLINK = True


def set_cursor_blink(enabled: bool) -> None:
    global CURSOR_BLINK
    CURSOR_BLINK = enabled


class TextInput(Input):
    """An Input whose cursor blink follows `CURSOR_BLINK`, and which validates as you type.

    Taking the focus does not select the text (Textual's default): the focus comes back to a field after every
    call, and the next key typed must add to its value, not replace it."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("validate_on", ["changed", "submitted"])
        kwargs.setdefault("select_on_focus", False)
        super().__init__(*args, **kwargs)
        self.cursor_blink = CURSOR_BLINK

    def check_consume_key(self, key: str, character: str | None) -> bool:
        """Textual's Input takes the keys that type a character as it sees them, before the user's keymap; this
        also takes a command the keymap put on a character (and `/`, which Textual's Input misses)."""
        return super().check_consume_key(key, character) or takes_typed_key(self, key)


# ---------------------------------------------------------------------------------------------
# Validators (as you type)


class NormalisingValidator(Validator):
    """A validator that also knows how the value is written the way the gateway takes it: a FieldRow rewrites its
    field to that (a pasted "+55 (11) 98765-4321" becomes 5511987654321) and says so under it."""

    def normalised(self, value: str) -> str | None:
        """The value rewritten, or None when it stays as it is."""
        return normalized_phone(value)


class RecipientValidator(NormalisingValidator):
    """A phone number with country code or a group JID (`…@g.us`)."""

    def validate(self, value: str) -> ValidationResult:
        if is_recipient(value.strip()) or self.normalised(value) is not None:
            return self.success()
        return self.failure(f"Must be {RECIPIENT_RULE}", value)


class PhoneValidator(NormalisingValidator):
    def validate(self, value: str) -> ValidationResult:
        if is_phone(value.strip()) or self.normalised(value) is not None:
            return self.success()
        return self.failure(f"Must be {PHONE_RULE}", value)


_LIST_CHUNKS = re.compile(r"[,;\n]+")


class PhoneListValidator(NormalisingValidator):
    """Phones separated by commas, spaces or new lines; names the first bad one."""

    def normalised(self, value: str) -> str | None:
        """Each comma-, semicolon- or line-separated number written as digits (inside one, spaces are formatting:
        "+55 11 98765-4321, +55 21 99999-0000"); None when none needed it."""
        chunks = [chunk.strip() for chunk in _LIST_CHUNKS.split(value) if chunk.strip()]
        rewritten = [normalized_phone(chunk) for chunk in chunks]
        if all(number is None for number in rewritten):
            return None
        return ", ".join(number or chunk for number, chunk in zip(rewritten, chunks, strict=True))

    def validate(self, value: str) -> ValidationResult:
        items = split_list(self.normalised(value) or value)
        if not items:
            return self.failure("Enter at least one phone number", value)
        for item in items:
            if not is_phone(item):
                return self.failure(f"{item!r} must be {PHONE_RULE}", value)
        return self.success()


class PatternValidator(Validator):
    """A regular expression with a readable rule (group ids, community ids)."""

    def __init__(self, pattern: str, rule: str) -> None:
        super().__init__()
        self.pattern = re.compile(pattern)
        self.rule = rule

    def validate(self, value: str) -> ValidationResult:
        if self.pattern.fullmatch(value.strip()):
            return self.success()
        return self.failure(f"Must be {self.rule}", value)


_GROUP_REF = re.compile(r"(\d+(?:-\d+)?)(?:-group|@g\.us)")
GROUP_REF_RULE = "a group id like 120363019502650977-group or its JID 120363019502650977@g.us"


def group_refs(text: str) -> tuple[str, str] | None:
    """Either form of a group → (`<digits>-group`, `<digits>@g.us`); None when it is neither."""
    match = _GROUP_REF.fullmatch(text.strip())
    if match is None:
        return None
    digits = match.group(1)
    return f"{digits}-group", f"{digits}@g.us"


def require_group_refs(text: str, *, field: str) -> tuple[str, str]:
    refs = group_refs(text)
    if refs is None:
        raise FieldProblems({field: f"must be {GROUP_REF_RULE}"})
    return refs


def as_group_id(text: str) -> str:
    """`…@g.us` → `…-group`; anything else unchanged (the request model then names the field)."""
    refs = group_refs(text)
    return refs[0] if refs else text.strip()


class GroupRefValidator(Validator):
    def validate(self, value: str) -> ValidationResult:
        if group_refs(value) is not None:
            return self.success()
        return self.failure(f"Must be {GROUP_REF_RULE}", value)


_SEPARATORS = re.compile(r"[\s,;]+")


def split_list(text: str) -> list[str]:
    """`"5511 , 5522\\n5533"` → `["5511", "5522", "5533"]`."""
    return [item for item in _SEPARATORS.split(text.strip()) if item]


def lines_of(text: str) -> list[str]:
    """Non-blank lines, stripped (poll options, button labels: they may contain commas)."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def optional(text: str) -> str | None:
    """Empty input means "not given" so optional request fields are left out."""
    text = text.strip()
    return text or None


# ---------------------------------------------------------------------------------------------
# Rows


class FieldRow(Vertical, TypingInForms):
    """Label, the control, and an inline error line under it (plain text, never markup). On its control, printable
    keys are typing (`TypingInForms`)."""

    DEFAULT_CSS = """
    FieldRow { height: auto; margin: 0 0 0 0; }
    FieldRow > .field-label { padding: 0 1; color: $text-muted; }
    FieldRow > .field-error { padding: 0 1; color: $text-error; display: none; }
    FieldRow.-invalid > .field-error { display: block; }
    FieldRow.-invalid > Input { border: tall $error; }
    FieldRow > .field-hint { padding: 0 1; color: $text-muted; text-style: italic; }
    FieldRow > .field-note { padding: 0 1; color: $text-muted; display: none; }
    FieldRow.-noted > .field-note { display: block; }
    """

    def __init__(
        self,
        label: str,
        control: Widget,
        *,
        field: str | Iterable[str],
        hint: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.label = label
        self.control = control
        self.fields: tuple[str, ...] = (field,) if isinstance(field, str) else tuple(field)
        self.hint = hint

    def compose(self) -> ComposeResult:
        yield Label(Content(self.label), classes="field-label")
        yield self.control
        if self.hint:
            yield Static(Content(self.hint), classes="field-hint")
        yield Static("", classes="field-note")
        yield Static("", classes="field-error")

    def set_label(self, label: str) -> None:
        """A new label (plain text), e.g. when the profile's dialect changes a field's unit or need."""
        self.label = label
        if self.is_mounted:
            self.query_one(".field-label", Label).update(Content(label))

    @property
    def error(self) -> str | None:
        return self._error

    _error: str | None = None

    def set_error(self, message: str | None) -> None:
        self._error = message
        if not self.is_mounted:
            return
        line = self.query_one(".field-error", Static)
        if message:
            line.update(Content(message))
            self.add_class("-invalid")
        else:
            line.update("")
            self.remove_class("-invalid")

    def on_mount(self) -> None:
        if self._error:
            self.set_error(self._error)

    _noted_value: str | None = None

    def _normalise(self, control: Input) -> bool:
        """A phone written with +, spaces or punctuation becomes digits, with a note saying so (kept while the
        field holds that value). True when the value was rewritten (its own Changed follows)."""
        for validator in control.validators:
            if isinstance(validator, NormalisingValidator):
                rewritten = validator.normalised(control.value)
                if rewritten is not None and rewritten != control.value:
                    typed = control.value.strip()
                    self._noted_value = rewritten
                    control.value = rewritten
                    control.cursor_position = len(rewritten)
                    self.query_one(".field-note", Static).update(
                        Content(f"Written as {rewritten} (was “{typed}”): the gateway takes digits only."))
                    self.add_class("-noted")
                    return True
        if control.value != self._noted_value and self.has_class("-noted"):
            self._noted_value = None
            self.remove_class("-noted")
        return False

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input is not self.control:
            return
        if self._normalise(event.input):
            return
        result = event.validation_result
        if result is None:
            if self._error:
                self.set_error(None)
            return
        self.set_error(None if result.is_valid else "; ".join(result.failure_descriptions))


def owner_of(rows: Iterable[FieldRow], path: str) -> tuple[FieldRow, str] | None:
    """The row owning `path` (longest owned prefix) and the part of the path below it."""
    best: tuple[FieldRow, str] | None = None
    best_length = -1
    parts = path.split(".")
    for row in rows:
        for owned in row.fields:
            owned_parts = owned.split(".")
            if parts[: len(owned_parts)] == owned_parts and len(owned_parts) > best_length:
                best = (row, ".".join(parts[len(owned_parts) :]))
                best_length = len(owned_parts)
    return best


def _describe_rest(rest: str) -> str:
    """`2.name` → `item 3`; list indexes shown 1-based."""
    words = []
    for part in rest.split("."):
        words.append(f"item {int(part) + 1}" if part.isdigit() else part)
    return " ".join(words)


def apply_field_errors(
    rows: Iterable[FieldRow], errors: dict[str, str], *, fallback: Callable[[str], None] | None = None
) -> dict[str, str]:
    """Show each error on its row (first error per row wins); return the ones no row owns.

    Unowned errors go to `fallback` (e.g. `ErrorLine.show_error`) as one line when given.
    """
    rows = list(rows)
    shown: set[int] = set()
    unowned: dict[str, str] = {}
    for path, message in errors.items():
        found = owner_of(rows, path)
        if found is None:
            unowned[path] = message
            continue
        row, rest = found
        if id(row) in shown:
            continue
        shown.add(id(row))
        row.set_error(f"{_describe_rest(rest)}: {message}" if rest else message)
    if unowned and fallback is not None:
        fallback(f"Invalid input: {labelled(unowned)}. Nothing was sent.")
    return unowned


def clear_field_errors(rows: Iterable[FieldRow]) -> None:
    for row in rows:
        row.set_error(None)


Model = TypeVar("Model")
Model_ = TypeVar("Model_", bound=BaseModel)


class FieldProblems(ValueError):
    """Raised by a `build` callable for checks the request model cannot make (fields outside it)."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{path}: {message}" for path, message in errors.items()))
        self.errors = errors


def validated(
    rows: Iterable[FieldRow],
    build: Callable[[], Model],
    *,
    fallback: Callable[[str], None] | None = None,
    status: ErrorLine | None = None,
) -> Model | None:
    """Clear the rows' errors, build the request; on ValidationError show errors inline and return None.

    `status`, the form's answer line, is cleared first: a new attempt replaces the last answer, so a success never
    stays under a new validation error as if the invalid message had been sent. Errors no row owns go there (or to
    `fallback`).

    Also refuses (returns None) when an as-you-type validator of a row currently fails, so nothing
    is sent while a field is marked invalid.
    """
    rows = list(rows)
    clear_field_errors(rows)
    if status is not None:
        status.clear()
        fallback = fallback or status.show_error
    try:
        request = build()
    except ValidationError as error:
        apply_field_errors(rows, field_errors(error), fallback=fallback)
        return None
    except FieldProblems as problems:
        apply_field_errors(rows, problems.errors, fallback=fallback)
        return None
    except ValueError as error:  # conversions done before the model (e.g. int("x")) name no field
        if fallback is not None:
            fallback(f"Invalid input: {error}")
        return None
    return request


class Form(Vertical, TypingInForms):
    """A group of FieldRows with its own scope for errors. On its controls, printable keys are typing
    (`TypingInForms`)."""

    DEFAULT_CSS = """
    Form { height: auto; }
    """

    def rows(self) -> list[FieldRow]:
        return list(self.query(FieldRow))

    def apply_errors(self, errors: dict[str, str], *, fallback: Callable[[str], None] | None = None) -> dict[str, str]:
        return apply_field_errors(self.rows(), errors, fallback=fallback)

    def clear_errors(self) -> None:
        clear_field_errors(self.rows())


def value_of(widget: Widget) -> str:
    """The text of an Input or TextArea (stripped)."""
    if isinstance(widget, Input):
        return widget.value.strip()
    from textual.widgets import TextArea  # not with this module: the app's first frame has none (~5 ms)

    if isinstance(widget, TextArea):
        return widget.text.strip()
    raise TypeError(f"no text value for {type(widget).__name__}")


# ---------------------------------------------------------------------------------------------
# A form read off a request model


_ONE_LINE_TYPES = (str, int, float)
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _one_line(annotation: object) -> bool:
    """A value typed on one line: str, int or float, optionally None."""
    args = get_args(annotation) if isinstance(annotation, UnionType) or get_origin(annotation) is Union else (annotation,)
    kinds = [get_args(arg)[0] if get_origin(arg) is Annotated else arg for arg in args if arg is not type(None)]
    return bool(kinds) and all(kind in _ONE_LINE_TYPES for kind in kinds)


def field_label(name: str, field: FieldInfo) -> str:
    """`messageId` → "Message id"; "(optional)" when the model has a default for it."""
    words = [word.lower() for word in _WORD.findall(name)] or [name]
    label = field.title or " ".join(words).capitalize()
    return label if field.is_required() else f"{label} (optional)"


def model_rows(model: type[BaseModel], prefix: str, *, skip: Iterable[str] = ()) -> list[FieldRow] | None:
    """One row per field of `model` but those in `skip`, in the model's order, each a one-line input with id
    `{prefix}-{field}`; None when a field cannot be typed on one line (a list, a nested model, a choice): such a
    request needs a form written for it."""
    fields = [(name, field) for name, field in model.model_fields.items() if name not in set(skip)]
    if not all(_one_line(field.annotation) for _name, field in fields):
        return None
    return [
        FieldRow(field_label(name, field), TextInput(id=f"{prefix}-{name}"), field=name) for name, field in fields
    ]


def model_from_rows(model: type[Model_], rows: Iterable[FieldRow], given: dict[str, str]) -> Model_:
    """The request `model` of `given` (e.g. the recipient) and each row's text: an empty optional field is left
    out, an empty required one is passed on for the model to name. Raises ValidationError as the model does."""
    values: dict[str, str] = dict(given)
    for row in rows:
        name = row.fields[0]
        text = value_of(row.control)
        if text or model.model_fields[name].is_required():
            values[name] = text
    return model.model_validate(values)
