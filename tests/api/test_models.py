"""Every rule of the spec, enforced by the request models before anything is sent.

A violation is a pydantic ValidationError; `field_errors` names the field and the rule.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from tui.api.models import (
    AddAdmin,
    AddParticipant,
    BlacklistEntry,
    Button,
    ChatAction,
    ContactCard,
    DeliveryWebhook,
    GroupCreate,
    GroupInfoRequest,
    GroupMetadataQuery,
    HmacKey,
    ModifyChat,
    PollOption,
    PrivacyGroupAdd,
    PrivacyLastSeen,
    ProductQuery,
    ProxyConfig,
    RedefineInvitationLink,
    SendButtonActions,
    SendLink,
    SendLocation,
    SendPoll,
    SendSticker,
    SendText,
    UpdateGroupName,
    WebhookUpdate,
    field_errors,
)
from tui.api.vcard import build_vcard


def problems(model: type, **fields: Any) -> dict[str, str]:
    with pytest.raises(ValidationError) as caught:
        model(**fields)
    return field_errors(caught.value)


# -- identifiers --------------------------------------------------------------------------------


@pytest.mark.parametrize("phone", ["5511999999999", "14155550123", "447911123456"])
def test_phone_digits_with_country_code(phone) -> None:
    assert SendText(phone=phone, message="hi").phone == phone


@pytest.mark.parametrize("phone", ["+5511999999999", "55 11 99999-9999", "(11)999999999", "999999", "55119999abc9", ""])
def test_phone_rejects_plus_spaces_punctuation_and_short_numbers(phone) -> None:
    assert "digits only" in problems(SendText, phone=phone, message="hi")["phone"]


@pytest.mark.parametrize("jid", ["120363019502650977@g.us", "5511999999999-1623281429@g.us"])
def test_send_operations_take_a_group_jid(jid) -> None:
    assert SendPoll(phone=jid, message="q", poll=[PollOption(name="a"), PollOption(name="b")]).phone == jid


@pytest.mark.parametrize("jid", ["abc-group", "abc@g.us", "120363019502650977@s.whatsapp.net"])
def test_send_operations_reject_other_group_forms(jid) -> None:
    assert "group JID like" in problems(SendText, phone=jid, message="hi")["phone"]


@pytest.mark.parametrize("group_id", ["120363019502650977-group", "5511999999999-1623281429-group"])
def test_group_endpoints_take_the_dash_group_form(group_id) -> None:
    assert UpdateGroupName(groupId=group_id, groupName="x").groupId == group_id
    assert GroupMetadataQuery(GROUP_PHONE_NUMBER=group_id).GROUP_PHONE_NUMBER == group_id


@pytest.mark.parametrize("group_id", ["120363019502650977@g.us", "120363019502650977", "abc-group"])
def test_group_endpoints_reject_other_forms(group_id) -> None:
    assert "group id like 120363019502650977-group" in problems(UpdateGroupName, groupId=group_id, groupName="x")["groupId"]
    assert "GROUP_PHONE_NUMBER" in problems(GroupMetadataQuery, GROUP_PHONE_NUMBER=group_id)
    assert "groupId" in problems(AddParticipant, groupId=group_id, phones=["5511999999999"])


def test_session_group_info_needs_the_at_g_us_form() -> None:
    assert GroupInfoRequest(GroupJID="120363019502650977@g.us").wire() == {"GroupJID": "120363019502650977@g.us"}
    assert "GroupJID" in problems(GroupInfoRequest, GroupJID="120363019502650977-group")


def test_community_id_is_digits() -> None:
    assert "communityId" in problems(AddAdmin, communityId="abc", phones=["5511999999999"])
    assert "communityId" in problems(RedefineInvitationLink, communityId="120363186053925765-group")
    assert "groupsPhones.0" in problems(RedefineInvitationLink, communityId="1", groupsPhones=["1@g.us"])


def test_participant_and_admin_phones_follow_the_phone_rule() -> None:
    assert "phones.1" in problems(AddParticipant, groupId="1-group", phones=["5511999999999", "+5511"])
    assert "phones" in problems(AddAdmin, communityId="1", phones=[])
    assert "participants.0" in problems(GroupCreate, name="Team", participants=["12"])
    assert "participants" in problems(GroupCreate, name="Team", participants=[])


def test_product_id_must_not_be_blank() -> None:
    assert problems(ProductQuery, PRODUCT_ID="  ") == {"PRODUCT_ID": "must not be empty"}


# -- send operations ----------------------------------------------------------------------------


def buttons(count: int) -> list[Button]:
    return [Button(id=str(n), text=f"B{n}") for n in range(count)]


def test_at_most_three_buttons() -> None:
    assert len(SendButtonActions(phone="5511999999999", message="m", buttons=buttons(3)).buttons) == 3
    assert "at most 3" in problems(SendButtonActions, phone="5511999999999", message="m", buttons=buttons(4))["buttons"]
    assert "buttons" in problems(SendButtonActions, phone="5511999999999", message="m", buttons=[])


def test_button_ids_are_distinct() -> None:
    twins = [Button(id="1", text="a"), Button(id="1", text="b")]
    assert "unique" in problems(SendButtonActions, phone="5511999999999", message="m", buttons=twins)["buttons"]


def test_unset_optionals_are_left_off_the_wire() -> None:
    request = SendButtonActions(phone="5511999999999", message="m", buttons=buttons(1))
    assert request.wire() == {"phone": "5511999999999", "message": "m", "buttons": [{"id": "0", "text": "B0"}]}


def test_poll_options_and_selectable_count() -> None:
    two = [PollOption(name="a"), PollOption(name="b")]
    poll = SendPoll(phone="5511999999999", message="q", poll=two)
    assert poll.wire()["selectableCount"] == 1  # the spec's default, sent explicitly
    assert SendPoll(phone="5511999999999", message="q", poll=two, selectableCount=2).selectableCount == 2
    assert "between 1 and the number of options (2)" in problems(
        SendPoll, phone="5511999999999", message="q", poll=two, selectableCount=3)["selectableCount"]
    assert "selectableCount" in problems(SendPoll, phone="5511999999999", message="q", poll=two, selectableCount=0)
    assert "poll" in problems(SendPoll, phone="5511999999999", message="q", poll=two[:1])
    assert "unique" in problems(SendPoll, phone="5511999999999", message="q", poll=[two[0], two[0]])["poll"]


@pytest.mark.parametrize(("lat", "lng", "field"), [(90.1, 0, "lat"), (-90.1, 0, "lat"), (0, 180.5, "lng"), (0, -181, "lng")])
def test_latitude_and_longitude_ranges(lat, lng, field) -> None:
    assert field in problems(SendLocation, phone="5511999999999", title="t", address="a", lat=lat, lng=lng)


def test_location_edges_and_delay() -> None:
    request = SendLocation(phone="5511999999999", title="t", address="a", lat=-90, lng=180, delayMessage=0)
    assert request.wire()["lat"] == -90 and request.wire()["delayMessage"] == 0
    assert "delayMessage" in problems(SendLocation, phone="5511999999999", title="t", address="a", lat=0, lng=0,
                                      delayMessage=-1)


def test_urls_must_be_http() -> None:
    assert "linkUrl" in problems(SendLink, phone="5511999999999", message="m", linkUrl="example.com")
    assert "sticker" in problems(SendSticker, phone="5511999999999", sticker="ftp://x/s.webp")


def test_required_text_must_not_be_blank() -> None:
    assert problems(SendText, phone="5511999999999", message="   ") == {"message": "must not be empty"}
    assert "message" in problems(SendText, phone="5511999999999")


def test_unknown_fields_are_refused() -> None:
    assert "extra" in problems(SendText, phone="5511999999999", message="m", extra=1)


# -- privacy ------------------------------------------------------------------------------------


@pytest.mark.parametrize("scope", ["ALL", "CONTACT", "NONE", "CONTACT_BLACKLIST"])
def test_privacy_scopes(scope) -> None:
    assert PrivacyGroupAdd(type=scope).wire() == {"type": scope}
    assert PrivacyLastSeen(visualizationType=scope).wire() == {"visualizationType": scope}


@pytest.mark.parametrize("scope", ["CONTACTS", "all", "EVERYONE"])
def test_privacy_rejects_other_scopes(scope) -> None:
    assert "type" in problems(PrivacyGroupAdd, type=scope)
    assert "visualizationType" in problems(PrivacyLastSeen, visualizationType=scope)


def test_blacklist_action_is_add_or_remove() -> None:
    assert BlacklistEntry(action="remove", phone="5511999999999").wire() == {"action": "remove", "phone": "5511999999999"}
    assert "action" in problems(BlacklistEntry, action="delete", phone="5511999999999")
    assert "phone" in problems(BlacklistEntry, action="add", phone="+5511999999999")


def test_blacklist_only_with_contact_blacklist() -> None:
    entry = {"action": "add", "phone": "5511999999999"}
    assert "CONTACT_BLACKLIST" in problems(PrivacyGroupAdd, type="ALL", contactsBlacklist=[entry])["contactsBlacklist"]
    assert "contactsBlacklist" in problems(PrivacyLastSeen, visualizationType="NONE", contactsBlacklist=[entry])
    ok = PrivacyLastSeen(visualizationType="CONTACT_BLACKLIST", contactsBlacklist=[entry])
    assert ok.wire() == {"visualizationType": "CONTACT_BLACKLIST", "contactsBlacklist": [entry]}


# -- chats, profile, webhook --------------------------------------------------------------------


def test_modify_chat_has_exactly_the_nine_actions() -> None:
    actions = ["read", "archive", "unarchive", "pin", "unpin", "mute", "unmute", "clear", "delete"]
    assert [action.value for action in ChatAction] == actions
    for action in actions:
        assert ModifyChat(phone="5511999999999", action=action).wire() == {"phone": "5511999999999", "action": action}
    for action in ("unread", "READ", "spam"):
        assert "action" in problems(ModifyChat, phone="5511999999999", action=action)


def test_delivery_webhook_url_or_empty_to_remove() -> None:
    assert DeliveryWebhook(value="").wire() == {"value": ""}
    assert DeliveryWebhook(value="https://hooks.example.com/d").value == "https://hooks.example.com/d"
    assert "value" in problems(DeliveryWebhook, value="hooks.example.com")


def test_webhook_update_is_partial_and_checks_event_kinds() -> None:
    assert WebhookUpdate().wire() == {}
    assert WebhookUpdate(events=["Message", "ChatPresence"]).wire() == {"events": ["Message", "ChatPresence"]}
    assert "unknown event kind(s): Messages" in problems(WebhookUpdate, events=["Messages"])["events"]
    assert "webhook" in problems(WebhookUpdate, webhook="not a url")


# -- HMAC and proxy -----------------------------------------------------------------------------


def test_hmac_key_at_least_32_characters() -> None:
    assert HmacKey(hmac_key="k" * 32).wire() == {"hmac_key": "k" * 32}
    assert "at least 32 characters" in problems(HmacKey, hmac_key="k" * 31)["hmac_key"]


@pytest.mark.parametrize(
    "url",
    ["socks5://user:pass@proxy.example.com:1080", "socks5://proxy.example.com:1080",
     "http://user:pass@10.0.0.1:3128", "http://10.0.0.1:3128"],
)
def test_the_four_proxy_url_forms(url) -> None:
    assert ProxyConfig(enable=True, proxy_url=url).wire() == {"enable": True, "proxy_url": url}


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        ("https://proxy.example.com:443", "scheme must be socks5:// or http://"),
        ("socks5h://proxy.example.com:1080", "scheme must be socks5:// or http://"),
        ("proxy.example.com:1080", "scheme must be socks5:// or http://"),
        ("http://proxy.example.com", "needs a port"),
        ("http://:3128", "needs a host"),
        ("http://user@proxy.example.com:3128", "credentials need both user and password"),
        ("http://proxy.example.com:3128/path", "must not have a path"),
        ("http://proxy.example.com:99999", "invalid port"),
    ],
)
def test_proxy_url_rules(url, rule) -> None:
    assert rule in problems(ProxyConfig, enable=True, proxy_url=url)["proxy_url"]


def test_proxy_url_required_when_enabled_and_empty_when_disabled() -> None:
    assert "is required when enable is true" in problems(ProxyConfig, enable=True)["proxy_url"]
    assert ProxyConfig(enable=False).wire() == {"enable": False, "proxy_url": ""}
    assert ProxyConfig(enable=False, proxy_url="http://h:1").wire() == {"enable": False, "proxy_url": ""}


# -- contact card and vCard ---------------------------------------------------------------------

CARD = "BEGIN:VCARD\nVERSION:3.0\nFN:Ana\nEND:VCARD"


def test_contact_card_required_fields() -> None:
    missing = problems(ContactCard)
    assert {"Phone", "Name", "Vcard"} <= set(missing)
    assert "Id" not in missing and "ContextInfo" not in missing
    assert ContactCard(Phone="5511999999999", Name="Ana", Vcard=CARD).wire() == {
        "Phone": "5511999999999", "Name": "Ana", "Vcard": CARD}


def test_contact_card_vcard_must_be_a_vcard() -> None:
    assert "BEGIN:VCARD" in problems(ContactCard, Phone="5511999999999", Name="Ana", Vcard="Ana 5511")["Vcard"]
    assert "Phone" in problems(ContactCard, Phone="+55 11", Name="Ana", Vcard=CARD)


def test_build_vcard_layout() -> None:
    card = build_vcard("Ana Maria Silva", "5511988887777", email="ana@example.com", organization="Acme", title="CEO")
    lines = card.split("\n")
    assert "\r" not in card  # line breaks are \n inside the JSON string
    assert lines[0] == "BEGIN:VCARD" and lines[1] == "VERSION:3.0" and card.rstrip("\n").endswith("END:VCARD")
    assert "N:Silva;Ana Maria;;;" in lines
    assert "FN:Ana Maria Silva" in lines
    assert "ORG:Acme" in lines and "TITLE:CEO" in lines and "EMAIL:ana@example.com" in lines
    assert "TEL;TYPE=CELL;WAID=5511988887777:+5511988887777" in lines
    assert ContactCard(Phone="5511999999999", Name="Ana Maria Silva", Vcard=card).Vcard == card


def test_build_vcard_leaves_out_unset_optionals() -> None:
    card = build_vcard("Zé", "5511988887777")
    assert not any(line.startswith(("ORG", "TITLE", "EMAIL")) for line in card.split("\n"))
    assert "FN:Zé" in card.split("\n")


def test_build_vcard_escapes_text_values() -> None:
    card = build_vcard("Silva, Ana", "5511988887777", organization="Acme, Inc; Brasil", title="Chief; Boss")
    lines = card.split("\n")
    assert "FN:Silva\\, Ana" in lines
    assert "ORG:Acme\\, Inc\\; Brasil" in lines
    assert "TITLE:Chief\\; Boss" in lines


# WhatsApp's limit on a message's text (docs/gateways/whatsapp-limits.md); neither gateway documents its own
WHATSAPP_TEXT_LIMIT = 65_536
MESSAGE_TEXT_FIELDS = ("message", "caption", "Caption")


def test_a_message_of_exactly_the_limit_is_taken_and_one_more_character_is_not() -> None:
    assert len(SendText(phone="5511999999999", message="x" * WHATSAPP_TEXT_LIMIT).message) == WHATSAPP_TEXT_LIMIT
    assert problems(SendText, phone="5511999999999", message="x" * 100_000) == {
        "message": "is 100,000 characters long; WhatsApp takes at most 65,536 in one message"}


def test_every_send_refuses_text_longer_than_whatsapp_takes() -> None:
    """One rule in the request models, so the reply line, the send form, `send` and `call` all meet it: every
    operation that sends, in every field that carries the message's text or a caption."""
    from tui.api.operations import OPERATIONS

    checked = []
    for op in OPERATIONS.values():
        if op.sends is None:
            continue
        for name in MESSAGE_TEXT_FIELDS:
            if name not in op.request.model_fields:
                continue
            with pytest.raises(ValidationError) as caught:
                op.request.model_validate({name: "y" * (WHATSAPP_TEXT_LIMIT + 1)})
            assert "WhatsApp takes at most 65,536" in field_errors(caught.value).get(name, ""), (op.id, name)
            checked.append((op.id.value, name))
    assert ("send-text", "message") in checked and ("chat-send-document", "Caption") in checked
    assert len(checked) >= 10
