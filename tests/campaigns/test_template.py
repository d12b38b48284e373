"""The message template and the recipients file: a field the file lacks is named, with the columns it has."""

from __future__ import annotations

import json

import pytest

from tui.core.campaigns.recipients import RecipientsRefused, read_recipients
from tui.core.campaigns.template import Template, TemplateRefused


def test_fields_are_filled_from_the_columns():
    template = Template.parse("Hi {name}, order {order} is ready. {{not a field}}")
    assert template.fields == ("name", "order")
    assert template.render({"name": "Ana", "order": "A-17"}) == "Hi Ana, order A-17 is ready. {not a field}"


def test_a_template_without_fields_reads_as_itself():
    assert Template.parse("Closed on Monday").fields == ()


@pytest.mark.parametrize(("text", "words"), [
    ("Hi {}", "a field needs a column name"), ("Hi {0}", "a column name"), ("Hi {name.upper}", "{name.upper}"),
    ("Hi {name!r}", "{name!r}"), ("Hi {name:>9}", "{name:>9}"), ("Hi {name", "do not pair up"), ("", "empty"),
])
def test_a_bad_template_is_refused_in_words(text, words):
    with pytest.raises(TemplateRefused, match=words):
        Template.parse(text)


def test_csv_recipients_with_their_fields(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("phone,name,order\n5511999990001,Ana,A-1\n+55 (11) 99999-0002,Bruno,A-2\n", encoding="utf-8")
    recipients = read_recipients(path, ("name", "order"))
    assert [(r.phone, r.fields["name"]) for r in recipients.recipients] == [("5511999990001", "Ana"),
                                                                            ("5511999990002", "Bruno")]
    assert recipients.duplicates == 0


def test_json_lines_recipients(tmp_path):
    path = tmp_path / "people.jsonl"
    rows = [{"phone": "5511999990001", "name": "Ana"}, {"phone": "120363019502650977@g.us", "name": "Team"}]
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n\n", encoding="utf-8")
    recipients = read_recipients(path, ("name",))
    assert [r.phone for r in recipients.recipients] == ["5511999990001", "120363019502650977@g.us"]


def test_a_column_the_template_needs_is_named_with_the_columns_there_are(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("phone,name\n5511999990001,Ana\n", encoding="utf-8")
    with pytest.raises(RecipientsRefused) as refused:
        read_recipients(path, ("name", "order"))
    assert str(refused.value) == (f"{path}: the template uses {{order}}, but the file has no column 'order' "
                                  "(its columns: phone, name)")


def test_a_json_line_without_a_field_is_named_by_its_line(tmp_path):
    path = tmp_path / "people.jsonl"
    path.write_text('{"phone": "5511999990001", "order": "1"}\n{"phone": "5511999990002"}\n', encoding="utf-8")
    with pytest.raises(RecipientsRefused, match=r"line 2: the template uses \{order\}, but this line has no 'order'"):
        read_recipients(path, ("order",))


@pytest.mark.parametrize(("name", "text", "words"), [
    ("a.csv", "name\nAna\n", "no column 'phone' (its columns: name)"),
    ("a.csv", "phone\nnot-a-number\n", "line 2: phone 'not-a-number' is not a phone number"),
    ("a.csv", "", "no recipients"),
    ("a.jsonl", '{"phone": "5511999990001"}\n[1]\n', "line 2: not a JSON object"),
    ("a.jsonl", "{nope\n", "line 1: not JSON"),
    ("a.jsonl", '{"phone": 5511999990001}\n', "line 1: phone must be text"),
])
def test_bad_recipients_files_are_named(tmp_path, name, text, words):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RecipientsRefused, match=words.replace("(", r"\(").replace(")", r"\)")):
        read_recipients(path, ())


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(RecipientsRefused, match="cannot be read"):
        read_recipients(tmp_path / "nowhere.csv", ())


def test_the_same_recipient_twice_gets_one_message(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("phone\n5511999990001\n+5511999990001\n5511999990002\n", encoding="utf-8")
    recipients = read_recipients(path, ())
    assert [r.phone for r in recipients.recipients] == ["5511999990001", "5511999990002"]
    assert recipients.duplicates == 1
