"""One gateway operation from outside the app (`gateway-tui call`): load the profile and its secrets, validate
the data against the operation's request model, write it in the profile's dialect, send, and report.

No argparse and no printing here (see `tui.cli.call`); every outcome is a value or a typed exception.

    outcome = await call_operation(operation("send-text"), {"phone": "5511999999999", "message": "hi"}, profile="work")
    outcome.answer   # the gateway's answer (redacted JSON text), outcome.failure when it said false
"""

from __future__ import annotations

import asyncio
import json
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError

from tui.local import config
from tui.api.exchange import Exchange
from tui.api.json_text import load_json
from tui.api.models import HMAC_KEY_MIN_LENGTH, OperationResult, Request, field_errors
from tui.api.operations import DialectRefusal, ErasedOperation, Family, OperationId, SendKind
from tui.api.redaction import SECRET_BODY_KEYS
from tui.api.wording import labelled
from tui.local.secrets import KeyringUnavailable, SecretName, open_secret_store, resolve_secrets

if TYPE_CHECKING:
    from tui.webhooks.conversations import InboxStore


class CallRefused(Exception):
    """Nothing was sent: bad data, no such profile, a missing secret. `problems` maps fields to rules."""

    def __init__(self, message: str, problems: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or {}


@dataclass(frozen=True)
class CallOutcome:
    result: BaseModel
    answer: str  # the gateway's answer as JSON text, secrets redacted
    failure: str | None = None  # set when a 200 carried success:false / value:false
    note: str | None = None  # something the user should know although the call worked (inbox not updated)


# The largest `--data @FILE` read: above the largest media a gateway takes (100 MB) written as base64.
MAX_DATA_BYTES = 256 * 1024 * 1024


def parse_data(text: str, *, seconds: float | None = None, limit: int = MAX_DATA_BYTES) -> dict[str, object]:
    """`--data` as given: JSON text, or `@FILE` naming a file of JSON (UTF-8), read within `limit` bytes and
    `seconds` (default: a call's deadline). The data must be one JSON object."""
    from tui.api.gateway_http import DEFAULT_DEADLINE
    from tui.local.input_files import InputUnreadable, read_input

    if text.startswith("@"):
        try:
            raw = read_input(text[1:], limit=limit, seconds=seconds if seconds is not None else DEFAULT_DEADLINE)
        except InputUnreadable as error:
            raise CallRefused(f"--data {text}: {error}. Nothing was sent.") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise CallRefused(f"--data {text}: not UTF-8 text, so not a JSON file (an image or other binary "
                              "file?). Nothing was sent.") from None
    try:
        data = load_json(text)
    except ValueError as error:
        raise CallRefused(f"--data is not valid JSON: {error}. Nothing was sent.") from None
    if not isinstance(data, dict):
        raise CallRefused("--data must be a JSON object of the operation's fields, e.g. '{\"phone\": \"5511999999999\"}'")
    return data


def refuse_secrets_in_arguments(op: ErasedOperation, data: dict[str, object]) -> None:
    """`--data` given inline is in the process's arguments, which other users can read: a secret there is
    refused (CallRefused naming the field). The HMAC key may be left out (see `call_operation`) or given in a
    file with `--data @FILE`; a proxy password only in a file."""
    found = [key for key in sorted(SECRET_BODY_KEYS) if data.get(key)]
    proxy = data.get("proxy_url")
    if isinstance(proxy, str) and _has_password(proxy):
        found.append("proxy_url")
    if found:
        where = " or GATEWAY_TUI_HMAC_KEY / the profile's HMAC key (leave hmac_key out)" if "hmac_key" in found else ""
        rule = f"holds a secret, and --data on the command line is visible to other users; use --data @FILE{where}"
        raise CallRefused(f"{op.id}: {', '.join(found)} {rule}. Nothing was sent.", dict.fromkeys(found, rule))


def _has_password(url: str) -> bool:
    try:
        return bool(urlsplit(url).password)
    except ValueError:
        return False


def build_request(op: ErasedOperation, data: dict[str, object]) -> Request:
    """The operation's request model from `data` (spec field names, path parameters included); CallRefused
    naming every bad field otherwise."""
    try:
        return op.request.model_validate(data)
    except ValidationError as error:
        problems = field_errors(error)
        text = labelled(problems)
        raise CallRefused(f"{op.id}: {text}. Nothing was sent.", problems) from None


def load_profile(name: str | None) -> config.Profile:
    profiles = {profile.name: profile for profile in config.load_profiles()}
    if not profiles:
        raise CallRefused("no profile yet: add one with `gateway-tui profile add NAME ...`, or try the command on the "
                          "sandbox with --sandbox")
    if name is None:
        name = "default" if "default" in profiles else next(iter(profiles))
    if name not in profiles:
        raise CallRefused(f"no profile named {name!r} (known: {', '.join(sorted(profiles))})")
    return profiles[name]


def profile_for(op: ErasedOperation, name: str | None) -> config.Profile:
    """The profile a call uses, when it has the operation's family; CallRefused naming the family and its gateway
    otherwise (nothing is sent)."""
    chosen = load_profile(name)
    try:
        chosen.require(op.family)
    except config.MissingFamily as missing:
        raise CallRefused(f"{op.id}: {missing}") from None
    return chosen


def profile_secrets(profile: str, *, insecure_storage: bool) -> dict[SecretName, str | None]:
    """Secrets from the environment (GATEWAY_TUI_*) or the keyring/secure file (--insecure-storage, or the profile
    keeps them there); never from arguments."""
    from tui.local import config

    try:
        store = open_secret_store(config.secrets_in_file(profile, insecure_storage))
    except KeyringUnavailable:
        store = None  # the environment may still hold everything this call needs
    return resolve_secrets(profile, store)


def _keyring_usable() -> bool:
    try:
        open_secret_store(False)
    except KeyringUnavailable:
        return False
    return True


GivenAccount = tuple[config.Profile, Mapping[SecretName, str | None]]
"""A profile and its secrets given by the caller instead of a stored profile's (the command's sandbox:
tui.cli.command_sandbox)."""


async def _profile_and_secrets(
    op: ErasedOperation | None, profile: str | None, insecure_storage: bool, given: GivenAccount | None
) -> tuple[config.Profile, dict[SecretName, str | None]]:
    if given is not None:
        return given[0], dict(given[1])
    chosen = await asyncio.to_thread(profile_for, op, profile) if op is not None else await asyncio.to_thread(
        load_profile, profile)
    return chosen, await asyncio.to_thread(profile_secrets, chosen.name, insecure_storage=insecure_storage)


async def call_operation(
    op: ErasedOperation, data: dict[str, object], *, profile: str | None = None, insecure_storage: bool = False,
    given: GivenAccount | None = None, deadline: float | None = None,
) -> CallOutcome:
    """Validate, write in the profile's dialect (or `given`'s), send within `deadline` seconds (None: the client's
    default). Raises CallRefused (nothing sent) or the client's GatewayError (the gateway said no, or could not be
    reached)."""
    if op.id is OperationId.HMAC_SET and "hmac_key" not in data:
        build_request(op, {**data, "hmac_key": "x" * HMAC_KEY_MIN_LENGTH})  # any other bad field first
        chosen, secrets = await _profile_and_secrets(op, profile, insecure_storage, given)
        key = secrets.get(SecretName.HMAC_KEY)
        if not key:
            raise CallRefused(
                f"{op.id}: hmac_key: no key to set: set {SecretName.HMAC_KEY.env_var}, store one with `profile add`, "
                "or give it in a file (--data @FILE). Nothing was sent.",
                {"hmac_key": "no key in the environment or the profile"},
            )
        data = {**data, "hmac_key": key}
    request = build_request(op, data)
    chosen, secrets = await _profile_and_secrets(op, profile, insecure_storage, given)
    return await send_request(op, request, chosen, secrets, insecure_storage=insecure_storage, deadline=deadline)


def _needed_secrets(chosen: config.Profile, family: Family) -> tuple[SecretName, ...]:
    """The tokens `family` sends (the HMAC key signs nothing sent), as the profile's gateway has them."""
    tokens = (SecretName.INSTANCE_TOKEN, SecretName.CLIENT_TOKEN) if family is Family.INSTANCE else (SecretName.SESSION_TOKEN,)
    has = set(SecretName.of([family], chosen.instance_dialect))
    return tuple(name for name in tokens if name in has)


def refuse_missing_secrets(
    chosen: config.Profile, families: Iterable[Family], secrets: Mapping[SecretName, str | None], *,
    insecure_storage: bool,
) -> None:
    """CallRefused naming every token `families` need that `secrets` lacks, its variable, and the `profile add` that
    stores it, before anything is sent: without it the gateway only answers "401 Unauthorized" (or, for a token in
    the path, 404), which does not say which secret is missing. May read the keyring: off the event loop."""
    missing = [name for family in families for name in _needed_secrets(chosen, family) if not secrets.get(name)]
    if not missing:
        return
    named = [f"no {name.label} ({name.env_var})" for name in missing]
    names = ", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else named[0]
    plural = "s" if len(named) > 1 else ""
    hint = ""
    in_file = insecure_storage or chosen.secrets_file
    if not in_file and not _keyring_usable():
        in_file = True  # the keyring's `profile add` would store nothing here
        hint = (" There is no OS keyring here, so nothing stored could be read: if the profile's secrets were "
                "stored with --insecure-storage, pass --insecure-storage again.")
    where = "a file only you can read" if in_file else "the OS keyring"
    raise CallRefused(
        f"profile {chosen.name!r} has {names}; nothing was sent. Set the variable{plural} for one run, or store the "
        f"secret{plural} in {where} with `{_add_command(chosen, in_file=in_file)}` (it asks on a hidden prompt)."
        f"{hint}"
    )


def _add_command(chosen: config.Profile, *, in_file: bool) -> str:
    """The `profile add` that gives this profile its secrets again, as it can be copied and run: its gateways and
    every setting `add` would otherwise reset to its default, as they are; the secrets in the 0600 file when
    `in_file` (where the next run reads them)."""
    words = ["gateway-tui", "profile", "add", chosen.name]
    if chosen.instance is not None:
        words += ["--base-url", chosen.instance.base_url, "--instance-id", chosen.instance.instance_id]
        if chosen.instance.dialect.value != "spec":
            words += ["--instance-dialect", chosen.instance.dialect.value]
    if chosen.session is not None:
        words += ["--session-url", chosen.session.url]
        if chosen.session.dialect.value != "spec":
            words += ["--session-dialect", chosen.session.dialect.value]
    for flag, name in (("--listener-host", "listener_host"), ("--listener-port", "listener_port"),
                       ("--public-url", "public_url"), ("--theme", "theme"), ("--max-body", "max_body"),
                       ("--forward-to", "forward_to")):
        value = getattr(chosen, name)
        if value != config.Profile.model_fields[name].default:
            words += [flag, str(value)]
    words += ["--require-signatures"] if chosen.require_signatures else []
    words += ["--forward-allow-remote"] if chosen.forward_allow_remote else []
    words += ["--insecure-storage"] if in_file else []
    return shlex.join(words)


async def send_request(
    op: ErasedOperation, request: Request, chosen: config.Profile, secrets: dict[SecretName, str | None], *,
    insecure_storage: bool = False, deadline: float | None = None, store: InboxStore | None = None,
) -> CallOutcome:
    """Send a built request on `chosen`'s gateway in its dialect and record it in the inbox when it is a send.
    CallRefused (nothing sent) when a secret is missing or the dialect cannot say it."""
    from tui.api.client import GatewayHttp
    from tui.api.client import SessionClient as GatewaySessionClient
    from tui.api.credentials import InstanceCredentials, SessionCredentials
    from tui.gateways import adapter_for, encode
    from tui.gateways.clients import InstanceClient, SessionClient

    # A session-family operation on one whole gateway (Evolution API) goes through its instance, with its secrets.
    through_instance = op.family is Family.SESSION and chosen.session_through_instance
    sent_as = Family.INSTANCE if through_instance else op.family
    await asyncio.to_thread(refuse_missing_secrets, chosen, (sent_as,), secrets, insecure_storage=insecure_storage)
    try:
        encode(op, request, chosen.instance_dialect if sent_as is Family.INSTANCE else chosen.session_dialect)
    except DialectRefusal as refusal:
        raise CallRefused(f"{op.id}: {refusal.message}", {refusal.field: refusal.problem}) from None

    exchanges: list[Exchange] = []
    instance, session = chosen.instance, chosen.session
    async with GatewayHttp(on_exchange=exchanges.append, deadline=deadline) as http:
        instance_credentials = InstanceCredentials(
            instance.base_url, instance.instance_id,
            secrets[SecretName.INSTANCE_TOKEN] or "", secrets[SecretName.CLIENT_TOKEN] or "",
        ) if instance is not None else None
        client: InstanceClient | GatewaySessionClient
        if op.family is Family.INSTANCE and instance is not None and instance_credentials is not None:
            client = InstanceClient(http, instance_credentials, instance.dialect, read_only=chosen.refuses_writes_as)
        elif through_instance and instance is not None and instance_credentials is not None:
            client = GatewaySessionClient(http, instance_credentials, adapter_for(instance.dialect),
                                          read_only=chosen.refuses_writes_as)
        elif op.family is Family.SESSION and session is not None:
            client = SessionClient(http, SessionCredentials(session.url, secrets[SecretName.SESSION_TOKEN] or ""),
                                   session.dialect, read_only=chosen.refuses_writes_as)
        else:  # profile_for refused it above
            raise CallRefused(str(config.MissingFamily(chosen.name, op.family)))
        result = await client.request(op, request)
    answer = _answer_text(exchanges, result)
    failure = None
    if isinstance(result, OperationResult) and not result.ok:
        failure = f"{op.id}: the gateway answered {result.refusal}: it did not do it."
    note = None
    if failure is None:
        try:
            if store is None:
                await asyncio.to_thread(record_sent, chosen.name, op.id, request, result)
            else:
                await asyncio.to_thread(record_sent_in, store, op.id, request, result)
        except Exception as error:  # the message was sent: say the inbox missed it rather than fail the call
            note = f"sent, but the inbox could not keep it: {error}"
    return CallOutcome(result=result, answer=answer, failure=failure, note=note)


async def send_media(
    path: Path, phone: str, *, caption: str | None = None, kind: SendKind | None = None, family: Family | None = None,
    profile: str | None = None, insecure_storage: bool = False, given: GivenAccount | None = None,
    deadline: float | None = None,
) -> CallOutcome:
    """`gateway-tui send`: the file checked (`tui.api.media`), the operation picked from its type or `kind`, sent on
    the profile's (or `given`'s) only media family or `family`. CallRefused (nothing sent) or the client's
    GatewayError."""
    from tui.gateways.media import MediaRefused, media_request, read_media

    chosen, secrets = await _profile_and_secrets(None, profile, insecure_storage, given)
    family = family or profile_media_family(chosen, secrets)
    try:
        media = await asyncio.to_thread(read_media, path, family, kind)
        op, request = media_request(media, family, phone, caption)
    except MediaRefused as refused:
        raise CallRefused(f"{str(refused).rstrip('.')}. Nothing was sent.") from None
    except ValidationError as error:
        problems = field_errors(error)
        field, problem = next(iter(problems.items()))
        # the file was checked above: what is left to refuse is the recipient or the caption, each named by its flag
        flag = "--caption" if field.rsplit(".", 1)[-1].lower() == "caption" else "--to"
        raise CallRefused(f"{flag}: {problem}. Nothing was sent.", problems) from None
    return await send_request(op, request, chosen, secrets, insecure_storage=insecure_storage, deadline=deadline)


def profile_media_family(chosen: config.Profile, secrets: dict[SecretName, str | None]) -> Family:
    """The family a media send goes on when `--family` does not say: the one the profile can send media on (its
    secrets are there; the session family only where its gateway has a media call: WuzAPI's, not the spec's)."""
    from tui.gateways import adapter_for

    # Only the profile's own families: a token in the environment for a family the profile lacks (a user of both
    # gateways) does not make it one to send on.
    usable = [family for family in chosen.families
              if all(secrets.get(name) for name in _needed_secrets(chosen, family))
              and not (family is Family.SESSION
                       and adapter_for(chosen.session_dialect).refusal(OperationId.CHAT_SEND_IMAGE) is not None)]
    if len(usable) == 1:
        return usable[0]
    if not usable:
        raise CallRefused(
            f"profile {chosen.name!r} has no family that can send media: the instance family needs its tokens, the "
            "session family its token and the wuzapi dialect. Nothing was sent."
        )
    raise CallRefused(f"profile {chosen.name!r} can send media on both families: say which with --family instance "
                      "or --family session. Nothing was sent.")


def record_sent(profile: str, op_id: OperationId, request: Request, result: BaseModel) -> bool:
    """Keep a sent message in the profile's inbox (the app's event store), so the app lists it too."""
    from tui.local.paths import profile_events_path
    from tui.webhooks.sent import sent_message
    from tui.webhooks.store import EventStore

    if sent_message(op_id, request, None) is None:  # not a send: the store is not even opened
        return False
    with EventStore(profile_events_path(profile)) as store:
        return record_sent_in(store, op_id, request, result)


def record_sent_in(store: InboxStore, op_id: OperationId, request: Request, result: BaseModel) -> bool:
    """`record_sent` in a store the caller holds open."""
    import time

    from tui.webhooks.conversations import Inbox
    from tui.webhooks.sent import message_id_of, sent_message

    message = sent_message(op_id, request, message_id_of(result))
    if message is None:
        return False
    return Inbox(store).record(message, time.time_ns() // 1000)


def _answer_text(exchanges: list[Exchange], result: BaseModel) -> str:
    """The last answer's body as the gateway sent it (redacted); the typed result when it was cut or is not JSON."""
    body = exchanges[-1].response_body if exchanges else None
    if body:
        try:
            return json.dumps(load_json(body), ensure_ascii=False, indent=2)
        except (ValueError, RecursionError):  # RecursionError: parsed, but too deep to write again
            pass
    from tui.api.redaction import redact_delivery_secret  # Z-API's callbacks carry the secret of their URL

    return redact_delivery_secret(result.model_dump_json(indent=2, exclude_none=True))
