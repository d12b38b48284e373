"""Replays of what the real gateways send, written from the gateway notes (docs/gateways/wuzapi.md §3-4,
docs/gateways/zapi.md §5).

WuzAPI: the JSON text is Go's `json.Marshal` of a map (compact, keys sorted); form mode is `url.Values.Encode()`
of `instanceName`, `jsonData`, `userID` in that order; both signed over the exact body. Z-API: unsigned JSON.
"""

from __future__ import annotations

import asyncio
from urllib.parse import quote_plus

import pytest

from tests.webhooks.conftest import KEY
from tui.api.signing import SIGNATURE_HEADER, Verdict, sign

INFO = (
    '"Info":{"Chat":"5491155553934@s.whatsapp.net","ID":"3EB0C1","IsFromMe":false,"IsGroup":false,'
    '"PushName":"John","Sender":"5491155553934@s.whatsapp.net","Timestamp":"2026-05-19T10:40:13-03:00","Type":"text"}'
)


def wuz_message(message: str, extra: str = "") -> str:
    return '{"event":{' + INFO + ',"Message":' + message + '},' + extra + '"instanceName":"acme","type":"Message","userID":"0a1b2c3d4e5f60718293a4b5c6d7e8f9"}'


# (name, jsonData as Go writes it, kind, summary)
WUZAPI = [
    ("reaction", wuz_message('{"messageContextInfo":{"messageSecret":"c2VjcmV0"},"reactionMessage":{"key":{"ID":"3EB0AA","fromMe":true,"remoteJID":"5491155553934@s.whatsapp.net"},"senderTimestampMS":1779198013000,"text":"👍"}}'),
     "Message", "Message from 5491155553934: [reaction] 👍 to 3EB0AA"),
    ("poll created", wuz_message('{"messageContextInfo":{"messageSecret":"c2VjcmV0"},"pollCreationMessageV3":{"name":"Lunch?","options":[{"optionName":"Pizza"},{"optionName":"Sushi"}],"selectableOptionsCount":1}}'),
     "Message", "Message from 5491155553934: [poll] Lunch? (Pizza, Sushi)"),
    ("poll vote", wuz_message('{"messageContextInfo":{"messageSecret":"c2VjcmV0"},"pollUpdateMessage":{"pollCreationMessageKey":{"ID":"3EB0PP","fromMe":true,"remoteJID":"5491155553934@s.whatsapp.net"},"vote":{"encIV":"aXY=","encPayload":"cGF5"}}}',
                            '"pollVote":{"pollCreationMsgID":"3EB0PP","selectedHashesB64":["aGFzaA=="],"selectedOptions":["Sushi"]},'),
     "Message", "Message from 5491155553934: [poll vote] Sushi"),
    ("button reply", wuz_message('{"buttonsResponseMessage":{"contextInfo":{"stanzaID":"3EB0BB"},"selectedButtonID":"yes-1","selectedDisplayText":"Yes please","type":1},"messageContextInfo":{}}'),
     "Message", "Message from 5491155553934: [button reply] Yes please"),
    ("list reply", wuz_message('{"listResponseMessage":{"contextInfo":{"stanzaID":"3EB0LL"},"listType":1,"singleSelectReply":{"selectedRowID":"row-2"},"title":"Large"},"messageContextInfo":{}}'),
     "Message", "Message from 5491155553934: [list reply] Large"),
    ("image", wuz_message('{"imageMessage":{"caption":"the view","mimetype":"image/jpeg","fileLength":1048576}}', '"base64":"' + "QUFB" * 400 + '","fileName":"3EB0C1.jpg","mimeType":"image/jpeg",'),
     "Message", "Message from 5491155553934: [image] the view"),
    ("video", wuz_message('{"messageContextInfo":{},"videoMessage":{"caption":"","mimetype":"video/mp4","seconds":12}}'),
     "Message", "Message from 5491155553934: [video]"),
    ("audio", wuz_message('{"audioMessage":{"PTT":true,"mimetype":"audio/ogg; codecs=opus","seconds":7}}'),
     "Message", "Message from 5491155553934: [audio] 7 s"),
    ("document", wuz_message('{"documentMessage":{"fileName":"report.pdf","mimetype":"application/pdf","title":"report"}}'),
     "Message", "Message from 5491155553934: [document] report.pdf"),
    ("call offer", '{"event":{"CallCreator":"5491155553934@s.whatsapp.net","CallID":"CALL1","From":"5491155553934@s.whatsapp.net","RemotePlatform":"android","Timestamp":"2026-05-19T10:40:13-03:00"},"instanceName":"acme","type":"CallOffer","userID":"0a1b2c3d4e5f60718293a4b5c6d7e8f9"}',
     "CallOffer", "CallOffer from 5491155553934"),
    ("group info", '{"event":{"Announce":null,"Delete":null,"JID":"120363019502650977@g.us","Join":["5491100000001@s.whatsapp.net"],"Leave":null,"Locked":null,"Name":{"Name":"Team","NameSetAt":"2026-05-19T10:40:13-03:00","NameSetBy":"5491155553934@s.whatsapp.net"},"Notify":"","Sender":"5491155553934@s.whatsapp.net","Timestamp":"2026-05-19T10:40:13-03:00","Topic":null},"instanceName":"acme","type":"GroupInfo","userID":"0a1b2c3d4e5f60718293a4b5c6d7e8f9"}',
     "GroupInfo", "GroupInfo 120363019502650977@g.us: name → Team; joined: 5491100000001 (by 5491155553934)"),
    # whatsmeow events.PairSuccess{ID, LID, BusinessName, Platform}, sent by wuzapi's `case *events.PairSuccess`
    ("pair success", '{"event":{"ID":"5491155553934:12@s.whatsapp.net","LID":"81896604192873:12@lid","BusinessName":"Acme Store","Platform":"smba"},"instanceName":"acme","type":"PairSuccess","userID":"0a1b2c3d4e5f60718293a4b5c6d7e8f9"}',
     "PairSuccess", "PairSuccess 5491155553934 (Acme Store, smba)"),
    # whatsmeow events.UndecryptableMessage{Info, IsUnavailable, UnavailableType, DecryptFailMode}
    ("undecryptable", '{"event":{"Info":{"Chat":"120363019502650977@g.us","Sender":"5491155553934@s.whatsapp.net","IsFromMe":false,"IsGroup":true,"AddressingMode":"","SenderAlt":"","RecipientAlt":"","BroadcastListOwner":"","BroadcastRecipients":null,"ID":"3EB0UNDEC","ServerID":0,"Type":"text","PushName":"John","Timestamp":"2026-05-19T10:40:13-03:00","Category":"","Multicast":false,"MediaType":"","Edit":"","MsgBotInfo":{"EditType":"","EditTargetID":"","EditSenderTimestampMS":"0001-01-01T00:00:00Z"},"MsgMetaInfo":{"TargetID":"","TargetSender":"","TargetChat":"","DeprecatedLIDSession":null,"ThreadMessageID":"","ThreadMessageSenderJID":""},"VerifiedName":null,"DeviceSentMeta":null},"IsUnavailable":false,"UnavailableType":"","DecryptFailMode":""},"instanceName":"acme","type":"UndecryptableMessage","userID":"0a1b2c3d4e5f60718293a4b5c6d7e8f9"}',
     "UndecryptableMessage", "UndecryptableMessage from 5491155553934 in 120363019502650977@g.us: message 3EB0UNDEC could not be decrypted (waiting for it)"),
    ("connected", '{"event":{},"instanceName":"acme","type":"Connected","userID":"0a1b2c3d4e5f60718293a4b5c6d7e8f9"}',
     "Connected", "Connected"),
    ("disconnected", '{"event":{},"instanceName":"acme","type":"Disconnected","userID":"0a1b2c3d4e5f60718293a4b5c6d7e8f9"}',
     "Disconnected", "Disconnected"),
    ("history sync", '{"event":{"Data":{"conversations":[{"ID":"5491155553934@s.whatsapp.net","messages":[{"message":{}},{"message":{}}]},{"ID":"120363019502650977@g.us","messages":[{"message":{}}]}],"syncType":2}},"instanceName":"acme","type":"HistorySync","userID":"0a1b2c3d4e5f60718293a4b5c6d7e8f9"}',
     "HistorySync", "HistorySync: 2 conversations, 3 messages"),
]

ZAPI_ENVELOPE = (
    '"type":"ReceivedCallback","instanceId":"3C01","messageId":"3EB0Z1","phone":"5544999999999","fromMe":false,'
    '"momment":1632228638000,"status":"RECEIVED","chatName":"Ana","senderName":"Ana","isGroup":false,'
)
ZAPI = [
    ("text", '{' + ZAPI_ENVELOPE + '"text":{"message":"oi"}}', "ReceivedCallback", "ReceivedCallback from Ana (5544999999999): oi"),
    ("reaction", '{' + ZAPI_ENVELOPE + '"reaction":{"value":"❤️","time":1632228638000,"reactionBy":"5544999999999","referencedMessage":{"messageId":"3EB0ORIG","fromMe":true,"phone":"5544999999999","participant":null}}}',
     "ReceivedCallback", "ReceivedCallback from Ana (5544999999999): [reaction] ❤️ to 3EB0ORIG"),
    ("poll", '{' + ZAPI_ENVELOPE + '"poll":{"question":"Lunch?","pollMaxOptions":1,"options":[{"name":"Pizza"},{"name":"Sushi"}]}}',
     "ReceivedCallback", "ReceivedCallback from Ana (5544999999999): [poll] Lunch? (Pizza, Sushi)"),
    ("poll vote", '{' + ZAPI_ENVELOPE + '"pollVote":{"pollMessageId":"3EB0POLL","options":[{"name":"Sushi"}]}}',
     "ReceivedCallback", "ReceivedCallback from Ana (5544999999999): [poll vote] Sushi"),
    ("button reply", '{' + ZAPI_ENVELOPE + '"referenceMessageId":"3EB0BTN","buttonsResponseMessage":{"buttonId":"1","message":"Yes please"}}',
     "ReceivedCallback", "ReceivedCallback from Ana (5544999999999): [button reply] Yes please"),
    ("list reply", '{' + ZAPI_ENVELOPE + '"referenceMessageId":"3EB0LST","listResponseMessage":{"message":"Pick a size","title":"Large","selectedRowId":"2"}}',
     "ReceivedCallback", "ReceivedCallback from Ana (5544999999999): [list reply] Large"),
    ("image", '{' + ZAPI_ENVELOPE + '"image":{"mimeType":"image/jpeg","imageUrl":"https://storage.z-api.io/x.jpg","caption":"the view","width":600,"height":400}}',
     "ReceivedCallback", "ReceivedCallback from Ana (5544999999999): [image] the view"),
    ("document", '{' + ZAPI_ENVELOPE + '"document":{"documentUrl":"https://storage.z-api.io/r.pdf","mimeType":"application/pdf","title":"report","pageCount":3,"fileName":"report.pdf"}}',
     "ReceivedCallback", "ReceivedCallback from Ana (5544999999999): [document] report.pdf"),
    ("audio", '{' + ZAPI_ENVELOPE + '"audio":{"ptt":true,"seconds":7,"audioUrl":"https://storage.z-api.io/a.ogg","mimeType":"audio/ogg; codecs=opus"}}',
     "ReceivedCallback", "ReceivedCallback from Ana (5544999999999): [audio] 7 s"),
    ("call", '{"type":"ReceivedCallback","instanceId":"3C01","phone":"5544999999999","fromMe":false,"momment":1632228638000,"notification":"CALL_MISSED_VOICE","notificationParameters":[]}',
     "ReceivedCallback", "ReceivedCallback CALL_MISSED_VOICE from 5544999999999"),
    ("delivery", '{"type":"DeliveryCallback","instanceId":"3C01","phone":"5544999999999","zaapId":"Z1","messageId":"3EB0SENT","momment":1777494009341}',
     "Delivery", "Delivery to 5544999999999 sent"),
    ("delivery failed", '{"type":"DeliveryCallback","instanceId":"3C01","phone":"5544999999999","zaapId":"Z1","messageId":"3EB0SENT","momment":1777494009341,"error":"The message was not sent due to a likely shadow ban","errorCode":"SHADOW_BAN"}',
     "Delivery", "Delivery to 5544999999999 failed: The message was not sent due to a likely shadow ban (SHADOW_BAN)"),
    ("status", '{"type":"MessageStatusCallback","instanceId":"3C01","status":"READ","ids":["3EB0SENT","3EB0SENT2"],"momment":1632234645000,"phoneDevice":0,"phone":"5544999999999","isGroup":false}',
     "MessageStatusCallback", "MessageStatusCallback READ 5544999999999 (2 messages)"),
    ("presence", '{"type":"PresenceChatCallback","instanceId":"3C01","phone":"5544999999999","status":"COMPOSING","lastSeen":null}',
     "PresenceChatCallback", "PresenceChatCallback 5544999999999 COMPOSING"),
    ("connected", '{"type":"ConnectedCallback","instanceId":"3C01","connected":true,"phone":"5544999999999","momment":0}',
     "ConnectedCallback", "ConnectedCallback 5544999999999"),
    ("disconnected", '{"type":"DisconnectedCallback","instanceId":"3C01","disconnected":true,"error":"Device has been disconnected","momment":1580163342}',
     "DisconnectedCallback", "DisconnectedCallback (Device has been disconnected)"),
]


def wuz_form(json_data: str) -> bytes:
    """Go's url.Values.Encode(): keys sorted, QueryEscape (space as '+') on each value."""
    return (
        "instanceName=acme&jsonData=" + quote_plus(json_data) + "&userID=0a1b2c3d4e5f60718293a4b5c6d7e8f9"
    ).encode()


async def post(http, url: str, body: bytes, headers: dict[str, str]):
    async with http.post(url, data=body, headers=headers) as response:
        return response.status, await response.json()


@pytest.mark.parametrize("mode", ["form", "json"])
@pytest.mark.parametrize(("name", "json_data", "kind", "summary"), WUZAPI, ids=[case[0] for case in WUZAPI])
async def test_wuzapi_deliveries(store, start_listener, http, mode, name, json_data, kind, summary):
    listener = await start_listener(hmac_key=KEY)
    if mode == "form":
        body, content_type = wuz_form(json_data), "application/x-www-form-urlencoded"
    else:
        body, content_type = json_data.encode(), "application/json"
    headers = {"Content-Type": content_type, "X-Hmac-Signature": sign(KEY, body)}
    status, answer = await post(http, listener.url + "/session", body, headers)
    assert status == 200, answer
    event = store.get(answer["id"])
    assert (event.kind, event.summary, event.verdict, event.authentic) == (kind, summary, Verdict.VALID, True)
    assert event.body == body
    assert "messageContextInfo" not in event.summary
    if name == "undecryptable":  # its id links it: the event detail lists it, and the inbox finds the message by it
        assert event.message_ids == ("3EB0UNDEC",)


async def test_wuzapi_unsigned_on_the_session_path_is_refused(store, start_listener, http):
    listener = await start_listener(hmac_key=KEY)
    body = wuz_form(WUZAPI[0][1])
    status, answer = await post(http, listener.url + "/session", body, {"Content-Type": "application/x-www-form-urlencoded"})
    assert (status, answer["error"]) == (401, "signature missing")
    bad = {"Content-Type": "application/x-www-form-urlencoded", SIGNATURE_HEADER: sign(KEY, body + b"x")}
    status, answer = await post(http, listener.url + "/session", body, bad)
    assert (status, answer["error"]) == (401, "signature invalid")


@pytest.mark.parametrize(("name", "body", "kind", "summary"), ZAPI, ids=[case[0] for case in ZAPI])
async def test_zapi_callbacks_unsigned_are_accepted_and_never_authentic(store, start_listener, http, name, body, kind, summary):
    listener = await start_listener(hmac_key=KEY)
    status, answer = await post(http, listener.url + "/delivery", body.encode(), {"Content-Type": "application/json"})
    assert status == 200, answer
    event = store.get(answer["id"])
    assert (event.kind, event.summary, event.verdict, event.rejected) == (kind, summary, Verdict.UNSIGNED, False)
    assert not event.authentic


@pytest.mark.parametrize("path", ["/delivery/received", "/delivery?instance=3C01"])
async def test_paths_below_delivery_are_the_instance_family(store, start_listener, http, path):
    listener = await start_listener(hmac_key=KEY)
    status, _answer = await post(http, listener.url + path, ZAPI[0][1].encode(), {"Content-Type": "application/json"})
    assert status == 200


@pytest.mark.parametrize("path", ["/deliveryx", "/delivery/../session", "/hook", "/"])
async def test_other_paths_stay_strict(store, start_listener, http, path):
    listener = await start_listener(hmac_key=KEY)
    status, _answer = await post(http, listener.url + path, ZAPI[0][1].encode(), {"Content-Type": "application/json"})
    assert status == 401


async def test_require_signatures_makes_delivery_strict(store, start_listener, http):
    listener = await start_listener(hmac_key=KEY, require_signatures=True)
    body = ZAPI[0][1].encode()
    status, answer = await post(http, listener.url + "/delivery", body, {"Content-Type": "application/json"})
    assert (status, answer["error"]) == (401, "signature missing")
    status, _ = await post(http, listener.url + "/delivery", body, {"Content-Type": "application/json", SIGNATURE_HEADER: sign(KEY, body)})
    assert status == 200


async def test_a_bad_signature_on_delivery_is_still_refused(store, start_listener, http):
    listener = await start_listener(hmac_key=KEY)
    body = ZAPI[0][1].encode()
    status, _ = await post(http, listener.url + "/delivery", body, {"Content-Type": "application/json", SIGNATURE_HEADER: "00" * 32})
    assert status == 401


async def raw_post(port: int, target: str, body: bytes) -> int:
    """The status of a POST whose target goes on the wire exactly as written (a client library would normalise
    the dot segments away)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(f"POST {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        status_line = await reader.readline()
        return int(status_line.split()[1])
    finally:
        writer.close()


@pytest.mark.parametrize("target", [
    "/delivery/../session", "/delivery/%2e%2e/session", "/delivery/%2E%2e/session", "/delivery/.%2e/session",
    "/delivery/%252e%252e/session", "/delivery/%2525252525252e%2525252525252e/session", "/delivery/%2e/x", "/a/acme/delivery/%2e%2e/session",
])
async def test_dot_segments_below_delivery_are_refused_encoded_or_not(store, start_listener, target):
    # A decoded `..` climbs out of /delivery: neither spelling may borrow Z-API's leniency for unsigned calls.
    listener = await start_listener(hmac_key=KEY, accounts={"acme": KEY})
    assert await raw_post(listener.port, target, ZAPI[0][1].encode()) == 401
