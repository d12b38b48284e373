"""The webhook doctor (issue 24): what keeps a profile's gateway events from reaching the listener, in findings
with an id, a severity, plain words and a fix; and the fixes that need no secret from the user.

    doctor = Doctor(inputs)
    report = await doctor.examine(probe=True)     # findings, and the probe's latency
    lines = await doctor.fix(report)              # "session webhook: (none) -> http://...", ...

No Textual and no printing here: the command (tui.cli.doctor) and the Settings panel show the report. The gateway
is spoken to only through the operations of the table (the clients' typed methods).
"""

from __future__ import annotations

import asyncio
import enum
import shlex
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from tui.api.dialects import Family
from tui.api.operations import OperationId
from tui.api.errors import GatewayError
from tui.core.suggested_commands import SPEC, profile_command, sandbox_command
from tui.api.listener_paths import wants_path_secret, with_path_secret
from tui.api.redaction import MASK
from tui.api.redaction import redact_delivery_secret as shown_url
from tui.webhooks.families import PathFamily, family_of, family_urls, instance_family_url
from tui.webhooks.quiet import QUIET_HISTORY, quiet_kinds_among

if TYPE_CHECKING:  # pragma: no cover
    from tui.api.client import InstanceClient, SessionClient
    from tui.api.connection import GatewayWebhook
    from tui.api.models import WebhookConfig
    from tui.local.listener_record import ListenerRecord
    from tui.webhooks.events import StoredEvent
    from tui.webhooks.store import EventStore

# The kinds the app needs from a WuzAPI session: messages, receipts, typing, and the connection events of pairing.
NEEDED_KINDS = ("Message", "ReadReceipt", "ChatPresence", "Connected", "Disconnected", "LoggedOut", "PairSuccess")
ALL_KINDS = "All"
PROBE_TEXT = "gateway-tui doctor probe (you may delete this message)"
PROBE_WAIT = 15.0  # seconds the probe waits for its first event


class Severity(enum.StrEnum):
    ERROR = "error"  # events are lost
    WARNING = "warning"  # events may be lost
    INFO = "info"  # worth knowing; not counted against health


class FindingId(enum.StrEnum):
    WEBHOOK_URL_MISMATCH = "webhook-url-mismatch"
    WEBHOOK_URL_UNREADABLE = "webhook-url-unreadable"
    WEBHOOK_INACTIVE = "webhook-inactive"
    EVENT_NOT_SUBSCRIBED = "event-not-subscribed"
    HMAC_MISMATCH = "hmac-mismatch"
    NOT_CONNECTED = "not-connected"
    LISTENER_UNREACHABLE = "listener-unreachable"
    LISTENER_NOT_RUNNING = "listener-not-running"
    NO_EVENTS_AFTER_PROBE = "no-events-after-probe"
    EVENTS_REJECTED = "events-rejected"
    PROBE_SKIPPED = "probe-skipped"
    EVENT_KIND_QUIET = "event-kind-quiet"
    MEDIA_WITHOUT_BYTES = "media-without-bytes"


class Fix(enum.StrEnum):
    """The fixes the doctor applies itself (none needs a secret from the user)."""

    POINT_WEBHOOKS = "point-webhooks"
    SUBSCRIBE = "subscribe"
    ACTIVATE = "activate"
    SET_KEY = "set-key"


@dataclass(frozen=True)
class Finding:
    id: FindingId
    severity: Severity
    words: str  # what is wrong, in plain words
    fix_words: str  # what cures it
    family: Family | None = None
    fix: Fix | None = None  # applied by `doctor --fix` (and the panel's key); None: the user must act

    @property
    def counts(self) -> bool:
        """Whether it keeps the profile from being healthy (exit 1)."""
        return self.severity is not Severity.INFO

    def as_json(self) -> dict[str, object]:
        return {"id": self.id.value, "severity": self.severity.value, "family": self.family.value if self.family else None,
                "words": self.words, "fix": self.fix_words, "fixable": self.fix is not None}


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    probe_latency: float | None = None  # seconds from the probe's send to its first event; None: no probe result
    probe_events: int = 0

    @property
    def healthy(self) -> bool:
        return not any(finding.counts for finding in self.findings)

    def ids(self) -> list[str]:
        return [finding.id.value for finding in self.findings]

    def as_json(self) -> dict[str, object]:
        return {"healthy": self.healthy, "findings": [finding.as_json() for finding in self.findings],
                "probe": {"latency_ms": None if self.probe_latency is None else round(self.probe_latency * 1000, 1),
                          "events": self.probe_events}}


class Health(enum.StrEnum):
    """What the header shows in a few cells."""

    HEALTHY = "healthy"
    QUIET = "quiet kind"
    FAILING = "failing"
    REJECTED = "rejected"
    UNCHECKED = "unchecked"  # not connected, and nothing else found: the header says "● not connected" already


def health_of(report: Report) -> Health:
    ids = {finding.id for finding in report.findings if finding.counts}
    if not ids:
        return Health.HEALTHY
    if ids == {FindingId.NOT_CONNECTED}:  # a fresh account waiting to be paired: its webhooks fail nothing yet
        return Health.UNCHECKED
    if FindingId.EVENTS_REJECTED in ids or FindingId.HMAC_MISMATCH in ids:
        return Health.REJECTED
    if ids == {FindingId.EVENT_KIND_QUIET}:
        return Health.QUIET
    return Health.FAILING


CHECK_INTERVAL = 60.0
"""Seconds between the app's background checks while it runs: the cheap ones (no probe), which read each family's
status, webhook settings and key status, and the listener's address; events ask for one sooner, never closer than
CHECK_MIN_GAP to the last."""
CHECK_MIN_GAP = 10.0  # tui.core.watch.POLL_INTERVAL: the status is never read faster than that
PROBE_ONLY = frozenset({FindingId.NO_EVENTS_AFTER_PROBE, FindingId.EVENTS_REJECTED, FindingId.PROBE_SKIPPED})
"""Findings only the probe makes: a check without the probe cannot say they are gone."""

FindingKey = tuple[FindingId, Family | None]


def key_of(finding: Finding) -> FindingKey:
    """One finding across checks (its words change: "quiet for 42 min", then 43)."""
    return finding.id, finding.family


ReportCallback = Callable[[Report, list[Finding]], None]


class DoctorRecord:
    """The newest report while the app runs, from the background checks and the Settings panel alike; each update
    tells its subscribers the report and the findings that are new (not in the report before), so that a finding
    is announced once however long it persists."""

    def __init__(self) -> None:
        self.report: Report | None = None
        self._subscribers: list[ReportCallback] = []

    def subscribe(self, callback: ReportCallback) -> Callable[[], None]:
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    def update(self, report: Report, *, probed: bool) -> list[Finding]:
        """`report` from a check (with the probe when `probed`); the findings that are new."""
        before = self.report.findings if self.report is not None else []
        if not probed:  # the probe's findings stand until a probe says otherwise
            kept = [finding for finding in before if finding.id in PROBE_ONLY]
            report = Report([*report.findings, *kept], report.probe_latency, report.probe_events)
        seen = {key_of(finding) for finding in before}
        new = [finding for finding in report.findings if finding.counts and key_of(finding) not in seen]
        self.report = report
        for callback in list(self._subscribers):
            callback(report, new)
        return new


async def sandbox_info(urls: Sequence[str]) -> dict[str, str] | None:
    """`GET /sandbox/info` at the profile's gateway URLs: the sandbox says who it is (and its own number); a real
    gateway answers something else. {"own_phone", "instance_dialect", "session_dialect"} or None."""
    from tui.api.gateway_http import probe_json

    for url in urls:
        data = await probe_json(url.rstrip("/") + "/sandbox/info", seconds=3.0)  # a hostile answer cannot hold it
        if isinstance(data, dict) and data.get("sandbox") is True:
            return {key: str(data.get(key, "")) for key in ("own_phone", "instance_dialect", "session_dialect")}
    return None


def account_paths_of(record: ListenerRecord | None, profile: str) -> str | None:
    """DoctorInputs.account_paths for `profile` served by the listener of `record` (the app's or `listen`'s): its
    name when that listener serves it on its own `/a/<profile>/` paths only, as the listener itself said."""
    return profile if record is not None and record.account_paths else None


@dataclass
class DoctorInputs:
    """What the doctor examines: the profile's clients (None for a family it lacks), its key, where the listener
    is as the gateway must reach it, and the store the listener writes."""

    name: str
    instance: InstanceClient | None
    session: SessionClient | None
    hmac_key: str | None
    listener_base: str  # the public URL, else the listener's own
    store: EventStore | None
    listener_running: bool = True
    is_sandbox: bool = False
    own_number: str | None = None  # where the probe goes; learnt from the gateway when None
    may_probe: Callable[[], Awaitable[bool]] | None = None  # asked before probing a real gateway; None: skip
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    probe_wait: float = PROBE_WAIT
    reachable: Callable[[str], Awaitable[bool]] | None = None  # does the URL answer from here
    settle: float = 1.5  # seconds after a fix before the second look
    account_paths: str | None = None  # several accounts open: the account whose `/a/<name>/` paths are its own
    listener_for_check: bool = False  # the listener is the doctor's own, started for this check: gone after it
    sandbox_for_check: bool = False  # the sandbox too (`doctor --sandbox`, no app running): only the app keeps one
    in_app: bool = False  # the app's own doctor: the listener and the forwarding are the app's (its Settings)
    sandbox_app: bool = False  # the app's built-in sandbox, which `--sandbox` names (no `--profile` does)
    listen_port: int | None = None  # the port the webhooks are pointed at: where a `listen` must take them
    listening_since: datetime | None = None  # when the listener began (quiet kinds count from then); None: unknown
    wants_media: bool = True  # the listener keeps media: a webhook that sends them without their bytes is a finding
    path_secret: str | None = None  # a Z-API profile's webhook URL secret (listener_paths.PATH_SECRET_SEGMENT)

    def command(self, *words: str) -> str:
        """A command for this profile as the user types it, and as it runs when typed: `gateway-tui listen
        --profile work --port 9000`; the sandbox as `gateway-tui --sandbox listen` (`listen` takes the flag only
        before its name); no words: the app itself. `listen` gets the port the webhooks point at (its own default
        is 8787 whatever the profile says)."""
        if words[:1] == ("listen",) and self.listen_port is not None and "--port" not in words:
            words = (*words, "--port", str(self.listen_port))
        if "--all" in words:  # every profile: none is named
            return shlex.join(["gateway-tui", *words])
        if self.sandbox_app:
            dialects = (self.instance.dialect.value if self.instance is not None else SPEC,
                        self.session.dialect.value if self.session is not None else SPEC)
            return sandbox_command(dialects, *words)
        return profile_command(self.name, *words)


class Doctor:
    def __init__(self, inputs: DoctorInputs) -> None:
        self.inputs = inputs
        self._session_webhook: WebhookConfig | None = None
        self._session_connected: bool | None = None
        self._old_urls: dict[Family, list[str]] = {}
        self._on_own_paths = False  # a webhook was found on the profile's own `/a/<name>/` paths
        self._pointed: set[Family] = set()  # the families whose webhooks this fix pointed (set whole)

    # -- examining -----------------------------------------------------------------------------------------------

    def url_for(self, family: Family) -> str:
        return self._family_url(family, self.inputs.account_paths)

    def _family_url(self, family: Family, account: str | None) -> str:
        """The family's listener URL (below `/a/<account>` when named); the instance family's path is its
        gateway's (`/delivery`, Evolution's `/evolution`), with a Z-API profile's secret segment."""
        if family is Family.SESSION:
            return family_urls(self.inputs.listener_base, account)[PathFamily.SESSION]
        instance = self.inputs.instance
        if instance is None:
            return instance_family_url(self.inputs.listener_base, account)
        secret = self.inputs.path_secret if self._wants_path_secret() else None
        return instance_family_url(self.inputs.listener_base, account, instance.adapter.instance_listener_path, secret)

    def _reaches(self, family: Family, url: str) -> bool:
        """Whether a webhook URL reaches the profile: the listener's URL for it; and, when no running listener says
        which paths serve the profile (the doctor's own for the check serves both), its own `/a/<name>/` one too,
        where `fleet import` points it for a `listen --all` that is stopped now (re-pointing it would break that)."""
        if url == self.url_for(family):
            return True
        inputs = self.inputs
        if family is Family.INSTANCE and inputs.path_secret is None and self._wants_path_secret():
            # a secret URL whose secret is not known here (the app's sandbox keeps it in memory): not judged
            if url and shown_url(url) == shown_url(with_path_secret(self.url_for(family), MASK)):
                return True
        own = self._family_url(family, inputs.name)
        if inputs.listener_for_check and inputs.account_paths is None and url == own:
            self._on_own_paths = True
            return True
        return False

    def _wants_path_secret(self) -> bool:
        instance = self.inputs.instance
        return instance is not None and wants_path_secret(instance.dialect)

    async def examine(self, *, probe: bool = True) -> Report:
        report = Report()
        findings = report.findings
        findings += await self._listener()
        connected: dict[Family, bool] = {}
        if self.inputs.instance is not None:
            connected[Family.INSTANCE], found = await self._instance()
            findings += found
        if self.inputs.session is not None:
            connected[Family.SESSION], found = await self._session()
            findings += found
        if self.inputs.listener_for_check and not any(f.id is FindingId.LISTENER_UNREACHABLE for f in findings):
            findings.append(self._not_running())
        # A family whose webhook is known to point elsewhere or be off is not probed: its silence says nothing new.
        known = {f.family for f in findings if f.id in (FindingId.WEBHOOK_URL_MISMATCH, FindingId.WEBHOOK_INACTIVE)}
        probed = [family for family, up in connected.items() if up and family not in known]
        if probe and probed and not any(f.id is FindingId.LISTENER_UNREACHABLE for f in findings):
            findings += await self._probe(report, probed)
        findings += self._quiet_kinds()
        return report

    async def _listener(self) -> list[Finding]:
        base = self.inputs.listener_base
        inputs = self.inputs
        if not inputs.listener_running or not base:
            start = ("The app's listener did not start: give it a free port in Settings > Listener." if inputs.in_app
                     else f"{_start_listening(inputs)}.")
            return [Finding(FindingId.LISTENER_UNREACHABLE, Severity.ERROR, "The listener is not running.", start)]
        check = self.inputs.reachable or _answers
        if not await check(base):
            return [Finding(FindingId.LISTENER_UNREACHABLE, Severity.ERROR,
                            f"The listener does not answer at its public URL {base} from here.",
                            "Start the tunnel (or fix the profile's public URL) so that this address reaches the "
                            "listener; the gateway sends there.")]
        return []

    def _not_running(self) -> Finding:
        """The probe works, but only because the doctor listens for its check: once it ends, every event is lost."""
        inputs = self.inputs
        if inputs.sandbox_for_check:
            return Finding(FindingId.LISTENER_NOT_RUNNING, Severity.ERROR,
                           "No app was running: the sandbox and the listener were started for this check only, and "
                           "both end with it.",
                           f"Run the app (`{inputs.command()}`) and keep it running: then "
                           f"`{inputs.command('doctor')}` examines the app's sandbox and listener.")
        if self._on_own_paths:  # `listen --all` is what serves those paths (with the other profiles)
            start = f"Run `{inputs.command('listen', '--all')}` and keep it running"
        else:
            start = f"{_start_listening(inputs)} and keep it running"
        return Finding(FindingId.LISTENER_NOT_RUNNING, Severity.ERROR,
                       "No listener was running for this profile: the doctor listened only for this check, and the "
                       "gateway's events go nowhere once it ends.",
                       f"{start}, then `{inputs.command('doctor', '--fix')}` again.")

    async def _instance(self) -> tuple[bool, list[Finding]]:
        client = self.inputs.instance
        assert client is not None
        findings: list[Finding] = []
        try:
            state = (await client.status()).state
        except GatewayError as error:
            return False, [_not_connected(client, f"the gateway did not answer the status read: {error.message}",
                                          self.inputs)]
        if not state.connected:
            findings.append(_not_connected(client, state.reason or "not connected", self.inputs))
        wanted = self.url_for(Family.INSTANCE)
        if client.adapter.refusal(OperationId.INSTANCE_DATA) is None:  # the gateway reads its callbacks (Z-API)
            data = await client.instance_data()
            if data.webhook is not None:  # one webhook with its events (Evolution)
                return state.connected, [*findings, *self._one_webhook(client.adapter.name, data.webhook, wanted)]
            urls = data.callback_urls()
            wrong = {name: url for name, url in urls.items() if not self._reaches(Family.INSTANCE, url)}
            self._old_urls[Family.INSTANCE] = sorted({url for url in wrong.values() if url})
            if wrong:
                # The URLs shown with their secret masked: one with an old secret reads like the right one, so say it
                listed = ", ".join(f"{name} {shown_url(url) or '(none)'}"
                                   f"{' (another secret)' if url and shown_url(url) == shown_url(wanted) else ''}"
                                   for name, url in wrong.items())
                needs_tunnel = wanted.startswith("http://") and not self.inputs.is_sandbox
                fix_words = ("Z-API accepts only https URLs and the public URL is http: start a tunnel (an https "
                             "address that reaches the listener), set it as the profile's public URL, then fix."
                             if needs_tunnel else f"Point every callback at {shown_url(wanted)}.")
                findings.append(Finding(FindingId.WEBHOOK_URL_MISMATCH, Severity.ERROR,
                                        f"Z-API's callbacks do not point at the listener ({shown_url(wanted)}): "
                                        f"{listed}.",
                                        fix_words, Family.INSTANCE, None if needs_tunnel else Fix.POINT_WEBHOOKS))
        else:
            findings.append(Finding(FindingId.WEBHOOK_URL_UNREADABLE, Severity.INFO,
                                    "This gateway (the spec's dialect) has no call to read the delivery URL, so the "
                                    "doctor cannot say where it points.",
                                    f"Set it to {wanted} to be sure.", Family.INSTANCE, Fix.POINT_WEBHOOKS))
        return state.connected, findings

    def _one_webhook(self, gateway: str, webhook: GatewayWebhook, wanted: str) -> list[Finding]:
        """The findings of a gateway's one webhook with its events (Evolution's `/webhook/find`): where it points,
        whether it is on, the events the app reads, media bytes inline. `doctor --fix` sends the whole setting."""
        findings: list[Finding] = []
        instance = Family.INSTANCE
        if not self._reaches(instance, webhook.url):
            self._old_urls[instance] = [webhook.url] if webhook.url else []
            findings.append(Finding(FindingId.WEBHOOK_URL_MISMATCH, Severity.ERROR,
                                    f"{gateway}'s webhook points at {webhook.url or '(none)'}, not the listener "
                                    f"({wanted}).", f"Point it at {wanted}.", instance, Fix.POINT_WEBHOOKS))
        if not webhook.enabled:
            findings.append(Finding(FindingId.WEBHOOK_INACTIVE, Severity.ERROR,
                                    f"{gateway}'s webhook is switched off: it sends nothing.",
                                    "Switch it on, with the events the app reads.", instance, Fix.ACTIVATE))
        missing = webhook.missing_events()
        if missing:
            findings.append(Finding(FindingId.EVENT_NOT_SUBSCRIBED, Severity.ERROR,
                                    f"{gateway}'s webhook does not send {', '.join(missing)}: the app misses those "
                                    "events.", f"Add {', '.join(missing)} to its events.", instance, Fix.SUBSCRIBE))
        if webhook.enabled and not webhook.base64 and self.inputs.wants_media:
            findings.append(Finding(FindingId.MEDIA_WITHOUT_BYTES, Severity.WARNING,
                                    f"{gateway}'s webhook sends media without their bytes (base64 is off): photos, "
                                    "voice notes and documents arrive as references the listener cannot keep.",
                                    "Turn base64 on, then restart the instance (it reads the setting only when it "
                                    "connects).", instance, Fix.SUBSCRIBE))
        return findings

    async def _session(self) -> tuple[bool, list[Finding]]:
        client = self.inputs.session
        assert client is not None
        findings: list[Finding] = []
        connected = True
        if client.adapter.refusal(OperationId.SESSION_STATUS) is None:  # the gateway says its state (WuzAPI)
            try:
                state = (await client.session_status()).state
            except GatewayError as error:
                state = None
                findings.append(_not_connected(client, f"the gateway did not answer the status read: {error.message}",
                                               self.inputs))
                connected = False
            if state is not None and not state.connected:
                findings.append(_not_connected(client, state.reason or "not connected", self.inputs))
                connected = False
            if state is not None and state.number and self.inputs.own_number is None:
                self.inputs.own_number = state.number
        self._session_connected = connected
        webhook = await client.read_webhook()
        self._session_webhook = webhook
        wanted = self.url_for(Family.SESSION)
        if not self._reaches(Family.SESSION, webhook.webhook or ""):
            self._old_urls[Family.SESSION] = [webhook.webhook] if webhook.webhook else []
            findings.append(Finding(FindingId.WEBHOOK_URL_MISMATCH, Severity.ERROR,
                                    f"The session webhook points at {webhook.webhook or '(none)'}, not the listener "
                                    f"({wanted}).", f"Point it at {wanted}.", Family.SESSION, Fix.POINT_WEBHOOKS))
        if webhook.active is False:
            findings.append(Finding(FindingId.WEBHOOK_INACTIVE, Severity.ERROR,
                                    "The session webhook's delivery is switched off: the gateway sends nothing.",
                                    "Switch delivery on.", Family.SESSION, Fix.ACTIVATE))
        subscribed = [kind for kind in webhook.events or [] if kind]
        missing = [] if ALL_KINDS in subscribed else [kind for kind in NEEDED_KINDS if kind not in subscribed]
        if missing:
            findings.append(Finding(FindingId.EVENT_NOT_SUBSCRIBED, Severity.ERROR,
                                    f"The session is not subscribed to {', '.join(missing)}: the gateway skips those "
                                    "events (WuzAPI logs \"Skipping webhook. Not subscribed for this type\").",
                                    f"Subscribe {', '.join(missing)}.", Family.SESSION, Fix.SUBSCRIBE))
        gateway_signs = (await client.hmac_status()).configured
        has_key = bool(self.inputs.hmac_key)
        if gateway_signs and not has_key:
            findings.append(Finding(FindingId.HMAC_MISMATCH, Severity.ERROR,
                                    "The gateway signs its events, and the profile has no HMAC key: the listener "
                                    "cannot tell them from forgeries.",
                                    "Store the gateway's key in the profile (in the app: Settings > HMAC key), or "
                                    "remove the gateway's key.", Family.SESSION))
        elif has_key and not gateway_signs:
            findings.append(Finding(FindingId.HMAC_MISMATCH, Severity.ERROR,
                                    "The profile has an HMAC key and the gateway signs nothing: the listener refuses "
                                    "the unsigned events.", "Set the profile's key on the gateway.",
                                    Family.SESSION, Fix.SET_KEY))
        return connected, findings

    # -- the probe -------------------------------------------------------------------------------------------------

    async def _probe(self, report: Report, families: Sequence[Family]) -> list[Finding]:
        inputs = self.inputs
        store = inputs.store
        if store is None:
            return []
        if any(client is not None and client.read_only for client in (inputs.instance, inputs.session)):
            return [Finding(FindingId.PROBE_SKIPPED, Severity.INFO,
                            "The probe (a message to the account's own number) was not sent: this profile is "
                            "read-only, and the probe is a send.",
                            f"Make it writable (`gateway-tui profile add {shlex.quote(inputs.name)} --no-read-only`) "
                            "to probe.")]
        if not inputs.is_sandbox:
            asked = inputs.may_probe
            if asked is None or not await asked():
                return [Finding(FindingId.PROBE_SKIPPED, Severity.INFO,
                                "The probe (a message to the account's own number) was not sent: a real gateway is "
                                "probed only when a person agrees, at a terminal.",
                                f"Run `{inputs.command('doctor')}` at a terminal and agree.")]
        number = inputs.own_number
        if not number:
            return [Finding(FindingId.PROBE_SKIPPED, Severity.INFO,
                            "The probe was not sent: the account's own number is unknown.", "Pair the account first.")]
        account = inputs.account_paths  # a store several accounts share: only this one's events
        before = await asyncio.to_thread(_newest_id, store)
        started = time.monotonic()
        family = Family.INSTANCE if Family.INSTANCE in families else Family.SESSION
        try:
            await self._send_probe(family, number)
        except GatewayError as error:
            return [Finding(FindingId.NO_EVENTS_AFTER_PROBE, Severity.ERROR,
                            f"The probe could not be sent: {error.message}", "See the gateway's answer.", family)]
        arrived: list[StoredEvent] = []
        deadline = started + inputs.probe_wait
        while time.monotonic() < deadline:
            arrived = await asyncio.to_thread(_events_after, store, before, account)
            if arrived:
                report.probe_latency = time.monotonic() - started
                break
            await asyncio.sleep(0.05)
        if not arrived:
            return [Finding(FindingId.NO_EVENTS_AFTER_PROBE, Severity.ERROR,
                            f"No event arrived within {inputs.probe_wait:g} s of the probe (a message to "
                            f"{number}).", "Check the findings above; if there are none the gateway's delivery is "
                            "stuck: sending the whole webhook setting again restarts it (WuzAPI keeps a stale copy).",
                            None, Fix.ACTIVATE if inputs.session is not None else None)]
        await asyncio.sleep(min(0.5, inputs.probe_wait / 10))  # the rest of the probe's events, briefly
        arrived = await asyncio.to_thread(_events_after, store, before, account)
        report.probe_events = len(arrived)
        rejected = [event for event in arrived if event.rejected]
        if rejected:
            reasons = sorted({event.reason or event.verdict.value for event in rejected})
            return [Finding(FindingId.EVENTS_REJECTED, Severity.ERROR,
                            f"{len(rejected)} of the probe's {len(arrived)} events were refused by the listener: "
                            f"{'; '.join(reasons)}.", "Give the profile the key the gateway signs with (in the app: "
                            "Settings > HMAC key), or set the profile's key on the gateway.",
                            Family.SESSION if any(family_of(e.path) is PathFamily.SESSION for e in rejected) else None)]
        return []

    async def _send_probe(self, family: Family, number: str) -> None:
        from tui.api.models import ContactCard, SendText
        from tui.api.vcard import build_vcard

        if family is Family.INSTANCE and self.inputs.instance is not None:
            await self.inputs.instance.send_text(SendText(phone=number, message=PROBE_TEXT))
        elif self.inputs.session is not None:
            card = build_vcard("gateway-tui doctor probe", number)
            await self.inputs.session.send_contact(ContactCard(Phone=number, Name="gateway-tui doctor probe", Vcard=card))

    # -- quiet kinds ------------------------------------------------------------------------------------------------

    def _quiet_kinds(self) -> list[Finding]:
        store = self.inputs.store
        if store is None:
            return []
        return [Finding(FindingId.EVENT_KIND_QUIET, Severity.WARNING, words,
                        "Check the gateway's subscriptions for this kind; a restart of the gateway's session often "
                        "cures it.")
                for words in quiet_kinds(store, self.inputs.clock(), self.inputs.account_paths,
                                         self.inputs.listening_since)]

    # -- fixing -----------------------------------------------------------------------------------------------------

    async def fix(self, report: Report, only: Fix | None = None) -> list[str]:
        """Apply the fixes of `report` (or only `only`); a line for each thing changed, old -> new."""
        from tui.api.models import HmacKey, WebhookUpdate

        wanted = {finding.fix for finding in report.findings if finding.fix is not None and (only is None or finding.fix is only)}
        lines: list[str] = []
        if Fix.POINT_WEBHOOKS in wanted:
            lines += await self._point(report)
        instance = self.inputs.instance
        setting = {finding.fix for finding in report.findings if finding.family is Family.INSTANCE
                   and finding.fix in (Fix.SUBSCRIBE, Fix.ACTIVATE) and finding.fix in wanted}
        if instance is not None and setting and Family.INSTANCE not in self._pointed:
            # a gateway's one webhook (Evolution) is set whole: on, the events the app reads, media bytes inline
            url = await self._instance_webhook_url()
            await instance.point_every_callback(url)
            lines.append(f"instance webhook: {url}, on, with the events the app reads and media bytes inline")
        session = self.inputs.session
        if session is not None and wanted & {Fix.SUBSCRIBE, Fix.ACTIVATE}:
            current = self._session_webhook or await session.read_webhook()
            kinds = list(dict.fromkeys([*(k for k in current.events or [] if k), *NEEDED_KINDS]))
            url = self.url_for(Family.SESSION) if Fix.POINT_WEBHOOKS in wanted else (current.webhook or self.url_for(Family.SESSION))
            if (Fix.SUBSCRIBE in wanted and self._session_connected is False
                    and session.adapter.refusal(OperationId.SESSION_CONNECT) is None):
                await session.connect(subscribe=kinds)  # WuzAPI stores what connect is sent: the whole list
            await session.update_webhook(WebhookUpdate(webhook=url, events=kinds, active=True))
            lines.append(f"session webhook: subscribed to {', '.join(kinds)}, delivery on")
        if Fix.SET_KEY in wanted and session is not None and self.inputs.hmac_key:
            if not (await session.hmac_status()).configured:  # only when the gateway has none
                await session.set_hmac_key(HmacKey(hmac_key=self.inputs.hmac_key))
                lines.append("session HMAC key: (none) -> the profile's key")
        if lines:
            # The gateway still retries what the listener refused before the fix (a probe's unsigned events): let
            # those retries end, so the second look judges only what is sent after the fix.
            await asyncio.sleep(self.inputs.settle)
        return lines

    async def _instance_webhook_url(self) -> str:
        """Where the instance's one webhook points now (kept by a fix that only switches it on or adds events)."""
        instance = self.inputs.instance
        assert instance is not None
        webhook = (await instance.instance_data()).webhook
        return webhook.url if webhook is not None and webhook.url else self.url_for(Family.INSTANCE)

    async def _point(self, report: Report) -> list[str]:
        from tui.api.models import DeliveryWebhook, WebhookUpdate

        lines: list[str] = []
        families = {f.family for f in report.findings if f.fix is Fix.POINT_WEBHOOKS}
        base = self.inputs.listener_base.rstrip("/")
        instance, session = self.inputs.instance, self.inputs.session
        if instance is not None and Family.INSTANCE in families:
            new = self.url_for(Family.INSTANCE)
            self._pointed.add(Family.INSTANCE)
            if instance.adapter.refusal(OperationId.UPDATE_EVERY_WEBHOOKS) is None:  # every callback at once (Z-API)
                await instance.point_every_callback(new)
            else:
                await instance.set_delivery_webhook(DeliveryWebhook(value=new))
            olds = self._old_urls.get(Family.INSTANCE)
            old_text = ", ".join(shown_url(old) for old in olds) if olds else ("(unknown)" if olds is None else "(none)")
            lines.append(f"instance callbacks: {old_text} -> {shown_url(new)}")
            lines += _keep_fed(olds or [], base, self.inputs)
        if session is not None and Family.SESSION in families:
            new = self.url_for(Family.SESSION)
            current = self._session_webhook or await session.read_webhook()
            kinds = list(dict.fromkeys([*(k for k in current.events or [] if k), *NEEDED_KINDS]))
            await session.update_webhook(WebhookUpdate(webhook=new, events=kinds, active=True))
            lines.append(f"session webhook: {current.webhook or '(none)'} -> {new}")
            lines += _keep_fed([current.webhook] if current.webhook else [], base, self.inputs)
        return lines


def _start_listening(inputs: DoctorInputs) -> str:
    """What starts a listener for the profile, as the user types it. A sandbox started for the doctor's check is
    gone when it ends (each `--sandbox` command starts its own): only the app's sandbox stays, with its listener."""
    if inputs.sandbox_for_check:
        return f"Run the app (`{inputs.command()}`)"
    return f"Run the app (`{inputs.command()}`) or `{inputs.command('listen')}`"


def _keep_fed(olds: Sequence[str], base: str, inputs: DoctorInputs) -> list[str]:
    """For a URL that pointed at another app: what keeps that app fed. In the app, its own forwarding (a second
    listener beside the app's would get nothing); else a `listen` that forwards, as the user can type it."""
    def how(old: str) -> str:
        if inputs.in_app:
            return f"Settings > Forward events to your app, with {old}, keeps it fed"
        command = f"`{inputs.command('listen', '--forward-to', old)}`"
        if not inputs.listener_for_check:  # the listener running now holds the port
            return f"{command}, in place of the listener running now, keeps it fed"
        return f"{command} keeps it fed"

    return [shown_url(f"  {old} was another app's: {how(old)}") for old in olds if not old.startswith(base)]


def _not_connected(client: InstanceClient | SessionClient, reason: str, inputs: DoctorInputs) -> Finding:
    family, gateway = client.family, client.adapter.name
    where = "in the app's Account section (alt+8)" if inputs.in_app else \
        f"with `{inputs.command('connect')}`, or in the app's Account section (alt+8)"
    return Finding(FindingId.NOT_CONNECTED, Severity.ERROR, f"The {family.value} family ({gateway}) is not connected: "
                   f"{reason}.", f"Pair or reconnect it {where}.", family)


async def _answers(url: str) -> bool:
    """Whether anything answers HTTP at `url` (any status) within a few seconds."""
    import httpx

    try:
        async with httpx.AsyncClient(timeout=3.0, trust_env=False) as client:
            await client.get(url)
    except (httpx.HTTPError, OSError, ValueError):
        return False
    return True


def _newest_id(store: EventStore) -> int:
    newest = store.newest(1)
    return newest[0].id if newest else 0


def _events_after(store: EventStore, event_id: int, account: str | None = None) -> list[StoredEvent]:
    return [event for event in store.newest(200, account=account) if event.id > event_id]


def quiet_kinds(store: EventStore, now: datetime, account: str | None = None,
                listening_since: datetime | None = None) -> list[str]:
    """"Message quiet for 42 min while ReadReceipt still arrives", for each kind silent for more than ten times its
    usual gap (at least 15 min) while another kind arrived since (`account`: that account's events only)."""
    times = {kind: [event.received_at for event in store.newest(QUIET_HISTORY, kind=kind, account=account)]
             for kind in store.kinds()}
    return [quiet.words() for quiet in quiet_kinds_among(times, now, listening_since)]
