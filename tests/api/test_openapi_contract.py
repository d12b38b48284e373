"""Session-family requests, as they arrive on the wire, checked against the real WuzAPI OpenAPI file.

spec.yml is lenient YAML (Swagger-2 `definitions` under an `openapi: 3.0.0` header, `type: float` and
similar), so it is read with yaml.safe_load and `$ref: '#/definitions/...'` is resolved by hand.

Where our wire format and spec.yml differ, the difference is listed in KNOWN_DEVIATIONS with its reason
and asserted exactly, so a new difference (or a fixed one) fails the test instead of being skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.api.spec_cases import SESSION_CASES, Case
from tui.api.answers import decode_success, error_for_status
from tui.api.connection import SessionConnected, SessionLinkingCode, SessionQr, SessionStatus
from tui.api.errors import BadRequest
from tui.api.models import ContactSent, Details, GroupInfo, HmacStatus, WebhookConfig

# WuzAPI's own file, copied unchanged with its source and license (wuzapi-openapi/README.md)
SPEC_FILE = Path(__file__).resolve().parent / "wuzapi-openapi" / "spec.yml"

# (method, path) -> {key we send: key spec.yml documents}. All of these are accepted by the real server:
# Go's encoding/json matches JSON keys to struct fields case-insensitively (docs/gateways/wuzapi.md §1.3).
CASE_DEVIATIONS = {
    # The service spec (§4.2 #22) and WuzAPI's struct tags say `name`/`participants`; spec.yml capitalises.
    ("POST", "/group/create"): {"name": "Name", "participants": "Participants"},
    # The service spec (§4.2 #24) and the handler say `active`; spec.yml's WebhookUpdate says `Active`.
    ("PUT", "/webhook"): {"active": "Active"},
}
# GET /group/info: the service spec puts `GroupJID` in a GET body; spec.yml (and the real handler) take only
# the `groupJID` query parameter. We send both; spec.yml documents no body, and its unreferenced, stale
# `definitions/GroupInfo` still describes exactly that body.
UNDOCUMENTED_BODIES = {("GET", "/group/info"): "GroupInfo"}
# POST /session/connect: spec.yml's Connect says `Subscribe: type: string`, but its own example is a list and the
# handler decodes `Subscribe []string` (handlers.go connectStruct): validated with the type the handler reads.
TYPE_DEVIATIONS = {("POST", "/session/connect"): {"Subscribe": {"type": "array", "items": {"type": "string"}}}}


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    return yaml.safe_load(SPEC_FILE.read_text(encoding="utf-8"))


def resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    prefix = "#/definitions/"
    assert ref.startswith(prefix), ref
    return resolve(spec, spec["definitions"][ref[len(prefix):]])


def operation(spec: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    assert path in spec["paths"], f"{path} not in spec.yml"
    assert method.lower() in spec["paths"][path], f"{method} {path} not in spec.yml"
    return spec["paths"][path][method.lower()]


def body_schema(spec: dict[str, Any], op: dict[str, Any]) -> dict[str, Any] | None:
    body = op.get("requestBody")
    if body is None:
        return None
    return resolve(spec, body["content"]["application/json"]["schema"])


async def _wire_request(case: Case, session, gateway):
    status, reply = case.reply
    gateway.reply(case.method, case.path, status, json_body=reply)
    await case.call(session)
    return gateway.last


@pytest.mark.parametrize("case", SESSION_CASES, ids=lambda case: case.name)
async def test_session_request_matches_spec_yml(case: Case, openapi, session, gateway) -> None:
    seen = await _wire_request(case, session, gateway)
    op = operation(openapi, seen.method, seen.raw_path)

    # Authentication: every session operation declares the `token` header scheme.
    schemes = {name for requirement in op.get("security", []) for name in requirement}
    assert schemes == {"ApiKeyAuth"}
    assert openapi["components"]["securitySchemes"]["ApiKeyAuth"] == {"type": "apiKey", "in": "header", "name": "token"}
    assert "token" in seen.headers

    # Query parameters: every required one is sent.
    parameters = op.get("parameters", [])
    required_query = {p["name"] for p in parameters if p.get("in") == "query" and p.get("required")}
    assert required_query <= set(seen.query)
    assert set(seen.query) <= {p["name"] for p in parameters if p.get("in") == "query"}

    sent = json.loads(seen.body) if seen.body else None
    schema = body_schema(openapi, op)
    key = (seen.method, seen.raw_path)
    if schema is None:
        if key in UNDOCUMENTED_BODIES:
            stale = openapi["definitions"][UNDOCUMENTED_BODIES[key]]
            assert set(sent) == set(stale["properties"])
        else:
            assert sent is None, f"{key} has no documented body but we send {sent}"
        return

    properties = schema["properties"]
    renamed = CASE_DEVIATIONS.get(key, {})
    as_documented = {renamed.get(name, name): value for name, value in sent.items()}
    assert set(as_documented) <= set(properties), f"undocumented keys: {set(as_documented) - set(properties)}"
    # The deviations are exactly the case differences, nothing else.
    assert {name for name in sent if name not in properties} == set(renamed) & set(sent)
    assert all(name.lower() == documented.lower() for name, documented in renamed.items())
    assert set(schema.get("required", [])) <= set(as_documented)
    # Types and required keys per spec.yml. Its schema set as a whole is invalid (`type: float` elsewhere),
    # so validate with a validator instance, which does not check the schema itself.
    properties = {**properties, **TYPE_DEVIATIONS.get(key, {})}
    jsonschema.Draft7Validator({**schema, "properties": properties, "definitions": openapi["definitions"]}).validate(
        as_documented)


def test_known_deviations_are_still_real(openapi) -> None:
    for (method, path), renamed in CASE_DEVIATIONS.items():
        properties = body_schema(openapi, operation(openapi, method, path))["properties"]
        for ours, documented in renamed.items():
            assert documented in properties and ours not in properties
    for (method, path), retyped in TYPE_DEVIATIONS.items():
        properties = body_schema(openapi, operation(openapi, method, path))["properties"]
        assert all(properties[name]["type"] != schema["type"] for name, schema in retyped.items())
    info = operation(openapi, "GET", "/group/info")
    assert "requestBody" not in info
    assert [p["name"] for p in info["parameters"]] == ["groupJID"]


# Responses: the 200 examples spec.yml documents decode with our lenient response models.
DOCUMENTED_ANSWERS = [
    ("POST", "/session/hmac/config", Details, lambda r: r.Details == "HMAC configuration saved successfully"),
    ("GET", "/session/hmac/config", HmacStatus, lambda r: r.configured),
    ("DELETE", "/session/hmac/config", Details, lambda r: r.Details == "HMAC configuration deleted successfully"),
    ("GET", "/group/info", GroupInfo, lambda r: r.Name == "Super Group" and len(r.Participants) == 3),
    ("POST", "/group/create", GroupInfo, lambda r: r.JID == "120363123456789@g.us"),
    # spec.yml shows Timestamp as ISO text; the real server sends Unix seconds (both accepted).
    ("POST", "/chat/send/contact", ContactSent, lambda r: r.Timestamp is not None and r.Timestamp.year == 2022),
    # spec.yml shows WebhookURL/Events; the real server sends webhook/events (both accepted).
    ("PUT", "/webhook", WebhookConfig, lambda r: r.webhook == "https://example.net/webhook" and r.events),
    # issue 23's pairing calls: spec.yml's examples (its QR is a real pairing code's PNG, read back by zxing-cpp).
    ("POST", "/session/connect", SessionConnected, lambda r: r.subscribed == ["Message"] and r.details == "Connected!"),
    ("POST", "/session/disconnect", Details, lambda r: r.Details == "Disconnected"),
    ("POST", "/session/logout", Details, lambda r: r.Details == "Logged out"),
    ("GET", "/session/status", SessionStatus, lambda r: r.state.connected and r.state.logged_in),
    ("POST", "/session/pairphone", SessionLinkingCode, lambda r: r.code == "9H3J-H3J8"),
    ("GET", "/session/qr", SessionQr, lambda r: r.payload().startswith("2@EIv78EuEwo6ytqP2ekCJoUxUn7OFD1YEy5iCDMb+")
     and len(r.payload().split(",")) == 4),
]


@pytest.mark.parametrize(
    ("method", "path", "model", "check"), DOCUMENTED_ANSWERS, ids=[f"{m} {p}" for m, p, _, _ in DOCUMENTED_ANSWERS]
)
def test_documented_answers_decode(openapi, method, path, model, check) -> None:
    example = operation(openapi, method, path)["responses"][200]["content"]["application/json"]["schema"]["example"]
    assert check(decode_success(model, 200, json.dumps(example), f"{method} {path}"))


def test_documented_proxy_answer_decodes(openapi) -> None:
    # spec.yml gives a schema (Details and ProxyURL at the top level, no envelope) instead of an example.
    properties = operation(openapi, "POST", "/session/proxy")["responses"]["200"]["content"]["application/json"][
        "schema"]["properties"]
    answer = {name: spec["example"] for name, spec in properties.items()}
    result = decode_success(Details, 200, json.dumps(answer), "POST /session/proxy")
    assert result.Details == "Proxy configured successfully"
    assert result.ProxyURL == "socks5://user:***@host:port"


def test_documented_hmac_rejection_decodes(openapi) -> None:
    example = operation(openapi, "POST", "/session/hmac/config")["responses"][400]["content"]["application/json"][
        "schema"]["example"]
    error = error_for_status(400, json.dumps(example))
    assert isinstance(error, BadRequest)
    assert str(error) == "400 Bad Request: HMAC key must be at least 32 characters long"
