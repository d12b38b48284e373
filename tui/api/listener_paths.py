"""Where the listener takes each gateway's webhooks: a family's path, and under `listen --all` the same path below
`/a/<profile>`. Here, at the bottom, because both sides need them: the listener (tui.webhooks.families) to tell a
path's family, the gateways' fleet imports (tui.gateways.*.fleet) to point each account's webhooks at its path."""

from __future__ import annotations

from tui.api.dialects import InstanceDialect

INSTANCE_PATH = "/delivery"
SESSION_PATH = "/session"
EVOLUTION_PATH = "/evolution"
"""Evolution's one webhook (with "webhook by events" on, Evolution appends a path per event kind to it)."""
ACCOUNT_PREFIX = "/a/"
"""One listener for several accounts (issue 26): each account's paths are the paths above under `/a/<profile>`."""

PATH_SECRET_SEGMENT = "secret"
"""Z-API signs nothing (it has no HMAC option): a Z-API account's callbacks point at a capability URL,
`/delivery/secret/<secret>` (and `/a/<profile>/delivery/secret/<secret>`), whose unguessable per-profile segment
proves the sender was told the URL. The listener compares it (verdict `path-secret-ok`), and everything that shows
or keeps such a URL shows `/delivery/secret/***` (tui.api.redaction.redact_delivery_secret)."""

_SECRET_PREFIX = f"{INSTANCE_PATH}/{PATH_SECRET_SEGMENT}/"


def with_path_secret(delivery_url: str, secret: str | None) -> str:
    """`…/delivery` with the profile's secret segment appended (unchanged without a secret)."""
    return f"{delivery_url}/{PATH_SECRET_SEGMENT}/{secret}" if secret else delivery_url


def path_secret_of(target: str) -> str | None:
    """The secret a request target offers on `/delivery/secret/<secret>` (or that path below `/a/<profile>`): ""
    when the segment is empty, None on any other path."""
    path = target.split("?", 1)[0].split("#", 1)[0]
    if path.startswith(ACCOUNT_PREFIX):
        _, slash, rest = path[len(ACCOUNT_PREFIX):].partition("/")
        path = slash + rest
    if not path.startswith(_SECRET_PREFIX):
        return None
    return path[len(_SECRET_PREFIX):].split("/", 1)[0]


def wants_path_secret(instance_dialect: object) -> bool:
    """Whether an instance family in this dialect gets the secret URL: Z-API only (the spec's dialect signs, WuzAPI
    signs, Evolution's deliveries carry its apikey)."""
    return instance_dialect is InstanceDialect.ZAPI
