"""vCard 3.0 text for contact cards (operation 23), built with vobject so escaping is handled for us."""

from __future__ import annotations


def build_vcard(
    name: str,
    phone: str,
    *,
    email: str | None = None,
    organization: str | None = None,
    title: str | None = None,
) -> str:
    """Return vCard 3.0 text with `\\n` line breaks, as the spec wants inside the JSON string.

    `phone` is digits with country code; the `waid` parameter lets the messaging app offer "Message".
    """
    import vobject

    card = vobject.vCard()
    given, _, family = name.strip().rpartition(" ")
    card.add("n").value = vobject.vcard.Name(family=family, given=given)
    card.add("fn").value = name.strip()
    if organization:
        card.add("org").value = [organization]
    if title:
        card.add("title").value = title
    tel = card.add("tel")
    tel.value = f"+{phone}"
    tel.type_param = "CELL"
    tel.params["WAID"] = [phone]
    if email:
        card.add("email").value = email
    return str(card.serialize()).replace("\r\n", "\n")  # vobject has no types
