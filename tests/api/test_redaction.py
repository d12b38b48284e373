"""Secrets never appear in a repr, log line, exception text, Exchange field or curl command."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from dataclasses import fields

import pytest

from tests.api.conftest import (
    ALL_SECRETS,
    CLIENT_TOKEN,
    HMAC_SECRET,
    INSTANCE_TOKEN,
    PROXY_PASSWORD,
    SESSION_TOKEN,
)
from tui.api.client import GatewayHttp, InstanceCredentials, SessionCredentials
from tui.gateways.clients import InstanceClient, SessionClient
from tui.api.errors import GatewayError
from tui.api.exchange import Exchange
from tui.api.models import GroupInfoRequest, HmacKey, ProxyConfig, SendText
from tui.api.redaction import Redactor

PROXY_URL = f"http://proxyuser:{PROXY_PASSWORD}@proxy.example.com:3128"


def assert_no_secret(text: str) -> None:
    for secret in ALL_SECRETS:
        assert secret not in text, f"secret {secret!r} leaked into {text!r}"


def exchange_text(exchange: Exchange) -> str:
    return repr(exchange) + "".join(str(getattr(exchange, f.name)) for f in fields(exchange)) + exchange.as_curl()


async def test_credential_and_client_reprs_hide_secrets() -> None:
    instance_credentials = InstanceCredentials("http://127.0.0.1:9", "inst-1", INSTANCE_TOKEN, CLIENT_TOKEN)
    session_credentials = SessionCredentials(f"http://u:{PROXY_PASSWORD}@127.0.0.1:9", SESSION_TOKEN)
    for value in (instance_credentials, session_credentials):
        assert_no_secret(repr(value))
        assert_no_secret(str(value))
    assert "inst-1" in repr(instance_credentials)  # the id is not a secret and helps the user
    async with GatewayHttp() as http:
        assert_no_secret(repr(InstanceClient(http, instance_credentials)))
        assert_no_secret(repr(SessionClient(http, session_credentials)))


def test_secret_request_models_hide_their_secrets() -> None:
    assert_no_secret(repr(HmacKey(hmac_key=HMAC_SECRET)))
    assert_no_secret(str(ProxyConfig(enable=True, proxy_url=PROXY_URL)))


async def test_server_echoing_every_secret_leaks_nothing(instance, session, gateway, request_log, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    gateway.echo("POST", "/send-text")
    gateway.echo("POST", "/session/hmac/config")
    gateway.echo("POST", "/session/proxy", status=500)
    gateway.echo("GET", "/group/info", status=200)  # a 2xx whose body is only an error report

    errors: list[GatewayError] = []
    calls = [
        instance.send_text(SendText(phone="5511999999999", message="hi")),
        session.set_hmac_key(HmacKey(hmac_key=HMAC_SECRET)),
        session.set_proxy(ProxyConfig(enable=True, proxy_url=PROXY_URL)),
        session.group_info(GroupInfoRequest(GroupJID="120363019502650977@g.us")),
    ]
    for call in calls:
        with pytest.raises(GatewayError) as caught:
            await call
        errors.append(caught.value)

    # The server really did echo the secrets, so redaction is what kept them out.
    assert INSTANCE_TOKEN in gateway.requests[0].raw_path
    assert all("***" in str(error) for error in errors)
    for error in errors:
        assert_no_secret(str(error))
        assert_no_secret(repr(error))
        assert_no_secret(error.body or "")
        assert error.__cause__ is None
    assert len(request_log) == 4
    for exchange in request_log:
        assert_no_secret(exchange_text(exchange))
    assert caplog.records, "exchanges are logged"
    assert_no_secret("\n".join(record.getMessage() for record in caplog.records))


async def test_successful_exchange_fields_are_redacted(instance, session, gateway, request_log) -> None:
    gateway.reply("POST", "/send-text", 202, json_body={"messageId": "m1"})
    gateway.reply("POST", "/session/proxy", json_body={
        "code": 200, "data": {"Details": "Proxy configured successfully", "ProxyURL": PROXY_URL}, "success": True})
    await instance.send_text(SendText(phone="5511999999999", message="hi"))
    result = await session.set_proxy(ProxyConfig(enable=True, proxy_url=PROXY_URL))
    assert_no_secret(repr(result))

    send, proxy = list(request_log)
    assert send.url == f"{gateway.url}/instances/inst-1/token/{{instanceToken}}/send-text"
    assert send.request_headers == {"Client-Token": "***", "Content-Type": "application/json"}
    assert send.status == 202 and send.error is None and send.duration_ms >= 0
    assert json.loads(send.request_body) == {"phone": "5511999999999", "message": "hi"}
    assert json.loads(send.response_body) == {"messageId": "m1"}
    assert proxy.request_headers == {"token": "***", "Content-Type": "application/json"}
    assert json.loads(proxy.request_body) == {"enable": True, "proxy_url": "http://proxyuser:***@proxy.example.com:3128"}
    for exchange in (send, proxy):
        assert_no_secret(exchange_text(exchange))


async def test_hmac_key_is_masked_in_the_logged_body(session, gateway, request_log) -> None:
    gateway.reply("POST", "/session/hmac/config", json_body={"Details": "saved"})
    await session.set_hmac_key(HmacKey(hmac_key=HMAC_SECRET))
    (exchange,) = list(request_log)
    assert json.loads(exchange.request_body) == {"hmac_key": "***"}
    assert json.loads(gateway.last.body) == {"hmac_key": HMAC_SECRET}  # the real key did go to the server


def test_long_response_bodies_are_truncated() -> None:
    from tui.api.exchange import MAX_RESPONSE_BODY, truncate

    text = truncate("x" * (MAX_RESPONSE_BODY + 10))
    assert text.startswith("x" * MAX_RESPONSE_BODY) and text.endswith("(10 more characters)")


# -- copy as curl -----------------------------------------------------------------------------------


async def test_curl_uses_shell_variables_for_every_secret(instance, session, gateway, request_log) -> None:
    gateway.reply("POST", "/send-text", 202, json_body={"messageId": "m1"})
    gateway.reply("POST", "/session/hmac/config", json_body={"Details": "saved"})
    gateway.reply("POST", "/session/proxy", json_body={"code": 200, "data": {"Details": "ok"}, "success": True})
    await instance.send_text(SendText(phone="5511999999999", message="it's"))
    await session.set_hmac_key(HmacKey(hmac_key=HMAC_SECRET))
    await session.set_proxy(ProxyConfig(enable=True, proxy_url=PROXY_URL))
    send, hmac, proxy = (exchange.as_curl() for exchange in request_log)

    assert send == (
        f"curl -sS -X POST {gateway.url}/instances/inst-1/token/\"$GATEWAY_TUI_INSTANCE_TOKEN\"/send-text"
        " -H 'Client-Token: '\"$GATEWAY_TUI_CLIENT_TOKEN\" -H 'Content-Type: application/json'"
        " --data-raw '{\"phone\":\"5511999999999\",\"message\":\"it'\"'\"'s\"}'"
    )
    assert "'token: '\"$GATEWAY_TUI_SESSION_TOKEN\"" in hmac
    assert "'{\"hmac_key\":\"'\"$GATEWAY_TUI_HMAC_KEY\"'\"}'" in hmac
    assert "proxyuser:'\"$GATEWAY_TUI_PROXY_PASSWORD\"'@proxy.example.com" in proxy
    for command in (send, hmac, proxy):
        assert_no_secret(command)


async def test_curl_commands_run_and_reproduce_the_request(instance, session, gateway, request_log) -> None:
    gateway.reply("POST", "/send-text", 202, json_body={"messageId": "m1"})
    gateway.reply("POST", "/session/hmac/config", json_body={"Details": "saved"})
    gateway.reply("GET", "/group/info", json_body={"code": 200, "data": {"JID": "1@g.us"}, "success": True})
    await instance.send_text(SendText(phone="5511999999999", message="Olá it's \"quoted\""))
    await session.set_hmac_key(HmacKey(hmac_key=HMAC_SECRET))
    await session.group_info(GroupInfoRequest(GroupJID="120363019502650977@g.us"))
    sent_by_client = list(gateway.requests)

    environment = {
        **os.environ,
        "GATEWAY_TUI_INSTANCE_TOKEN": INSTANCE_TOKEN,
        "GATEWAY_TUI_CLIENT_TOKEN": CLIENT_TOKEN,
        "GATEWAY_TUI_SESSION_TOKEN": SESSION_TOKEN,
        "GATEWAY_TUI_HMAC_KEY": HMAC_SECRET,
    }
    for exchange in list(request_log):
        process = await asyncio.create_subprocess_exec(
            "sh", "-c", exchange.as_curl() + " --max-time 10 -o /dev/null", env=environment,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        _, stderr = await asyncio.wait_for(process.communicate(), timeout=20)
        assert process.returncode == 0, stderr

    replayed = gateway.requests[len(sent_by_client):]
    assert len(replayed) == len(sent_by_client)
    for original, copy in zip(sent_by_client, replayed, strict=True):
        assert (copy.method, copy.raw_path, copy.query, copy.body) == (
            original.method, original.raw_path, original.query, original.body)
        for header in ("Client-Token", "token", "Content-Type"):
            assert copy.headers.get(header) == original.headers.get(header)


def test_a_short_secret_is_masked_where_it_stands_alone_not_inside_words():
    """A one-letter token (as tests and sandboxes use) masked inside words garbled every message and hid nothing;
    standing alone it is still masked, and a real token anywhere."""
    redact = Redactor(["c", "tok3n", "Zq9fK2mR7xP4wL8v"])
    assert redact("Could not connect: c is wrong") == "Could not connect: *** is wrong"
    assert redact("token=tok3n&x=1; tok3ns") == "token=***&x=1; tok3ns"
    assert redact("in the middleZq9fK2mR7xP4wL8vof a word") == "in the middle***of a word"


def test_the_secret_of_zapis_webhook_url_is_masked_in_urls_bodies_and_answers():
    from tui.api.redaction import redact_body, redact_delivery_secret, redact_url_secrets

    secret = "Zq3v0cT9yJwK1mB7sXnL4pA8rD2eF6hG"
    url = f"https://tunnel.example/a/work/delivery/secret/{secret}"
    assert redact_delivery_secret(url) == "https://tunnel.example/a/work/delivery/secret/***"
    assert redact_url_secrets(f"POST {url}?x=1") == "POST https://tunnel.example/a/work/delivery/secret/***?x=1"
    # the request log's body of Z-API's update-every-webhooks, and Z-API's instance data echoing the callbacks
    assert redact_body({"value": url, "notifySentByMe": True}) == {
        "value": "https://tunnel.example/a/work/delivery/secret/***", "notifySentByMe": True}
    answer = f'{{"receivedCallbackUrl":"{url}","deliveryCallbackUrl":"{url}"}}'
    assert secret not in redact_delivery_secret(answer)
    assert redact_delivery_secret("http://h/delivery and /session") == "http://h/delivery and /session"
