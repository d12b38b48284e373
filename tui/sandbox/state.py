"""In-memory account of the sandbox gateway, and the demo data it starts with.

Every sandbox operation reads or changes a `SandboxState`, so what one call changes the next call sees
(rename a group, then its metadata shows the new name). The demo data is fixed, with no randomness, so
screens rendered from it are the same on every run.

Conventions the handlers rely on:
* groups are keyed by their digits; `<digits>-group` (instance family) and `<digits>@g.us` (session family,
  send recipients) name the same group;
* a number counts as registered on the network unless it ends in `0000` (`UNREGISTERED_SUFFIX`): adding it
  to a group fails, group creation skips it, and a send to it gets a failed delivery notification.
"""

from __future__ import annotations

import hashlib
from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from tui.sandbox.pairing import Link

UNREGISTERED_SUFFIX = "0000"
USER_SERVER = "s.whatsapp.net"
INVITE_URL = "https://chat.whatsapp.com/"
NOT_REGISTERED = "Phone number does not exist"  # the real gateway's delivery error for such a number
SENT_HISTORY_LIMIT = 1000  # enough to forward recent messages; bounded so a long session cannot grow without end

_BRT = timezone(timedelta(hours=-3))
_INVITE_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_INVITE_CODE_LENGTH = 22


def user_jid(phone: str) -> str:
    return f"{phone}@{USER_SERVER}"


def is_registered(phone: str) -> bool:
    return not phone.endswith(UNREGISTERED_SUFFIX)


def send_failure(recipient: str) -> str | None:
    """Why the network would refuse a message to `recipient`, or None; reported by the delivery notification."""
    return None if is_group_jid(recipient) or is_registered(recipient) else NOT_REGISTERED


def group_digits(identifier: str) -> str:
    """`120363…-group` or `120363…@g.us` → `120363…`; anything else is returned unchanged."""
    return identifier.removesuffix("-group").removesuffix("@g.us")


def is_group_jid(recipient: str) -> bool:
    return recipient.endswith("@g.us")


def invite_code(seed: str, generation: int) -> str:
    """A believable invite code that changes with each reset; derived, not random, so runs are repeatable."""
    number = int.from_bytes(hashlib.sha256(f"{seed}:{generation}".encode()).digest(), "big")
    code = []
    for _ in range(_INVITE_CODE_LENGTH):
        number, digit = divmod(number, len(_INVITE_ALPHABET))
        code.append(_INVITE_ALPHABET[digit])
    return "".join(code)


@dataclass
class Contact:
    phone: str
    name: str


@dataclass
class Participant:
    phone: str
    is_admin: bool = False
    is_super_admin: bool = False


@dataclass
class Group:
    digits: str
    name: str
    description: str
    owner: str  # phone
    created_at: datetime
    participants: dict[str, Participant]  # by phone, in join order
    name_set_at: datetime
    name_set_by: str  # phone
    topic_set_at: datetime
    topic_set_by: str  # phone
    is_announce: bool = False
    is_locked: bool = False
    disappearing_timer: int = 0  # seconds; 0 is off
    community_id: str | None = None
    invite_generation: int = 0
    pending_invites: list[str] = field(default_factory=list)  # add-participant with autoInvite

    @property
    def group_id(self) -> str:
        return f"{self.digits}-group"

    @property
    def jid(self) -> str:
        return f"{self.digits}@g.us"

    @property
    def invite_link(self) -> str:
        return INVITE_URL + invite_code(self.digits, self.invite_generation)

    def is_admin(self, phone: str) -> bool:
        member = self.participants.get(phone)
        return member is not None and (member.is_admin or member.is_super_admin)


@dataclass
class Community:
    community_id: str
    name: str
    description: str
    group_digits: list[str]
    admins: list[str]  # phones
    invite_generation: int = 0

    @property
    def invite_link(self) -> str:
        return INVITE_URL + invite_code(self.community_id, self.invite_generation)


@dataclass
class Product:
    product_id: str
    name: str
    price: int  # minor units of `currency`
    currency: str
    description: str
    images: list[str]
    url: str
    is_hidden: bool = False


@dataclass
class PrivacySettings:
    group_add: str = "ALL"
    group_add_blacklist: list[str] = field(default_factory=list)
    last_seen: str = "ALL"
    last_seen_blacklist: list[str] = field(default_factory=list)


@dataclass
class Chat:
    phone: str  # a phone number or a group JID
    unread: int = 0
    archived: bool = False
    pinned: bool = False
    muted: bool = False
    message_count: int = 0


@dataclass
class SessionWebhook:
    url: str = ""
    events: list[str] = field(default_factory=lambda: ["Message", "ReadReceipt", "ChatPresence"])
    active: bool = True

    def wants(self, kind: str) -> bool:
        return bool(self.url) and self.active and (kind in self.events or "All" in self.events)


@dataclass
class Faults:
    """What the sandbox was told to get wrong (`POST /sandbox/fault`, tui.sandbox.faults); `none` clears it all.
    The subscriptions and the delivery switch are changed in `SessionWebhook` itself (as a real gateway's would
    be); what they were is kept here so `none` can put them back."""

    drop_all: bool = False  # drop-events without kinds: nothing is sent
    dropped: frozenset[str] = frozenset()  # drop-events with kinds: these are not sent
    wrong_key: bool = False  # signed with another key than the one configured
    slow_seconds: float = 0.0  # every delivery this much later
    unsubscribed: tuple[str, ...] = ()  # kinds `unsubscribe` took out of the subscriptions
    events_before: tuple[str, ...] | None = None  # the subscriptions before the first `unsubscribe`
    deactivated: bool = False  # `deactivate` switched delivery off
    ban_after: int | None = None  # `ban`: the account is banned at its Nth send (every call answers 403 from then)

    def drops(self, kind: str) -> bool:
        return self.drop_all or kind in self.dropped


@dataclass(frozen=True)
class SentMessage:
    message_id: str
    recipient: str  # phone number or group JID, as sent
    operation: str  # e.g. "send-text", "chat/send/contact"
    text: str = ""
    first_button_text: str | None = None  # send-button-actions: what the simulated recipient presses
    first_button_id: str | None = None  # and that button's id (Z-API's buttonsResponseMessage.buttonId)
    failure: str | None = None  # set when the network would refuse it; reported by the delivery notification
    media: bytes | None = None  # a media send's bytes, decoded from its data URL (None: sent by link, or no media)
    media_type: str | None = None  # the data URL's type as received (WuzAPI's document: application/octet-stream)
    media_url: str | None = None  # a media send by link (the sandbox does not fetch it)
    file_name: str | None = None


@dataclass(frozen=True)
class ReceivedMessage:
    """A message a contact wrote to the account, as the sandbox sent it to the session webhook: what each dialect's
    history lists afterwards (whether the webhook took it or not), and the event itself, to deliver again."""

    message_id: str
    chat: str  # the chat's JID as the event addressed it (a phone JID, a LID)
    sender: str
    push_name: str
    text: str
    at: datetime
    event: dict[str, Any]
    from_me: bool = False


@dataclass
class SandboxState:
    own_phone: str
    own_name: str
    contacts: dict[str, Contact]
    groups: dict[str, Group]  # by digits
    communities: dict[str, Community]
    products: dict[str, Product]
    privacy: PrivacySettings
    profile_description: str
    chats: dict[str, Chat]
    # Each family's link to WhatsApp (tui.sandbox.pairing): both paired and online unless started --logged-out.
    instance_link: Link = field(default_factory=Link)
    session_link: Link = field(default_factory=Link)
    delivery_url: str = ""  # operation 16
    # Z-API's other callback URLs by kind ("received", "message-status", "chat-presence"); zapi dialect only
    zapi_callback_urls: dict[str, str] = field(default_factory=dict)
    # Evolution's one webhook row as `/webhook/set` stored it (None: never set, `/webhook/find` answers null)
    evolution_webhook: dict[str, Any] | None = None
    # Whether its deliveries carry the instance's key as `apikey` (Evolution's AUTHENTICATION_EXPOSE_IN_FETCH_INSTANCES,
    # true in its .env.example): on, so the listener's apikey verdict and redaction are seen at work
    evolution_expose_apikey: bool = True
    # What each Evolution send answered, by message id, until its `send.message` delivery has carried it
    evolution_sends: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Evolution's four privacy settings the spec has no word for (its `last` and `groupadd` are `privacy`'s)
    evolution_privacy: dict[str, str] = field(default_factory=lambda: {
        "readreceipts": "all", "profile": "all", "status": "contacts", "online": "all"})
    session_webhook: SessionWebhook = field(default_factory=SessionWebhook)  # operation 24
    hmac_key: str | None = None  # operations 17-19; never logged or returned
    proxy_enabled: bool = False
    proxy_url: str = ""  # stored only: the sandbox makes no outbound connection through it
    sent: deque[SentMessage] = field(default_factory=lambda: deque(maxlen=SENT_HISTORY_LIMIT))
    next_group_serial: int = 1
    faults: Faults = field(default_factory=Faults)  # POST /sandbox/fault
    # Every message each recipient got, never trimmed (unlike `sent`): what tests of sends count (GET /sandbox/sent).
    sends_by_recipient: Counter[str] = field(default_factory=Counter)
    # What contacts wrote (POST /sandbox/incoming), oldest first: the gateways' message histories read it back.
    received: deque[ReceivedMessage] = field(default_factory=lambda: deque(maxlen=SENT_HISTORY_LIMIT))

    @property
    def connected(self) -> bool:
        """Both families really connected. Setting it drops (False) or restores (True) both links' websocket,
        as a network would: tests and the UI's snapshots use it; the pairing calls use each family's link."""
        return self.instance_link.connected and self.session_link.connected

    @connected.setter
    def connected(self, value: bool) -> None:
        for link in (self.instance_link, self.session_link):
            link.online = value
            if value:
                link.paired = link.client = True
                link.stuck = False

    def group(self, identifier: str) -> Group | None:
        """The group named by `<digits>-group` or `<digits>@g.us`."""
        return self.groups.get(group_digits(identifier))

    def contact_name(self, phone: str) -> str:
        contact = self.contacts.get(phone)
        return contact.name if contact else ""

    def listed_history(self) -> list[ReceivedMessage]:
        """What a gateway keeping its message history lists, oldest first: the seeded history's texts, then what
        contacts wrote since the start (`received`)."""
        seeded = []
        for past in self.history():
            text = past.content.get("conversation") or (past.content.get("extendedTextMessage") or {}).get("text")
            if not isinstance(text, str):
                continue
            chat = past.chat if is_group_jid(past.chat) else user_jid(past.chat)
            sender = user_jid(past.sender or self.own_phone)
            name = self.contact_name(past.sender) if past.sender else self.own_name
            seeded.append(ReceivedMessage(past.message_id, chat, sender, name, text, past.at, {}, past.sender is None))
        return [*seeded, *self.received]

    def record_send(self, sent: SentMessage) -> None:
        self.sent.append(sent)
        self.sends_by_recipient[sent.recipient] += 1
        self.chat(sent.recipient).message_count += 1

    @property
    def banned(self) -> bool:
        """The `ban` fault holds and the account has made the sends it allows."""
        after = self.faults.ban_after
        return after is not None and self.sends_by_recipient.total() >= after - 1

    def history(self) -> list[HistoryMessage]:
        return demo_history()

    def last_message_times(self) -> dict[str, datetime]:
        """When each chat's last message was, from the seeded history and what contacts wrote since (the gateways'
        chat lists report it)."""
        times = {item.chat: item.at for item in self.history()}
        for message in self.received:
            if message.chat.endswith(f"@{USER_SERVER}"):
                times[message.chat.split("@")[0]] = message.at
        return times

    def push_name(self, phone: str) -> str:
        """What a contact calls themselves: their first name (the account saved the full name)."""
        return self.contact_name(phone).split(" ")[0]

    def find_sent(self, message_id: str) -> SentMessage | None:
        return next((message for message in self.sent if message.message_id == message_id), None)

    def chat(self, recipient: str) -> Chat:
        if recipient not in self.chats:
            self.chats[recipient] = Chat(recipient)
        return self.chats[recipient]

    def new_group_digits(self) -> str:
        digits = f"1203639{self.next_group_serial:011d}"
        self.next_group_serial += 1
        return digits


# ---------------------------------------------------------------------------------------------
# Demo data

OWN_PHONE = "5511912345678"
OWN_NAME = "Acme Store (sandbox)"

ALL_HANDS_ID = "120363025246125888"
ALL_HANDS_SIZE = 1024
LAUNCH_ID = "120363041982375610"
FAMILY_ID = "120363058811204477"
NEIGHBOURS_ID = "120363069900112233"  # the one group where the sandbox account is not an admin
COMMUNITY_ID = "120363186053925765"
COMMUNITY_GROUP_IDS = ("120363187741205519", "120363188032117746", "120363188219904431")

DEMO_CONTACTS: tuple[tuple[str, str], ...] = (
    ("5511987654321", "Ana Souza"),
    ("5511976543219", "Bruno Lima"),
    ("5521998877665", "Carla Mendes"),
    ("5531991234567", "Diego Ferreira"),
    ("5541988776655", "Elisa Rocha"),
    ("5551977665544", "Felipe Costa"),
    ("5561966554433", "Gabriela Alves"),
    ("5571955443322", "Henrique Dias"),
    ("5511944332211", "Marina Oliveira"),
    ("14155550123", "Jordan Miller"),
    ("12125550187", "Priya Patel"),
    ("447700900123", "Oliver Bennett"),
)

PRODUCT_IDS = ("6814402216592341", "7026319953018834", "5591832074411650", "8240016637709125", "4419907312285563")


def _at(year: int, month: int, day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=_BRT)


def _generated_member(index: int) -> str:
    # Distinct for every index below 10**8 / 7919, spread over Brazilian area codes; never ends in 0000.
    area = ("11", "21", "31", "41", "51", "61", "71", "81")[index % 8]
    return f"55{area}9{(index * 7919 + 1234) % 10**8:08d}"


def _group(
    digits: str,
    name: str,
    description: str,
    *,
    owner: str,
    created_at: datetime,
    members: list[str],
    admins: set[str],
    **flags: object,
) -> Group:
    participants = {
        phone: Participant(phone, is_admin=phone in admins or phone == owner, is_super_admin=phone == owner)
        for phone in members
    }
    return Group(
        digits=digits,
        name=name,
        description=description,
        owner=owner,
        created_at=created_at,
        participants=participants,
        name_set_at=created_at,
        name_set_by=owner,
        topic_set_at=created_at + timedelta(minutes=5),
        topic_set_by=owner,
        **flags,  # type: ignore[arg-type]
    )


def seed_demo_state(*, own_phone: str = OWN_PHONE, own_name: str = OWN_NAME) -> SandboxState:
    contacts = {phone: Contact(phone, name) for phone, name in DEMO_CONTACTS}
    phones = list(contacts)
    ana, bruno, carla, diego, elisa, felipe, gabriela, henrique, marina, jordan, priya, oliver = phones

    all_hands_members = [own_phone, *phones[:8]]
    index = 0
    while len(all_hands_members) < ALL_HANDS_SIZE:
        member = _generated_member(index)
        index += 1
        if member not in all_hands_members:
            all_hands_members.append(member)

    groups = [
        _group(
            ALL_HANDS_ID,
            "Engineering All-Hands",
            "Company-wide engineering sync, Thursdays 10:00 BRT. Agenda and recordings in the pinned message.",
            owner=own_phone,
            created_at=_at(2022, 8, 15, 14),
            members=all_hands_members,
            admins={ana, diego},
            is_announce=True,
            is_locked=True,
        ),
        _group(
            LAUNCH_ID,
            "Product Launch Q3",
            "Launch checklist, owners and dates for the Q3 release.",
            owner=own_phone,
            created_at=_at(2024, 6, 3, 9, 30),
            members=[own_phone, ana, carla, elisa, jordan, priya, oliver],
            admins={jordan},
        ),
        _group(
            FAMILY_ID,
            "Souza Family",
            "Sunday lunch at grandma's, 13h.",
            owner=ana,
            created_at=_at(2019, 12, 24, 20),
            members=[ana, own_phone, bruno, marina],
            admins={own_phone},
            disappearing_timer=604800,
        ),
        _group(
            NEIGHBOURS_ID,
            "Vila Madalena Neighbours",
            "Street safety, lost pets and the Saturday market. Be kind.",
            owner=henrique,
            created_at=_at(2021, 3, 9, 18, 45),
            members=[henrique, gabriela, felipe, own_phone, marina],
            admins={gabriela},
        ),
        _group(
            COMMUNITY_GROUP_IDS[0],
            "Acme Partners: Announcements",
            "News for resellers. Only admins post here.",
            owner=own_phone,
            created_at=_at(2023, 2, 1, 10),
            members=[own_phone, bruno, felipe, jordan, priya, oliver],
            admins=set(),
            is_announce=True,
            community_id=COMMUNITY_ID,
        ),
        _group(
            COMMUNITY_GROUP_IDS[1],
            "Acme Partners: Support",
            "Orders, returns and warranty questions from partners.",
            owner=own_phone,
            created_at=_at(2023, 2, 1, 10, 5),
            members=[own_phone, bruno, felipe, carla],
            admins={carla},
            community_id=COMMUNITY_ID,
        ),
        _group(
            COMMUNITY_GROUP_IDS[2],
            "Acme Partners: Sales",
            "Price lists, promotions and leads.",
            owner=own_phone,
            created_at=_at(2023, 2, 1, 10, 10),
            members=[own_phone, jordan, priya, oliver, diego],
            admins={priya},
            community_id=COMMUNITY_ID,
        ),
    ]

    community = Community(
        community_id=COMMUNITY_ID,
        name="Acme Partners",
        description="Resellers and service partners of Acme Store.",
        group_digits=list(COMMUNITY_GROUP_IDS),
        admins=[own_phone, priya],
    )

    products = [
        Product(
            PRODUCT_IDS[0],
            "Wireless Earbuds Pro",
            29990,
            "BRL",
            "Active noise cancelling, 30 h battery with the case, USB-C and wireless charging.",
            ["https://cdn.acme-store.example/products/earbuds-pro-1.jpg",
             "https://cdn.acme-store.example/products/earbuds-pro-2.jpg"],
            f"https://wa.me/p/{PRODUCT_IDS[0]}/{own_phone}",
        ),
        Product(
            PRODUCT_IDS[1],
            "USB-C Fast Charger 65W",
            4999,
            "USD",
            "GaN charger with two USB-C ports and one USB-A port; folding plug.",
            ["https://cdn.acme-store.example/products/charger-65w.jpg"],
            f"https://wa.me/p/{PRODUCT_IDS[1]}/{own_phone}",
        ),
        Product(
            PRODUCT_IDS[2],
            "Leather Phone Case",
            8990,
            "BRL",
            "Full-grain leather, microfibre lining, fits most 6.1-inch phones.",
            ["https://cdn.acme-store.example/products/leather-case-brown.jpg",
             "https://cdn.acme-store.example/products/leather-case-black.jpg"],
            f"https://wa.me/p/{PRODUCT_IDS[2]}/{own_phone}",
        ),
        Product(
            PRODUCT_IDS[3],
            "Smart Home Hub",
            12900,
            "USD",
            "Zigbee and Matter hub; discontinued, kept for existing orders.",
            ["https://cdn.acme-store.example/products/home-hub.jpg"],
            f"https://wa.me/p/{PRODUCT_IDS[3]}/{own_phone}",
            is_hidden=True,
        ),
        Product(
            PRODUCT_IDS[4],
            "Gift Card R$ 100",
            10000,
            "BRL",
            "Digital gift card, delivered by message, valid for 12 months.",
            ["https://cdn.acme-store.example/products/gift-card-100.png"],
            f"https://wa.me/p/{PRODUCT_IDS[4]}/{own_phone}",
        ),
    ]  # fmt: skip

    chats = {phone: Chat(phone, message_count=12 + 7 * position) for position, phone in enumerate(phones)}
    chats[ana].unread = 3
    chats[ana].pinned = True
    chats[jordan].unread = 1
    chats[marina].archived = True
    chats[henrique].muted = True
    for group in groups:
        chats[group.jid] = Chat(group.jid, message_count=40)
    chats[groups[0].jid].muted = True
    chats[groups[0].jid].unread = 27

    return SandboxState(
        own_phone=own_phone,
        own_name=own_name,
        contacts=contacts,
        groups={group.digits: group for group in groups},
        communities={community.community_id: community},
        products={product.product_id: product for product in products},
        privacy=PrivacySettings(
            group_add="CONTACT_BLACKLIST",
            group_add_blacklist=[bruno],
            last_seen="CONTACT",
        ),
        profile_description="Acme Store customer support, Mon-Fri 9h-18h (BRT). This is a sandbox account.",
        chats=chats,
    )


# ---------------------------------------------------------------------------------------------
# Demo history: what the seeded chats said before the sandbox started, so the inbox is alive from the first
# minute. Each message is whatsmeow's protobuf `Message` as JSON (what a session webhook would carry), from a
# member's phone or from the account itself (None). Fixed times, so every run shows the same history.


@dataclass(frozen=True)
class HistoryMessage:
    chat: str  # a contact's phone or a group JID
    sender: str | None  # the member's phone; None: the account itself
    content: dict
    at: datetime
    message_id: str


def _history_rows() -> list[tuple[str, str | None, dict, tuple[int, int]]]:
    ana, bruno, carla, _diego, elisa, _felipe, gabriela, henrique, marina, jordan, priya, oliver = (
        phone for phone, _ in DEMO_CONTACTS
    )
    launch, family, neighbours = f"{LAUNCH_ID}@g.us", f"{FAMILY_ID}@g.us", f"{NEIGHBOURS_ID}@g.us"
    return [
        (neighbours, henrique, {"conversation": "Has anyone seen a grey cat near the bakery?"}, (8, 2)),
        (neighbours, gabriela, {"imageMessage": {"caption": "This one? Sleeping on my car", "mimetype": "image/jpeg"}}, (8, 9)),
        (neighbours, henrique, {"conversation": "Yes! That's Pipoca. Coming now, thank you"}, (8, 11)),
        (neighbours, marina, {"locationMessage": {"name": "Saturday market", "address": "Praça Benedito Calixto",
                                                  "degreesLatitude": -23.5586, "degreesLongitude": -46.6817}}, (8, 40)),
        (family, ana, {"conversation": "Lunch at grandma's on Sunday, 13h. Who is bringing dessert?"}, (9, 5)),
        (family, bruno, {"conversation": "I'll bring the pudim"}, (9, 7)),
        (family, None, {"conversation": "Count me in, I'll bring drinks"}, (9, 12)),
        (family, marina, {"stickerMessage": {"mimetype": "image/webp"}}, (9, 13)),
        (launch, jordan, {"conversation": "Launch checklist is in the group description. Please confirm your items."}, (9, 30)),
        (launch, None, {"pollCreationMessageV3": {"name": "Launch date?", "selectableOptionsCount": 1, "options": [
            {"optionName": "Tue 10 Sep"}, {"optionName": "Thu 12 Sep"}]}}, (9, 34)),
        (launch, priya, {"extendedTextMessage": {"text": "Pricing page draft: https://acme-store.example/launch",
                                                 "matchedText": "https://acme-store.example/launch",
                                                 "title": "Acme Store: Q3 launch", "description": "Draft pricing"}}, (9, 41)),
        (launch, oliver, {"documentMessage": {"fileName": "press-release-v3.pdf", "mimetype": "application/pdf"}}, (9, 46)),
        (launch, carla, {"contactMessage": {"displayName": "Rafael (printing)", "vcard": "BEGIN:VCARD\nEND:VCARD"}}, (9, 52)),
        (launch, jordan, {"pollVote": {"selectedOptions": ["Thu 12 Sep"]}}, (9, 55)),
        (launch, elisa, {"pollVote": {"selectedOptions": ["Thu 12 Sep"]}}, (10, 2)),
        (launch, elisa, {"conversation": "Thu 12 works for the warehouse."}, (10, 3)),
        (jordan, None, {"conversation": "Hi Jordan, the invoice for order 1042 is ready."}, (10, 15)),
        (jordan, jordan, {"conversation": "Great, could you send it as PDF?"}, (10, 21)),
        (bruno, bruno, {"conversation": "Did the charger ship yet?"}, (10, 30)),
        (bruno, None, {"conversation": "Yes, this morning. Tracking code AC123456789BR"}, (10, 34)),
        (bruno, None, {"buttonsMessage": {"contentText": "Was this answer helpful?", "buttons": [
            {"buttonText": {"displayText": "Yes"}}, {"buttonText": {"displayText": "No"}}]}}, (10, 35)),
        (bruno, bruno, {"buttonsResponseMessage": {"selectedDisplayText": "Yes"}}, (10, 36)),
        (ana, None, {"conversation": "Hi Ana! Your earbuds are ready for pick-up."}, (11, 0)),
        (ana, ana, {"conversation": "Oh great"}, (11, 20)),
        (ana, ana, {"conversation": "Can I come by tomorrow after 18h?"}, (11, 21)),
        (ana, ana, {"conversation": "Or Saturday morning"}, (11, 22)),
    ]


def demo_history() -> list[HistoryMessage]:
    """The seeded chats' past messages, oldest first (times on the day the deterministic clock shows)."""
    history = []
    for index, (chat, sender, content, (hour, minute)) in enumerate(_history_rows(), 1):
        at = datetime(2025, 1, 1, hour, minute, tzinfo=UTC)
        history.append(HistoryMessage(chat, sender, content, at, f"HIST{index:08d}"))
    return history
