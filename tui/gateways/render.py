"""Each kind of message rendered for reading: the inbox's thread and preview, and the text the classifier puts in a
Z-API event's summary (so the summary, the event detail and the inbox say the same thing).

`render_whatsmeow` reads WuzAPI's `Message` (whatsmeow's protobuf as JSON, docs/gateways/wuzapi.md §4.3);
`render_zapi` reads a Z-API `ReceivedCallback` (docs/gateways/zapi.md §5.3, Z-API/docs
`en/webhooks/on-message-received-examples.mdx`). Both return (kind, text), never raise, never a field name alone.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tui.api.fields import dict_of, list_of, text_of

_MEDIA = {"imageMessage": "image", "videoMessage": "video", "audioMessage": "audio", "documentMessage": "document",
          "stickerMessage": "sticker", "ptvMessage": "video"}


def render_whatsmeow(message: dict) -> tuple[str, str]:
    """(kind, text for reading) of a WuzAPI `Message` (whatsmeow's protobuf as JSON)."""
    if isinstance(message.get("conversation"), str):
        return "text", message["conversation"]
    if isinstance(message.get("pollVote"), dict):  # WuzAPI's decrypted vote (history keeps it beside the content)
        return "vote", f"voted: {names_of(message['pollVote'].get('selectedOptions'))}"
    wrapped = dict_of(dict_of(message.get("documentWithCaptionMessage")).get("message"))
    if wrapped:
        return render_whatsmeow(wrapped)
    for name, part in message.items():
        if not isinstance(part, dict) or name in ("messageContextInfo", "senderKeyDistributionMessage"):
            continue
        if name == "extendedTextMessage":
            text = text_of(part.get("text"))
            title = text_of(part.get("title"))
            if text_of(part.get("matchedText")) or title:
                return "link", _lines(text, title and f"  ⧉ {title}", text_of(part.get("description")) and f"  {text_of(part.get('description'))}")
            quoted = dict_of(dict_of(part.get("contextInfo")).get("quotedMessage"))
            if quoted:
                return "text", _lines(f"↪ {_short(render_whatsmeow(quoted)[1])}", text)
            return "text", text
        if name in ("buttonsResponseMessage", "templateButtonReplyMessage"):
            chosen = text_of(part.get("selectedDisplayText")) or text_of(part.get("selectedButtonID")) or "?"
            return "buttons", f"[pressed] {chosen}"
        if name == "listResponseMessage":
            chosen = text_of(part.get("title")) or text_of(dict_of(part.get("singleSelectReply")).get("selectedRowID")) or "?"
            return "list", f"[chose] {chosen}"
        if name == "buttonsMessage":
            labels = [text_of(dict_of(dict_of(b).get("buttonText")).get("displayText")) for b in list_of(part.get("buttons"))]
            return "buttons", _lines(text_of(part.get("contentText")), " ".join(f"[ {label} ]" for label in labels if label))
        if name.startswith("pollCreationMessage"):
            options = [text_of(dict_of(o).get("optionName")) for o in list_of(part.get("options"))]
            return "poll", _lines(f"[poll] {text_of(part.get('name'))}", *(f"  ○ {o}" for o in options if o))
        if name == "pollUpdateMessage":
            return "vote", "voted (encrypted)"
        if name in _MEDIA:
            label = _MEDIA[name]
            detail = text_of(part.get("caption")) or text_of(part.get("fileName")) or text_of(part.get("title"))
            if not detail and label == "audio" and text_of(part.get("seconds")):
                detail = f"{text_of(part.get('seconds'))} s"
            return label, f"[{label}] {detail}".rstrip()
        if name in ("locationMessage", "liveLocationMessage"):
            return "location", _location(part.get("name"), part.get("address"),
                                         part.get("degreesLatitude"), part.get("degreesLongitude"))
        if name == "contactMessage":
            return "contact", f"[contact] {text_of(part.get('displayName'))}".rstrip()
        if name == "contactsArrayMessage":
            names = [text_of(dict_of(c).get("displayName")) for c in list_of(part.get("contacts"))]
            return "contact", f"[contacts] {', '.join(n for n in names if n) or text_of(part.get('displayName'))}".rstrip()
        if name == "reactionMessage":
            emoji = text_of(part.get("text"))
            return "reaction", f"[reacted {emoji}]" if emoji else "[reaction removed]"
        if name == "protocolMessage":
            return "protocol", "[message changed or deleted]"
        return _labelled(name, part, ("text", "caption", "displayName", "fileName", "name", "title"))
    return "text", "(no content)"


def _labelled(name: str, part: dict, fields: tuple[str, ...]) -> tuple[str, str]:
    """A part this version has no words for: `[name] first text`, its name without the `Message` suffix."""
    label = name.removesuffix("Message") or name
    text = next((text_of(part[field]) for field in fields if text_of(part.get(field))), "")
    return label, f"[{label}] {text}".rstrip()


def render_zapi(payload: dict) -> tuple[str, str]:
    """(kind, text for reading) of a Z-API `ReceivedCallback`."""
    text = dict_of(payload.get("text"))
    if isinstance(text.get("message"), str):
        status = _status_replied_to(payload)
        if status:
            return "text", _lines(f"↪ reply to your status {status}".rstrip(), text["message"])
        quoted = text_of(payload.get("referenceMessageId"))
        return "text", text["message"] if not quoted else _lines(f"↪ reply to {quoted}", text["message"])
    link = dict_of(payload.get("linkPreview")) or dict_of(payload.get("link"))
    if link:
        return "link", _lines(text_of(link.get("message")) or text_of(link.get("url")), f"  ⧉ {text_of(link.get('title'))}")
    buttons = dict_of(payload.get("buttonsResponseMessage"))
    if buttons:
        return "buttons", f"[pressed] {text_of(buttons.get('message')) or text_of(buttons.get('buttonId')) or '?'}"
    listed = dict_of(payload.get("listResponseMessage"))
    if listed:
        chosen = text_of(listed.get("title")) or text_of(listed.get("message")) or text_of(listed.get("selectedRowId"))
        return "list", f"[chose] {chosen or '?'}"
    poll = dict_of(payload.get("poll"))
    if poll:
        options = [text_of(dict_of(o).get("name")) for o in list_of(poll.get("options"))]
        return "poll", _lines(f"[poll] {text_of(poll.get('question'))}", *(f"  ○ {o}" for o in options if o))
    vote = dict_of(payload.get("pollVote"))
    if vote:
        return "vote", f"voted: {names_of(vote.get('options'))}"
    reaction = dict_of(payload.get("reaction"))
    if reaction:
        return "reaction", f"[reacted {text_of(reaction.get('value'))}]"
    location = dict_of(payload.get("location"))
    if location:
        return "location", _location(location.get("name"), location.get("address"),
                                     location.get("latitude"), location.get("longitude"))
    contact = dict_of(payload.get("contact"))
    if contact:
        return "contact", f"[contact] {text_of(contact.get('displayName'))}".rstrip()
    for key in ("image", "video", "audio", "document", "sticker"):
        part = payload.get(key)
        if isinstance(part, dict):
            detail = text_of(part.get("caption")) or text_of(part.get("fileName")) or text_of(part.get("title"))
            if not detail and key == "audio" and text_of(part.get("seconds")):
                detail = f"{text_of(part.get('seconds'))} s"
            return key, f"[{key}] {detail}".rstrip()
    for key, render in _ZAPI_PARTS.items():
        part = payload.get(key)
        if isinstance(part, dict):
            return render(part)
    if payload.get("waitingMessage") is True:  # WhatsApp could not decrypt it yet; the phone shows the same words
        return WAITING, WAITING_TEXT
    return _unknown_part(payload)


WAITING = "waiting"  # the kind of a message the gateway could not decrypt yet (its content may follow, same id)
WAITING_TEXT = "[waiting for this message]"


def _status_replied_to(payload: dict) -> str:
    """`[image] caption` of the account's status a Z-API text answers (statusImage/statusVideo/statusAudio)."""
    for key, label in (("statusImage", "image"), ("statusVideo", "video"), ("statusAudio", "audio")):
        part = payload.get(key)
        if isinstance(part, dict):
            return f"[{label}] {text_of(part.get('caption'))}".rstrip()
    return ""


def _button_labels(buttons: Any) -> str:
    """`[ Yes ]  [ Copy code: 123456 ]` from Z-API's `buttons` or `hydratedButtons` (an OTP's code is in its URL)."""
    labels = []
    for button in list_of(buttons):
        button = dict_of(button)
        label = text_of(dict_of(button.get("buttonText")).get("displayText"))
        for kind in ("urlButton", "quickReplyButton", "callButton"):
            inner = dict_of(button.get(kind))
            if inner:
                label = text_of(inner.get("displayText"))
                code = _otp_code(text_of(inner.get("url")))
                if code:
                    label = f"{label or 'Copy code'}: {code}"
                elif text_of(inner.get("phoneNumber")):
                    label = f"{label} ☎ {text_of(inner.get('phoneNumber'))}".strip()
        if label:
            labels.append(f"[ {label} ]")
    return "  ".join(labels)


def _otp_code(url: str) -> str:
    """The code of a WhatsApp one-time-password button (`https://www.whatsapp.com/otp/code/?otp_type=…&code=…`)."""
    if "/otp/" not in url:
        return ""
    query = parse_qs(urlsplit(url).query)
    return (query.get("code") or [""])[0].strip()


def _header(header: Any) -> str:
    """The media a template or carousel card shows above its text: `[image] caption`, `[location] place`."""
    header = dict_of(header)
    for key in ("image", "video", "document"):
        part = header.get(key)
        if isinstance(part, dict):
            detail = text_of(part.get("caption")) or text_of(part.get("fileName")) or text_of(part.get("title"))
            return f"[{key}] {detail}".rstrip()
    location = dict_of(header.get("location"))
    if location:
        return f"[location] {text_of(location.get('name')) or text_of(location.get('address'))}".rstrip()
    return ""


def _buttons_message(part: dict) -> tuple[str, str]:
    media = "[image]" if text_of(part.get("imageUrl")) else "[video]" if text_of(part.get("videoUrl")) else ""
    return "buttons", _lines(media, text_of(part.get("message")), _button_labels(part.get("buttons"))) or "[buttons]"


def _template(part: dict) -> tuple[str, str]:
    """A business template (hydratedTemplate): title, header media, text, footer and buttons (OTP codes shown)."""
    title, message = text_of(part.get("title")), text_of(part.get("message"))
    body = _lines(
        f"[template] {title or message}".rstrip(),
        _header(part.get("header")),
        message if title else "",
        text_of(part.get("footer")) and f"  {text_of(part.get('footer'))}",
        _button_labels(part.get("hydratedButtons")),
    )
    return "template", body


def _carousel(part: dict) -> tuple[str, str]:
    cards = []
    for number, card in enumerate(list_of(part.get("cards")), 1):
        card = dict_of(card)
        words = " ".join(w for w in (_header(card.get("header")), text_of(card.get("title")), text_of(card.get("message"))) if w)
        buttons = _button_labels(card.get("hydratedButtons"))
        cards.append(f"  {number}. {words}{'  ' + buttons if buttons else ''}".rstrip())
    return "carousel", _lines(f"[carousel] {text_of(part.get('text'))}".rstrip(), *cards)


def _amount(value: Any, currency: Any) -> str:
    """An amount as the event gives it (Z-API does not say its unit), with its currency: `605 BRL`."""
    return " ".join(word for word in (text_of(value), text_of(currency)) if word)


def _pix(part: dict) -> tuple[str, str]:
    key_type = text_of(part.get("keyType"))
    merchant = text_of(part.get("merchantName"))
    line = f"[PIX key] {text_of(part.get('key')) or '?'}{f' ({key_type})' if key_type else ''}"
    return "payment", line + (f" · {merchant}" if merchant else "")


def _product(part: dict) -> tuple[str, str]:
    price = _amount(part.get("price"), part.get("currencyCode"))
    line = f"[product] {text_of(part.get('title')) or text_of(part.get('productId')) or '?'}"
    return "product", _lines(line + (f" · {price}" if price else ""), text_of(part.get("description")))


def _products(products: Any) -> list[str]:
    lines = []
    for product in list_of(products):
        product = dict_of(product)
        quantity = text_of(product.get("quantity"))
        name = text_of(product.get("name")) or text_of(product.get("productId"))
        if name:
            lines.append(f"  • {quantity + ' × ' if quantity else ''}{name}")
    return lines


def _order(part: dict) -> tuple[str, str]:
    items = text_of(part.get("itemCount"))
    total = _amount(part.get("total"), part.get("currency"))
    line = " · ".join(w for w in (
        f"[order] {text_of(part.get('orderTitle')) or text_of(part.get('orderId')) or '?'}",
        items and f"{items} item{'' if items == '1' else 's'}",
        total and f"total {total}",
    ) if w)
    return "order", _lines(line, text_of(part.get("message")), *_products(part.get("products")))


def _order_update(label: str) -> Callable[[dict], tuple[str, str]]:
    """reviewOrder (the seller changed the order) and reviewAndPay (the order asks for payment)."""
    def render(part: dict) -> tuple[str, str]:
        states = ", ".join(w for w in (
            text_of(part.get("orderStatus")) and f"order {text_of(part.get('orderStatus'))}",
            text_of(part.get("paymentStatus")) and f"payment {text_of(part.get('paymentStatus'))}",
        ) if w)
        total = _amount(part.get("total"), part.get("currency"))
        line = f"[{label}] {text_of(part.get('referenceId')) or '?'}" + (f": {states}" if states else "")
        return "order", _lines(line + (f" · total {total}" if total else ""), *_products(part.get("products")))
    return render


def _payment_request(part: dict) -> tuple[str, str]:
    info = dict_of(part.get("paymentInfo"))
    amount = _amount(part.get("value"), part.get("currencyCode")) or _amount(info.get("value"), info.get("currencyCode"))
    status = text_of(info.get("status"))
    return "payment", f"[payment request] {amount or '?'}{f' ({status})' if status else ''}"


def _payment_sent(part: dict) -> tuple[str, str]:
    info = dict_of(part.get("paymentInfo"))
    amount = _amount(info.get("value"), info.get("currencyCode"))
    to = text_of(info.get("receiverPhone"))
    status = text_of(info.get("status"))
    return "payment", f"[payment sent] {amount or '?'}{f' to {to}' if to else ''}{f' ({status})' if status else ''}"


def _event(part: dict) -> tuple[str, str]:
    when = part.get("scheduleTime")
    at = ""
    if isinstance(when, (int, float)) and not isinstance(when, bool) and 0 < when < 1e11:  # seconds, as the docs' example
        at = datetime.fromtimestamp(when, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    canceled = " (canceled)" if part.get("canceled") is True else ""
    return "event", _lines(f"[event] {text_of(part.get('name')) or '?'}{canceled}", text_of(part.get("description")),
                           at and f"  {at}", text_of(part.get("joinLink")) and f"  {text_of(part.get('joinLink'))}")


def _event_response(part: dict) -> tuple[str, str]:
    answer = text_of(part.get("response")).lower().replace("_", " ") or "?"
    target = text_of(dict_of(part.get("referencedMessage")).get("messageId"))
    return "event", f"[event response] {answer}{f' to {target}' if target else ''}"


def _pin(part: dict) -> tuple[str, str]:
    target = text_of(dict_of(part.get("referencedMessage")).get("messageId")) or "?"
    if text_of(part.get("action")).lower() == "unpin":
        return "pin", f"[unpinned] message {target}"
    seconds = part.get("pinDurationInSecs")
    span = ""
    if isinstance(seconds, int) and not isinstance(seconds, bool) and seconds > 0:
        days, rest = divmod(seconds, 86400)
        span = f" for {days} day{'' if days == 1 else 's'}" if days and not rest else f" for {seconds // 3600} h"
    return "pin", f"[pinned] message {target}{span}"


def _channel_invite(part: dict) -> tuple[str, str]:
    name = text_of(part.get("newsletterName")) or text_of(part.get("newsletterId")) or "?"
    return "invite", _lines(f"[channel admin invite] {name}", text_of(part.get("text")))


# Z-API's other payload keys (on-message-received-examples.mdx), each with its renderer.
_ZAPI_PARTS: dict[str, Callable[[dict], tuple[str, str]]] = {
    "buttonsMessage": _buttons_message,
    "hydratedTemplate": _template,
    "carouselMessage": _carousel,
    "pixKeyMessage": _pix,
    "product": _product,
    "order": _order,
    "reviewOrder": _order_update("order update"),
    "reviewAndPay": _order_update("order payment"),
    "requestPayment": _payment_request,
    "sendPayment": _payment_sent,
    "event": _event,
    "eventResponse": _event_response,
    "pinMessage": _pin,
    "newsletterAdminInvite": _channel_invite,
}

# Envelope fields that hold an object and are not the message (docs/gateways/zapi.md §5.3).
_ZAPI_ENVELOPE_OBJECTS = frozenset({"externalAdReply", "statusImage", "statusVideo", "statusAudio"})


def _unknown_part(payload: dict) -> tuple[str, str]:
    """A payload key this version does not know yet: its name and its first text, never "(no content)" alone."""
    for key, part in payload.items():
        if isinstance(part, dict) and key not in _ZAPI_ENVELOPE_OBJECTS:
            return _labelled(key, part, ("message", "text", "title", "name", "caption", "description"))
    return "text", "(no content)"


def _location(name: Any, address: Any, lat: Any, lng: Any) -> str:
    where = f"({text_of(lat)}, {text_of(lng)})" if text_of(lat) and text_of(lng) else ""
    return _lines(f"[location] {text_of(name)}".rstrip(), "  " + " ".join(p for p in (text_of(address), where) if p))



def _lines(*parts: str | None) -> str:
    return "\n".join(part for part in parts if part)


def _short(text: str, limit: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def names_of(options: Any) -> str:
    names = []
    for item in list_of(options):
        names.append(text_of(dict_of(item).get("name") or dict_of(item).get("optionName")) if isinstance(item, dict) else text_of(item))
    return ", ".join(name for name in names if name) or "nothing"
