"""The background look-up of LIDs (`tui.core.lid_lookup`): each chat known only by its number is asked of the
gateway (WuzAPI's `GET /user/lid/{jid}`) once, at most one a second and a bounded number a run, and what it
answers is kept in the store's identities, so a later `@lid` event from that person lands in their chat. The
answers are literal WuzAPI JSON (static/api/spec.yml's `{jid, lid}` in Respond's envelope), read by the real
adapter; the pauses are recorded, never slept."""

from __future__ import annotations

import json

import pytest

from tests.webhooks.conftest import record
from tui.api.models import UserLid, UserLidQuery
from tui.api.operations import USER_LID, DialectRefusal
from tui.core.lid_lookup import LOOKUP_INTERVAL, LidLookup
from tui.gateways import adapter_for
from tui.api.operations import SessionDialect
from tui.webhooks.classify import classify
from tui.webhooks.conversations import Inbox
from tui.webhooks.identities import Identity
from tui.webhooks.store import EventStore

ANSWERS = {
    "5511987654321": '{"code":200,"data":{"jid":"5511987654321@s.whatsapp.net",'
                                    '"lid":"81896604192873@lid"},"success":true}',
    "5511976543219": '{"code":200,"data":{"jid":"5511976543219@s.whatsapp.net","lid":""},'
                                    '"success":true}',
}


class FakeSession:
    """A session client answering USER_LID with WuzAPI's literal JSON, read by the WuzAPI adapter."""

    def __init__(self, *, refuse: bool = False) -> None:
        self.asked: list[str] = []
        self.refuse = refuse
        self.reader = adapter_for(SessionDialect.WUZAPI).read_answer

    async def request(self, op, request: UserLidQuery) -> UserLid:
        assert op is USER_LID
        if self.refuse:
            raise DialectRefusal("user/lid/{jid}", "is not in the spec")
        self.asked.append(request.jid)
        return self.reader(UserLid, 200, ANSWERS[request.jid], op.id.value)


def wuzapi_text(phone: str, message_id: str) -> dict:
    jid = f"{phone}@s.whatsapp.net"
    return {"type": "Message", "event": {"Info": {"Chat": jid, "Sender": jid, "IsFromMe": False, "IsGroup": False,
                                                   "ID": message_id, "PushName": "Ana"},
                                          "Message": {"conversation": "hi"}}}


def event(payload: dict):
    kind, summary, ids = classify(payload)
    return record(payload, kind=kind, summary=summary, message_ids=ids, path="/session")


@pytest.fixture
def store(tmp_path):
    with EventStore(tmp_path / "events.sqlite3") as opened:
        yield opened


@pytest.fixture
def pauses() -> list[float]:
    return []


async def test_each_number_is_asked_once_at_the_rate_and_the_lid_is_kept(store, pauses):
    inbox = Inbox(store)
    await store.append(event(wuzapi_text("5511987654321", "A1")))
    await store.append(event(wuzapi_text("5511976543219", "B1")))

    async def pause(seconds: float) -> None:
        pauses.append(seconds)

    session = FakeSession()
    lookup = LidLookup(pause=pause)
    assert await lookup.run(session, inbox) == 1
    assert sorted(session.asked) == ["5511976543219", "5511987654321"]
    assert pauses == [LOOKUP_INTERVAL]  # between the two asks, not before the first
    assert inbox.identity_by_phone("5511987654321") == Identity("81896604192873@lid", "5511987654321", "")
    assert await lookup.run(session, inbox) == 0 and len(session.asked) == 2  # never asked twice

    # the person writes from their LID: the message joins their chat, which now shows it under the number
    lid_message = json.loads(json.dumps(wuzapi_text("5511987654321", "A2")).replace(
        "5511987654321@s.whatsapp.net", "81896604192873@lid"))
    await store.append(event(lid_message))
    assert [m.message_id for m in inbox.thread("5511987654321", 10)] == ["A1", "A2"]


async def test_a_run_asks_a_bounded_number(store, pauses):
    inbox = Inbox(store)
    for n in range(5):
        await store.append(event(wuzapi_text(f"55119000000{n:02d}", f"M{n}")))

    class Unknown(FakeSession):
        async def request(self, op, request):
            self.asked.append(request.jid)
            return UserLid(jid=request.jid, lid="")

    async def pause(seconds: float) -> None:
        pauses.append(seconds)

    session = Unknown()
    assert await LidLookup(pause=pause, per_run=3).run(session, inbox) == 0
    assert len(session.asked) == 3 and pauses == [LOOKUP_INTERVAL] * 2


async def test_a_dialect_without_the_call_stops_quietly(store):
    inbox = Inbox(store)
    await store.append(event(wuzapi_text("5511987654321", "A1")))

    async def pause(seconds: float) -> None:
        raise AssertionError("no pause: nothing more is asked")

    assert await LidLookup(pause=pause).run(FakeSession(refuse=True), inbox) == 0
