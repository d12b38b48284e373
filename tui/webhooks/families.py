"""Which gateway family a listener path belongs to, and whether a call there must be signed.

The app and `gateway-tui listen` point each family's webhooks at its own path (runtime.webhooks.configure_webhooks):
the instance family's delivery callbacks at `/delivery`, the session family's events at `/session`. Z-API,
the real instance-family gateway, never signs its callbacks (docs/gateways/zapi.md §5.5), so with a key set an unsigned call
below `/delivery` is still stored and answered 200, with verdict `unsigned` (never shown as authentic). Every
other path stays strict, `require_signatures` makes `/delivery` strict too, and so does an account without the
instance family (AccountSigning: that exception is Z-API's alone).

Evolution API (the instance family in its own dialect) posts to `/evolution` and, with "webhook by events" on, to
the per-event paths below it (`/evolution/messages-upsert`, …). It signs nothing: on those paths of an account whose
profile speaks Evolution, a delivery is judged by the `apikey` it carries (tui.gateways.evolution.envelope), and
one carrying none is unsigned, accepted there only (and not when signatures are required).
"""

from __future__ import annotations

import enum
from typing import NamedTuple
from urllib.parse import unquote

from tui.api.listener_paths import ACCOUNT_PREFIX as ACCOUNT_PREFIX
from tui.api.listener_paths import EVOLUTION_PATH as EVOLUTION_PATH
from tui.api.listener_paths import INSTANCE_PATH as INSTANCE_PATH
from tui.api.listener_paths import SESSION_PATH as SESSION_PATH
from tui.api.listener_paths import with_path_secret


class PathFamily(enum.StrEnum):
    INSTANCE = "instance"
    SESSION = "session"
    OTHER = "other"


def family_of(path: str) -> PathFamily:
    """The family whose webhooks are pointed at `path` (query string allowed): the family's path or below it."""
    decoded = _decoded(path.split("?", 1)[0].split("#", 1)[0])
    segments = decoded.split("/") if decoded is not None else [".."]
    if ".." in segments or "." in segments:
        # `/delivery/../session` (or `/delivery/%2e%2e/session`) must not borrow the instance family's leniency
        return PathFamily.OTHER
    first = segments[1] if len(segments) > 1 else ""
    if "/" + first in (INSTANCE_PATH, EVOLUTION_PATH):
        return PathFamily.INSTANCE
    if "/" + first == SESSION_PATH:
        return PathFamily.SESSION
    return PathFamily.OTHER


_DECODINGS = 4  # a path still encoded after this many decodings is no family's


def _decoded(path: str) -> str | None:
    """The path percent-decoded until it no longer changes: whichever layer (a proxy, the user's app behind
    `--forward-to`) decodes it, a dot segment spelled `%2e%2e` or `%252e%252e` is found here as `..`. None when
    it still changes after _DECODINGS."""
    for _ in range(_DECODINGS):
        decoded = unquote(path)
        if decoded == path:
            return path
        path = decoded
    return None


class AccountSigning(NamedTuple):
    """What one account's saved profile says about unsigned calls: whether it has the instance family (Z-API, whose
    unsigned callbacks its `/delivery` takes: without it there is no such exception), and whether it requires
    signatures on every path. The default (both families, not required) is the listener's without a profile."""

    instance_family: bool = True
    require_signatures: bool = False
    evolution: bool = False  # its instance family speaks Evolution: `/evolution` judges the apikey


def is_evolution_path(path: str) -> bool:
    """`/evolution` or a path below it (query string allowed; dot segments are no family's)."""
    return family_of(path) is PathFamily.INSTANCE and _first_segment(path) == EVOLUTION_PATH


def _first_segment(path: str) -> str:
    decoded = _decoded(path.split("?", 1)[0].split("#", 1)[0]) or ""
    segments = decoded.split("/")
    return "/" + segments[1] if len(segments) > 1 else "/"


def unsigned_allowed(path: str, *, require_signatures: bool, instance_family: bool = True,
                     evolution: bool = False) -> bool:
    """True where an unsigned call is stored and answered 200 even though a key is set: below `/delivery`, for an
    account that has the instance family and does not require signatures; below `/evolution` only for an account
    whose instance family speaks Evolution."""
    if not instance_family or require_signatures or family_of(path) is not PathFamily.INSTANCE:
        return False
    return evolution or not is_evolution_path(path)


def family_urls(base_url: str, account: str | None = None) -> dict[PathFamily, str]:
    """Each family's webhook URL under the listener's (or the public) base URL: the account's own paths
    (`/a/<account>/delivery`, `/a/<account>/session`) when one is named, else the single account's old ones."""
    base = base_url.rstrip("/") + (ACCOUNT_PREFIX + account if account is not None else "")
    return {PathFamily.INSTANCE: base + INSTANCE_PATH, PathFamily.SESSION: base + SESSION_PATH}


def instance_family_url(base_url: str, account: str | None, listener_path: str = INSTANCE_PATH,
                        path_secret: str | None = None) -> str:
    """The one URL the instance family's webhooks must point at: its gateway's path (`/delivery`, Evolution's
    `/evolution`) under the base (below `/a/<account>` when named), with a Z-API profile's secret segment
    (`/delivery/secret/<secret>`) when it has one. The app's setup, the doctor and `doctor --fix` all take it here."""
    url = family_urls(base_url, account)[PathFamily.INSTANCE].removesuffix(INSTANCE_PATH) + listener_path
    return with_path_secret(url, path_secret) if listener_path == INSTANCE_PATH else url


def evolution_url(base_url: str, account: str | None = None) -> str:
    """Where an Evolution instance's webhook points: `/evolution` under the listener's (or the account's) base."""
    base = base_url.rstrip("/") + (ACCOUNT_PREFIX + account if account is not None else "")
    return base + EVOLUTION_PATH


def split_account(path: str) -> tuple[str | None, str]:
    """(account, the path below it) for `/a/<account>/...`; (None, path) for any other path. The rest keeps its
    query string, so `family_of` and `unsigned_allowed` judge it as they judge an old path."""
    if not path.startswith(ACCOUNT_PREFIX):
        return None, path
    name, slash, rest = path[len(ACCOUNT_PREFIX):].partition("/")
    name, mark, query = name.partition("?")
    return name, slash + rest + mark + query if slash else "/" + mark + query


def inbox_of(path: str) -> str:
    """Whose inbox an event stored from `path` feeds: the account of its `/a/<profile>/` path, else "" (the old
    paths: the store of one account). Here, with the paths, so the events panel reads it without loading the
    inbox's readers before the app's first frame."""
    return split_account(path)[0] or ""
