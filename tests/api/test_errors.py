"""Every error status of the spec (§7) and every transport fault, each with its typed error and human message."""

from __future__ import annotations

import asyncio
import email.utils
import socket
from datetime import UTC, datetime, timedelta

import pytest

from tests.api.conftest import CLIENT_TOKEN, INSTANCE_TOKEN
from tui.api.client import GatewayHttp, InstanceCredentials, RequestLog
from tui.gateways.clients import InstanceClient
from tui.api.errors import (
    BadRequest,
    Conflict,
    ConnectionLost,
    ConnectionRefused,
    GatewayError,
    GatewayTimeout,
    InvalidBaseUrl,
    MalformedResponse,
    NotFound,
    RateLimited,
    ServerError,
    TransportFault,
    Unauthorized,
    UnexpectedStatus,
)
from tui.api.models import GroupInfoRequest, ModifyChat, SendText, UpdateGroupName

TEXT = SendText(phone="5511999999999", message="hi")
CHAT = ModifyChat(phone="5511999999999", action="read")


@pytest.mark.parametrize(
    ("status", "reply", "error_type", "message"),
    [
        # Z-API's usual shape {"error": text}
        (400, {"error": "Invalid phone"}, BadRequest, "400 Bad Request: Invalid phone"),
        (401, {"error": "your client-token is not configured"}, Unauthorized,
         "401 Unauthorized: your client-token is not configured"),
        # Z-API's route-not-found pair {"error": code, "message": text}
        (404, {"error": "NOT_FOUND", "message": "Unable to find matching target resource method"}, NotFound,
         "404 Not Found: NOT_FOUND — Unable to find matching target resource method"),
        (409, {"message": "instance is not connected"}, Conflict, "409 Conflict: instance is not connected"),
        (500, {"error": "failed to save"}, ServerError, "500 Internal Server Error: failed to save"),
        # bare JSON string (Z-API partner proxy check)
        (400, "Proxy is not reachable", BadRequest, "400 Bad Request: Proxy is not reachable"),
        # an error body with nothing readable in it
        (409, {}, Conflict, "409 Conflict"),
        (418, {"error": "teapot"}, UnexpectedStatus, "418 I'm a Teapot: teapot"),
    ],
)
async def test_json_error_bodies(status, reply, error_type, message, instance, gateway) -> None:
    gateway.reply("POST", "/modify-chat", status, json_body=reply)
    with pytest.raises(error_type) as caught:
        await instance.modify_chat(CHAT)
    assert str(caught.value) == message
    assert caught.value.status == status


@pytest.mark.parametrize(
    ("status", "text", "error_type", "message"),
    [
        (404, "404 page not found\n", NotFound, "404 Not Found: 404 page not found"),  # WuzAPI wrong method
        (500, "java.lang.NullPointerException", ServerError, "500 Internal Server Error: java.lang.NullPointerException"),
        (502, "<html><head><title>502 Bad Gateway</title></head><body><h1>nginx</h1></body></html>", UnexpectedStatus,
         "502 Bad Gateway: 502 Bad Gateway"),
        (503, "<html><body><p>Down for   maintenance</p></body></html>", UnexpectedStatus,
         "503 Service Unavailable: Down for maintenance"),
        (415, "", UnexpectedStatus, "415 Unsupported Media Type"),
    ],
)
async def test_plain_text_and_html_error_bodies(status, text, error_type, message, instance, gateway) -> None:
    gateway.reply("POST", "/modify-chat", status, text=text)
    with pytest.raises(error_type) as caught:
        await instance.modify_chat(CHAT)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("status", "reply", "error_type", "message"),
    [
        (401, {"code": 401, "error": "unauthorized", "success": False}, Unauthorized, "401 Unauthorized: unauthorized"),
        (400, {"code": 400, "error": "missing groupJID parameter", "success": False}, BadRequest,
         "400 Bad Request: missing groupJID parameter"),
        # spec.yml's documented 400 carries the text under `data`
        (400, {"code": 400, "data": "HMAC key must be at least 32 characters long", "success": False}, BadRequest,
         "400 Bad Request: HMAC key must be at least 32 characters long"),
        (500, {"code": 500, "error": "no session", "success": False}, ServerError,
         "500 Internal Server Error: no session"),
        # WuzAPI's plain-string bug: 500 with success:true and no message. The status wins.
        (500, {"code": 500, "success": True}, ServerError,
         "500 Internal Server Error: the gateway gave no reason (its body claimed success)"),
        (500, {"error": "failed to get HMAC configuration"}, ServerError,
         "500 Internal Server Error: failed to get HMAC configuration"),
    ],
)
async def test_session_error_envelopes(status, reply, error_type, message, session, gateway) -> None:
    gateway.reply("GET", "/group/info", status, json_body=reply)
    with pytest.raises(error_type) as caught:
        await session.group_info(GroupInfoRequest(GroupJID="120363019502650977@g.us"))
    assert str(caught.value) == message
    assert caught.value.status == status


async def test_error_keeps_the_raw_body_for_the_details_view(instance, gateway) -> None:
    gateway.reply("POST", "/modify-chat", 400, json_body={"error": "Invalid phone"})
    with pytest.raises(BadRequest) as caught:
        await instance.modify_chat(CHAT)
    assert caught.value.body == '{"error": "Invalid phone"}'


# -- 2xx answers that are not results ---------------------------------------------------------------


async def test_200_with_route_not_found_body_is_not_found_keeping_status_200(instance, gateway) -> None:
    gateway.reply("POST", "/modify-chat", 200,
                  json_body={"error": "NOT_FOUND", "message": "Unable to find matching target resource method"})
    with pytest.raises(NotFound) as caught:
        await instance.modify_chat(CHAT)
    assert caught.value.status == 200
    assert str(caught.value) == (
        "200 OK for modify-chat, but the gateway reported an error: "
        "NOT_FOUND — Unable to find matching target resource method"
    )


async def test_200_with_only_an_error_text_is_unexpected_status(instance, gateway) -> None:
    reason = "To continue sending a message, you must subscribe to this instance again"
    gateway.reply("POST", "/send-text", 200, json_body={"error": reason})
    with pytest.raises(UnexpectedStatus) as caught:
        await instance.send_text(TEXT)
    assert caught.value.status == 200
    assert reason in str(caught.value)


async def test_200_envelope_with_success_false_is_an_error(session, gateway) -> None:
    gateway.reply("GET", "/group/info", 200, json_body={"code": 200, "error": "not a participant", "success": False})
    with pytest.raises(UnexpectedStatus, match="not a participant"):
        await session.group_info(GroupInfoRequest(GroupJID="120363019502650977@g.us"))


async def test_status_error_field_is_a_status_text_not_an_error(instance, gateway) -> None:
    gateway.reply("GET", "/status", json_body={"connected": False, "error": "You are not connected"})
    status = await instance.status()
    assert status.connected is False and status.error == "You are not connected"


async def test_200_that_is_not_json_is_malformed_keeping_the_status(instance, gateway) -> None:
    gateway.reply("POST", "/send-text", 200, text="not json")
    with pytest.raises(MalformedResponse) as caught:
        await instance.send_text(TEXT)
    assert caught.value.status == 200
    assert str(caught.value) == "200 OK for send-text, but the body is not JSON: 'not json'"


async def test_202_without_any_message_id_is_malformed(instance, gateway) -> None:
    gateway.reply("POST", "/send-text", 202, json_body={"queued": True})
    with pytest.raises(MalformedResponse) as caught:
        await instance.send_text(TEXT)
    assert caught.value.status == 202
    assert "needs messageId, id or zaapId" in str(caught.value)


async def test_200_with_the_wrong_json_kind_is_malformed(instance, gateway) -> None:
    gateway.reply("GET", "/products/p1", 200, json_body=[1, 2])
    with pytest.raises(MalformedResponse, match="is a JSON array where an object was expected"):
        await instance.product("p1")


async def test_200_with_missing_required_result_field_names_it(instance, gateway) -> None:
    gateway.reply("GET", "/products/p1", 200, json_body={"productId": "p1", "name": "Mouse"})
    with pytest.raises(MalformedResponse, match="price: is required"):
        await instance.product("p1")


async def test_empty_2xx_body_is_success_for_a_boolean_operation(instance, gateway) -> None:
    gateway.reply("PUT", "/update-group-name", 200, text="")
    gateway.reply("POST", "/update-group-name", 204, text="")
    result = await instance.update_group_name(UpdateGroupName(groupId="1-group", groupName="x"))
    assert result.ok


@pytest.mark.parametrize(
    ("reply", "text"),
    [({"hmac_key": ""}, None), ("", None), (None, ""), ({"code": 200, "data": {"hmac_key": ""}, "success": True}, None)],
    ids=["empty-key", "bare-empty-string", "empty-body", "enveloped"],
)
async def test_hmac_status_without_a_key(reply, text, session, gateway) -> None:
    if text is None:
        gateway.reply("GET", "/session/hmac/config", json_body=reply)
    else:
        gateway.reply("GET", "/session/hmac/config", text=text)
    assert (await session.hmac_status()).configured is False


# -- rate limiting ----------------------------------------------------------------------------------


async def test_send_answered_429_raises_at_once_and_is_never_retried(instance, gateway) -> None:
    gateway.reply("POST", "/send-text", 429, json_body={"error": "slow down"}, headers={"Retry-After": "7"})
    with pytest.raises(RateLimited) as caught:
        await instance.send_text(TEXT)
    assert caught.value.retry_after == 7
    assert str(caught.value) == "429 Too Many Requests: slow down (retry after 7 s)"
    assert len(gateway.requests) == 1


async def test_other_writes_answered_429_are_not_retried_either(instance, gateway) -> None:
    gateway.reply("POST", "/modify-chat", 429, json_body={"error": "slow down"})
    with pytest.raises(RateLimited) as caught:
        await instance.modify_chat(CHAT)
    assert caught.value.retry_after is None
    assert len(gateway.requests) == 1


async def test_read_answered_429_is_retried_and_then_succeeds(instance, gateway) -> None:
    gateway.reply("GET", "/status", 429, json_body={"error": "slow"}, headers={"Retry-After": "0"})
    gateway.reply("GET", "/status", 200, json_body={"connected": True})
    assert (await instance.status()).connected is True
    assert len(gateway.requests) == 2


async def test_read_retries_are_bounded_and_waits_are_capped(gateway) -> None:
    waits: list[float] = []

    async def record_sleep(seconds: float) -> None:
        waits.append(seconds)

    gateway.reply("GET", "/status", 429, json_body={"error": "slow"}, headers={"Retry-After": "120"})
    async with GatewayHttp(sleep=record_sleep, max_retry_wait=3.0) as http:
        client = InstanceClient(http, InstanceCredentials(gateway.url, "i", INSTANCE_TOKEN, CLIENT_TOKEN))
        with pytest.raises(RateLimited) as caught:
            await client.status()
    assert len(gateway.requests) == 3  # the call and two retries
    assert waits == [3.0, 3.0]
    assert caught.value.retry_after == 120


async def test_retry_after_as_http_date(gateway) -> None:
    waits: list[float] = []

    async def record_sleep(seconds: float) -> None:
        waits.append(seconds)

    later = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=60), usegmt=True)
    gateway.reply("GET", "/status", 429, headers={"Retry-After": later})
    gateway.reply("GET", "/status", 200, json_body={"connected": True})
    async with GatewayHttp(sleep=record_sleep) as http:
        client = InstanceClient(http, InstanceCredentials(gateway.url, "i", INSTANCE_TOKEN, CLIENT_TOKEN))
        await client.status()
    assert waits == [5.0]  # 60 s asked, capped at the default 5 s


# -- transport faults -------------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_nothing_listening_is_connection_refused(request_log) -> None:
    port = _closed_port()
    async with GatewayHttp(on_exchange=request_log.append) as http:
        client = InstanceClient(http, InstanceCredentials(f"http://127.0.0.1:{port}", "i", INSTANCE_TOKEN, CLIENT_TOKEN))
        with pytest.raises(ConnectionRefused) as caught:
            await client.send_text(TEXT)
    assert str(caught.value).startswith(f"Could not connect to http://127.0.0.1:{port} for send-text: ")
    assert caught.value.status is None
    assert isinstance(caught.value, TransportFault)
    (exchange,) = list(request_log)
    assert exchange.status is None and exchange.error == str(caught.value)


async def test_a_server_slower_than_the_timeout_is_gateway_timeout(gateway, request_log) -> None:
    gateway.reply("GET", "/status", json_body={"connected": True}, delay=30)
    async with GatewayHttp(timeout=0.2, on_exchange=request_log.append) as http:
        client = InstanceClient(http, InstanceCredentials(gateway.url, "i", INSTANCE_TOKEN, CLIENT_TOKEN))
        with pytest.raises(GatewayTimeout) as caught:
            await client.status()
    assert str(caught.value) == "No answer within 0.2 s for status (GET " + gateway.url + "/instances/i/token/{instanceToken}/status)"
    assert len(gateway.requests) == 1  # a timeout is not a 429: never retried
    assert next(iter(request_log)).status is None


async def test_a_connection_closed_before_answering_is_connection_lost() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with GatewayHttp() as http:
            client = InstanceClient(http, InstanceCredentials(f"http://127.0.0.1:{port}", "i", INSTANCE_TOKEN, CLIENT_TOKEN))
            with pytest.raises(ConnectionLost, match=f"The connection to http://127.0.0.1:{port} broke during status"):
                await client.status()
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("base_url", ["", "localhost:8080", "ftp://example.com"])
async def test_a_base_url_without_http_is_invalid_base_url(base_url) -> None:
    async with GatewayHttp() as http:
        client = InstanceClient(http, InstanceCredentials(base_url, "i", INSTANCE_TOKEN, CLIENT_TOKEN))
        with pytest.raises(InvalidBaseUrl, match="needs http:// or https://"):
            await client.status()


async def test_every_error_is_a_gateway_error() -> None:
    for error_type in (BadRequest, Unauthorized, NotFound, Conflict, RateLimited, ServerError, UnexpectedStatus,
                       GatewayTimeout, ConnectionRefused, ConnectionLost, MalformedResponse, InvalidBaseUrl):
        assert issubclass(error_type, GatewayError)


async def test_a_failing_exchange_hook_does_not_break_the_call(gateway) -> None:
    def broken(_exchange) -> None:
        raise RuntimeError("view crashed")

    gateway.reply("GET", "/status", json_body={"connected": True})
    async with GatewayHttp(on_exchange=broken) as http:
        client = InstanceClient(http, InstanceCredentials(gateway.url, "i", INSTANCE_TOKEN, CLIENT_TOKEN))
        assert (await client.status()).connected


async def test_request_log_subscribers_see_each_exchange(instance, gateway, request_log: RequestLog) -> None:
    seen = []
    unsubscribe = request_log.subscribe(seen.append)
    gateway.reply("GET", "/status", json_body={"connected": True})
    await instance.status()
    unsubscribe()
    await instance.status()
    assert len(seen) == 1 and len(request_log) == 2
    assert seen[0].status == 200 and seen[0].method == "GET" and seen[0].ok
