"""What the inbox's reads give the UI: a conversation, a message (with its media), a step of a sent message's
timeline. Plain data, apart from `tui.webhooks.conversations` (the SQL that derives and reads them), so the UI's
first frame imports these without the inbox's SQL (`gateway-tui --sandbox` reads no conversation before it is
interactive)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tui.webhooks.identities import Identity, is_lid, who
from tui.webhooks.receipts import Status, stuck

TYPING_SECONDS = 30  # "typing…" lasts this long after the last composing notice, unless a message ends it
MEDIA_KINDS = ("image", "video", "audio", "document", "sticker")  # the kinds whose event carries or links a file


@dataclass(frozen=True, slots=True)
class ConversationRow:
    chat_id: str
    name: str | None
    last_us: int
    last_body: str
    last_outgoing: bool
    unread: int
    typing_us: int | None
    messages: int
    phone: str | None = None  # a LID chat's phone number, when learned (tui.webhooks.identities)

    @property
    def title(self) -> str:
        if is_lid(self.chat_id):
            return who(self.chat_id, Identity(self.chat_id, self.phone or "", self.name or ""))
        return self.name or self.chat_id

    @property
    def reply_to(self) -> str:
        """Where a reply goes: a LID chat's phone number when known (it can be answered and saved), else the chat."""
        return self.phone if is_lid(self.chat_id) and self.phone else self.chat_id

    def typing(self, now_us: int) -> bool:
        return self.typing_us is not None and now_us - self.typing_us < TYPING_SECONDS * 1_000_000


@dataclass(frozen=True, slots=True)
class MessageRow:
    id: int
    chat_id: str
    at_us: int
    outgoing: bool
    kind: str
    body: str
    message_id: str | None
    sender: str | None
    status: Status | None
    status_us: int | None = None  # outgoing: when it reached `status` (None: not known)
    event_id: int | None = None  # the event it came from (None: the app's own send)
    media: MediaInfo | None = None  # a media message's file, as its event describes it

    @property
    def is_media(self) -> bool:
        """A media message, whether or not an event here describes its file (the seeded history's have none)."""
        return self.media is not None or self.kind in MEDIA_KINDS


@dataclass(frozen=True, slots=True)
class MediaInfo:
    """What a media message's event says of its file: read from the stored payload (never from the inline base64,
    which the payload holds only as a note of its length). `inline`: WuzAPI sent the bytes in the event (kept by
    the listener as media/<sha256>.<ext>); `url`: Z-API's storage or WuzAPI's S3 link, fetched only on demand."""

    kind: str
    mime_type: str = ""
    file_name: str | None = None
    caption: str | None = None
    size: int | None = None  # bytes, when the event says (whatsmeow's fileLength, the inline base64's length)
    url: str | None = None
    inline: bool = False

    def describe(self) -> str:
        """One line for the thread: `image · photo.jpg · 12 KB · image/jpeg` (what is known; sizes as the sends
        and the gateways' limits write them, `tui.api.models.size_text`)."""
        from tui.api.models import size_text  # pydantic: not imported before the app's first frame

        parts = [self.kind]
        if self.file_name:
            parts.append(self.file_name)
        parts.append(size_text(self.size) if self.size is not None else "size not known until fetched")
        if self.mime_type:
            parts.append(self.mime_type)
        return " · ".join(parts)



@dataclass(frozen=True, slots=True)
class Step:
    """One step of a message's timeline: reached at `at_us` (None: an event said so without a time we know)."""

    status: Status
    at_us: int | None
    error: str | None = None  # failed: the gateway's words


@dataclass(frozen=True, slots=True)
class Timeline:
    """What is known of one message the account sent: the steps events said it reached, oldest step first, and
    the message itself when the inbox has it (a receipt can name a message sent elsewhere)."""

    message_id: str
    status: Status | None  # the best step (failed wins)
    steps: tuple[Step, ...]
    message: MessageRow | None

    def step(self, status: Status) -> Step | None:
        return next((step for step in self.steps if step.status is status), None)

    def stuck(self, now_us: int, after_minutes: float) -> Step | None:
        """The step it has waited at too long (`receipts.stuck`), or None."""
        current = self.step(self.status) if self.status is not None else None
        if current is None or not stuck(current.status, current.at_us, now_us, after_minutes):
            return None
        return current

    def rows(self) -> list[tuple[Status, Step | None]]:
        """The steps to show, in order: sent, handed, delivered and read always (None: no event said it), played
        and failed when reached."""
        shown = [Status.SENT, Status.HANDED, Status.DELIVERED, Status.READ]
        shown += [status for status in (Status.PLAYED, Status.FAILED) if self.step(status) is not None]
        return [(status, self.step(status)) for status in shown]

    def lines(self, time_text: Callable[[int], str], now_us: int, after_minutes: float) -> list[str]:
        """The timeline for reading: one line per step (`rows`), its time or why there is none, the gateway's error
        for a failure, and the stuck note. Never more than the events said: a step no event named shows "—"."""
        if self.message is not None and not self.message.outgoing:
            return ["a received message: its sender's phone keeps its ticks, not this account"]
        reached = max((step.status for step in self.steps if step.status is not Status.FAILED), default=None)
        width = max(len(status.word) for status, _ in self.rows())
        lines = []
        for status, step in self.rows():
            if step is None:
                when = "— no event said so" if reached is not None and reached > status else "— not yet"
            else:
                when = time_text(step.at_us) if step.at_us is not None else "(time not known)"
                if step.error:
                    when += f"  {step.error}"
            lines.append(f"{status.word:<{width}}  {when}")
        waiting = self.stuck(now_us, after_minutes)
        if waiting is not None and waiting.at_us is not None:
            minutes = (now_us - waiting.at_us) // 60_000_000
            lines.append(f"⚠ stuck at {waiting.status.word} for {minutes} min (the mark comes after "
                         f"{after_minutes:g} min)")
        return lines

    def as_json(self, now_us: int, after_minutes: float) -> dict[str, Any]:
        """The timeline for scripts: `gateway-tui message ID --json`. Only the steps reached are listed."""
        waiting = self.stuck(now_us, after_minutes)
        message = self.message
        return {
            "message_id": self.message_id,
            "chat_id": message.chat_id if message is not None else None,
            "outgoing": message.outgoing if message is not None else None,
            "kind": message.kind if message is not None else None,
            "text": message.body if message is not None else None,
            "status": self.status.word if self.status is not None else None,
            "steps": [{"step": step.status.word, "at": _iso(step.at_us), "at_us": step.at_us, "error": step.error}
                      for step in self.steps],
            "stuck": None if waiting is None else {
                "step": waiting.status.word, "since": _iso(waiting.at_us),
                "minutes": (now_us - waiting.at_us) // 60_000_000 if waiting.at_us is not None else None,
                "after_minutes": after_minutes},
        }



def _iso(at_us: int | None) -> str | None:
    """A time as RFC 3339 in UTC with microseconds, or None."""
    if at_us is None:
        return None
    return datetime.fromtimestamp(at_us / 1_000_000, UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
