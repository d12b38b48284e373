"""Validation problems reach the user in the product's own words: pydantic's sentences ("List should have at
most 3 items after validation, not 4", "Input should be a valid integer, unable to parse string as an integer")
are translated per error type, with the field's label where the message stands alone."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tui.api.models import (
    Button,
    PollOption,
    SendButtonActions,
    SendLocation,
    SendPoll,
    describe_validation_error,
    field_errors,
)
from tui.api.wording import SENTENCES, field_label, problem_sentence


def caught(model: type[BaseModel], **fields) -> ValidationError:
    with pytest.raises(ValidationError) as error:
        model(**fields)
    return error.value


def test_too_many_buttons() -> None:
    error = caught(SendButtonActions, phone="5511999999999", message="m",
                   buttons=[Button(id=str(n), text="b") for n in range(4)])
    assert field_errors(error) == {"buttons": "takes at most 3 items (4 given)"}
    assert describe_validation_error(error) == "Buttons: takes at most 3 items (4 given)"


def test_a_count_that_is_not_a_number() -> None:
    error = caught(SendPoll, phone="5511999999999", message="q",
                   poll=[PollOption(name="a"), PollOption(name="b")], selectableCount="three")
    assert describe_validation_error(error) == "Selectable count: must be a whole number, e.g. 3"


def test_required_too_few_and_nested_items() -> None:
    error = caught(SendPoll, phone="5511999999999", poll=[{"name": ""}])
    assert field_errors(error)["message"] == "is required"
    assert describe_validation_error(error).startswith("Message: is required; ")
    one = caught(SendPoll, phone="5511999999999", message="q", poll=[PollOption(name="a")])
    assert field_errors(one) == {"poll": "needs at least 2 items"}


def test_bounds_on_numbers() -> None:
    error = caught(SendLocation, phone="5511999999999", title="t", address="a", lat=91, lng=0)
    assert field_errors(error)["lat"] == "must be 90 or less"


def test_our_own_sentences_pass_through() -> None:
    error = caught(SendPoll, phone="+55 11", message="q", poll=[PollOption(name="a"), PollOption(name="b")])
    assert field_errors(error)["phone"].startswith("must be ")
    assert "Value error" not in describe_validation_error(error)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(max_length=3)
    flag: bool = False


def test_strings_extra_fields_and_booleans() -> None:
    error = caught(Strict, name="toolong", flag="maybe", colour="red")
    assert field_errors(error) == {
        "name": "takes at most 3 characters",
        "flag": "must be yes or no (true / false)",
        "colour": "is not a field of this request; remove it",
    }


def test_no_sentence_repeats_library_words() -> None:
    for sentence in SENTENCES.values():
        assert "should" not in sentence and "Input" not in sentence and "validation" not in sentence
    assert problem_sentence({"type": "some_new_pydantic_type", "msg": "Input should be something"}) == "is not valid here"


@pytest.mark.parametrize(("path", "label"), [
    ("buttons", "Buttons"), ("selectableCount", "Selectable count"), ("poll.2.name", "Poll, item 3, name"),
    ("listener_port", "Listener port"), ("GROUP_PHONE_NUMBER", "GROUP_PHONE_NUMBER"), ("", "Request"),
])
def test_field_labels(path, label) -> None:
    assert field_label(path) == label
