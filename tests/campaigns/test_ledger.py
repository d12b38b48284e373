"""The durable ledger: every recipient's state survives the process; `sending` is written before the request."""

from __future__ import annotations

import sqlite3

import pytest

from tui.core.campaigns.ledger import CampaignExists, CampaignState, Ledger, NewCampaign, RecipientState


def new_campaign(name: str = "spring", count: int = 3) -> NewCampaign:
    return NewCampaign(name=name, kind="text", template="Hi {name}", file=None, profiles=("work",),
                       recipients_file="people.csv",
                       recipients=[(f"55119999900{index:02}", f"Hi {index}") for index in range(count)])


def test_a_campaign_and_its_recipients_survive_reopening(tmp_path):
    path = tmp_path / "campaigns.sqlite3"
    with Ledger(path) as ledger:
        ledger.create(new_campaign(), at_us=1)
    with Ledger(path) as ledger:
        campaign = ledger.campaign("spring")
        assert campaign is not None and campaign.state is CampaignState.READY
        assert campaign.profiles == ("work",)
        rows = ledger.recipients("spring")
    assert [(row.phone, row.body, row.state) for row in rows] == [
        ("5511999990000", "Hi 0", RecipientState.QUEUED), ("5511999990001", "Hi 1", RecipientState.QUEUED),
        ("5511999990002", "Hi 2", RecipientState.QUEUED)]


def test_a_name_is_used_once(tmp_path):
    with Ledger(tmp_path / "c.sqlite3") as ledger:
        ledger.create(new_campaign(), at_us=1)
        with pytest.raises(CampaignExists, match="a campaign named 'spring' exists"):
            ledger.create(new_campaign(), at_us=2)


def test_sending_is_durable_before_the_answer_and_resolved_after(tmp_path):
    path = tmp_path / "c.sqlite3"
    with Ledger(path) as ledger:
        ledger.create(new_campaign(), at_us=1)
        first = ledger.next_queued("spring")
        assert first is not None and first.position == 0
        ledger.mark_sending("spring", first.position, "work", at_us=10, first_contact=True)
    # Another connection (a process after a crash) sees it.
    seen = sqlite3.connect(path).execute("SELECT state, account, sending_us FROM campaign_recipients WHERE position = 0")
    assert seen.fetchone() == ("sending", "work", 10)
    with Ledger(path) as ledger:
        assert [row.position for row in ledger.in_state("spring", RecipientState.SENDING)] == [0]
        ledger.mark_sent("spring", 0, "3EB0ABC", at_us=11)
        next_one = ledger.next_queued("spring")
        assert next_one is not None and next_one.position == 1
        ledger.mark_failed("spring", 1, "Phone number does not exist", at_us=12)
        ledger.mark_unknown("spring", 2, at_us=13)
        rows = ledger.recipients("spring")
        assert [(row.state, row.message_id, row.detail) for row in rows] == [
            (RecipientState.SENT, "3EB0ABC", None),
            (RecipientState.FAILED, None, "Phone number does not exist"),
            (RecipientState.UNKNOWN, None, "unknown: may have been sent"),
        ]
        assert ledger.next_queued("spring") is None


def test_first_contacts_are_counted_per_account_across_campaigns(tmp_path):
    with Ledger(tmp_path / "c.sqlite3") as ledger:
        ledger.create(new_campaign("a"), at_us=1)
        ledger.create(new_campaign("b"), at_us=1)
        ledger.mark_sending("a", 0, "work", at_us=100, first_contact=True)
        ledger.mark_sent("a", 0, "m1", at_us=101)
        ledger.mark_sending("b", 0, "work", at_us=200, first_contact=True)
        ledger.mark_sending("b", 1, "work", at_us=300, first_contact=False)
        ledger.mark_sending("a", 1, "home", at_us=300, first_contact=True)
        assert ledger.first_contacts("work", since_us=50) == 2
        assert ledger.first_contacts("work", since_us=150) == 1


def test_state_and_reason_and_cancel(tmp_path):
    with Ledger(tmp_path / "c.sqlite3") as ledger:
        ledger.create(new_campaign(), at_us=1)
        ledger.mark_sending("spring", 0, "work", at_us=2, first_contact=False)
        ledger.mark_sent("spring", 0, "m", at_us=3)
        ledger.set_state("spring", CampaignState.PAUSED, "the gateway answered 403")
        campaign = ledger.campaign("spring")
        assert campaign is not None and (campaign.state, campaign.reason) == (CampaignState.PAUSED,
                                                                              "the gateway answered 403")
        ledger.cancel("spring", at_us=4)
        assert [row.state for row in ledger.recipients("spring")] == [
            RecipientState.SENT, RecipientState.SKIPPED, RecipientState.SKIPPED]
        assert ledger.counts("spring") == {RecipientState.SENT: 1, RecipientState.SKIPPED: 2}


def test_the_ledger_is_a_wal_database_with_its_own_schema_version(tmp_path):
    path = tmp_path / "c.sqlite3"
    with Ledger(path):
        pass
    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert connection.execute("SELECT version FROM campaign_schema").fetchone()[0] == 1
