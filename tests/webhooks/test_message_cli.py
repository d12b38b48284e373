"""`gateway-tui message ID [--json]`: one sent message's timeline from the event store, by the gateway's id.

The store is filled the way the listener fills it, from literal Z-API callbacks (Z-API/docs
`en/webhooks/on-message-send.mdx`, `on-whatsapp-message-status-changes.mdx`; docs/gateways/zapi.md §5.1-5.2); the
expected output is written by hand."""

from __future__ import annotations

import json
import time

import pytest

from tests.webhooks.test_timeline import ANA, MINUTE, SECOND, T0, ms, stored, zapi_delivery, zapi_status
from tui.cli.main import main
from tui.local.preferences import preferences_path
from tui.webhooks.conversations import Inbox
from tui.webhooks.inbox_changes import NewMessage
from tui.webhooks.store import EventStore


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    """The lines show local times: UTC here, so they read the same on every machine."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
async def db(tmp_path) -> str:
    path = tmp_path / "events.sqlite3"
    with EventStore(path) as store:
        Inbox(store).record(NewMessage(ANA, True, "text", "Is the blue case\nback in stock?", "3EB0C4A1"), T0)
        await store.append(stored(zapi_delivery("3EB0C4A1", ms(T0 + 2 * SECOND)), at_us=T0 + 2 * SECOND))
        await store.append(stored(zapi_status("READ", "3EB0C4A1", ms(T0 + MINUTE)), at_us=T0 + MINUTE))
        Inbox(store).record(NewMessage(ANA, True, "text", "still waiting", "3EB0WAIT"), T0)
        await store.append(stored(zapi_delivery("3EB0WAIT", ms(T0 + SECOND)), at_us=T0 + SECOND))
    return str(path)


def test_json_shape(db, capsys, monkeypatch):
    monkeypatch.setattr("time.time_ns", lambda: (T0 + 2 * MINUTE) * 1000)
    assert main(["message", "3EB0C4A1", "--json", "--db", db]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "message_id": "3EB0C4A1",
        "chat_id": "5544999999999",
        "outgoing": True,
        "kind": "text",
        "text": "Is the blue case\nback in stock?",
        "status": "read",
        "steps": [
            {"step": "sent", "at": "2026-09-21T14:13:20.000000Z", "at_us": 1790000000000000, "error": None},
            {"step": "handed to the network", "at": "2026-09-21T14:13:22.000000Z", "at_us": 1790000002000000,
             "error": None},
            {"step": "read", "at": "2026-09-21T14:14:20.000000Z", "at_us": 1790000060000000, "error": None},
        ],
        "stuck": None,
    }


def test_json_of_a_stuck_message(db, capsys, monkeypatch):
    monkeypatch.setattr("time.time_ns", lambda: (T0 + 25 * MINUTE) * 1000)  # the clock, injected
    assert main(["message", "3EB0WAIT", "--json", "--db", db]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["status"], document["stuck"]) == ("handed to the network", {
        "step": "handed to the network", "since": "2026-09-21T14:13:21.000000Z", "minutes": 24, "after_minutes": 10.0})


def test_lines_say_what_no_event_said(db, capsys):
    assert main(["message", "3EB0C4A1", "--db", db]) == 0
    assert capsys.readouterr().out.splitlines() == [
        'message 3EB0C4A1 · to 5544999999999 · text "Is the blue case back in stock?"',
        "sent                   2026-09-21 14:13:20",
        "handed to the network  2026-09-21 14:13:22",
        "delivered              — no event said so",
        "read                   2026-09-21 14:14:20",
    ]


def test_the_threshold_is_a_preference(db, capsys, monkeypatch):
    preferences = preferences_path()
    preferences.parent.mkdir(parents=True, exist_ok=True)
    preferences.write_text("stuck_after_minutes = 30\n")
    monkeypatch.setattr("time.time_ns", lambda: (T0 + 25 * MINUTE) * 1000)
    assert main(["message", "3EB0WAIT", "--json", "--db", db]) == 0
    assert json.loads(capsys.readouterr().out)["stuck"] is None
    preferences.write_text('stuck_after_minutes = "soon"\n')
    assert main(["message", "3EB0WAIT", "--db", db]) == 2
    assert "stuck_after_minutes must be a number of minutes" in capsys.readouterr().err


def test_unknown_id_and_missing_store(db, capsys, tmp_path):
    assert main(["message", "3EB0NOPE", "--db", db]) == 1
    assert capsys.readouterr().err.strip() == f"gateway-tui message: no message with id 3EB0NOPE in {db}"
    assert main(["message", "3EB0C4A1", "--db", str(tmp_path / "none.sqlite3")]) == 2
    assert "no event store at" in capsys.readouterr().err
    assert main(["message", "  ", "--db", db]) == 2
    assert "the message id is empty" in capsys.readouterr().err
