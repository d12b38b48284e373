"""The doctor's record while the app runs (tui.core.doctor.DoctorRecord): each update names the findings that are new,
once however long they persist; a check without the probe keeps the probe's findings."""

from __future__ import annotations

from tui.api.dialects import Family
from tui.core.doctor import DoctorRecord, Finding, FindingId, Health, Report, Severity, health_of


def finding(id: FindingId, words: str = "w", family: Family | None = Family.SESSION) -> Finding:
    return Finding(id, Severity.ERROR, words, "fix", family)


def test_a_finding_is_new_once_while_it_persists_and_again_after_it_went():
    record = DoctorRecord()
    seen: list[list[str]] = []
    record.subscribe(lambda _report, new: seen.append([f.id.value for f in new]))
    quiet = Finding(FindingId.EVENT_KIND_QUIET, Severity.WARNING, "Message quiet for 42 min", "fix")
    record.update(Report([quiet]), probed=False)
    record.update(Report([Finding(FindingId.EVENT_KIND_QUIET, Severity.WARNING, "Message quiet for 43 min", "fix")]),
                  probed=False)  # the same finding, its words a minute older
    record.update(Report([]), probed=False)
    record.update(Report([quiet]), probed=False)
    assert seen == [["event-kind-quiet"], [], [], ["event-kind-quiet"]]


def test_a_check_without_the_probe_keeps_the_probes_findings_until_a_probe():
    record = DoctorRecord()
    record.update(Report([finding(FindingId.EVENTS_REJECTED)]), probed=True)
    assert record.update(Report([]), probed=False) == []
    assert record.report is not None and health_of(record.report) is Health.REJECTED
    record.update(Report([]), probed=True)
    assert health_of(record.report) is Health.HEALTHY


def test_an_account_waiting_to_be_paired_has_its_webhooks_unchecked_not_failing():
    """A fresh account (not connected, nothing else found) read "✗ hooks failing" beside "● not connected"; its
    webhooks fail nothing yet. Something else wrong with them still fails."""
    waiting = Report([finding(FindingId.NOT_CONNECTED)])
    assert health_of(waiting) is Health.UNCHECKED
    assert health_of(Report([finding(FindingId.NOT_CONNECTED), finding(FindingId.WEBHOOK_URL_MISMATCH)])) is \
        Health.FAILING
