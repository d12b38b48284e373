"""HMAC-SHA256 webhook signatures: `x-hmac-signature` is the lowercase hex digest of the exact body bytes."""

from __future__ import annotations

import enum
import functools
import hashlib
import hmac

SIGNATURE_HEADER = "x-hmac-signature"


class Verdict(enum.StrEnum):
    VALID = "valid"
    INVALID = "invalid"
    UNSIGNED = "unsigned"
    NO_KEY = "no-key"
    # Evolution API signs nothing: its deliveries carry the instance's key as `apikey` when its server exposes it
    # (tui.gateways.evolution.envelope). Verdicts of their own, never shown as a signature.
    APIKEY_OK = "apikey-ok"  # the delivery's apikey is the instance's key
    APIKEY_WRONG = "apikey-wrong"  # it carries another key: refused like a bad signature
    APIKEY_UNCHECKED = "apikey-unchecked"  # it carries one, and the listener knows no key to compare it with
    NO_APIKEY = "no-apikey"  # it carries none (Evolution's server does not expose it): unsigned
    # Z-API signs nothing either: its callbacks point at a capability URL, `/delivery/secret/<secret>`
    # (tui.api.listener_paths.PATH_SECRET_SEGMENT). Verdicts of their own, never shown as a signature.
    PATH_SECRET_OK = "path-secret-ok"  # it arrived on the profile's secret URL
    PATH_SECRET_WRONG = "path-secret-wrong"  # on a secret URL with another secret: refused like a bad signature


# What the inbox, the media folder and the backfills believe: a valid signature, an apikey that matched, the secret of
# a Z-API profile's capability URL, or nothing to check against (no key configured). An unsigned delivery, a missing
# apikey or a wrong one, a wrong path secret are kept, never believed.
TRUSTED_VERDICTS = frozenset({Verdict.VALID, Verdict.NO_KEY, Verdict.APIKEY_OK, Verdict.APIKEY_UNCHECKED,
                              Verdict.PATH_SECRET_OK})


# OpenSSL's one-shot HMAC always releases the GIL, and an HMAC object's update releases it from this size on.
# Below it, the listener keeps the GIL: a release hands the core to the store's writer thread and the event loop
# then waits to get it back, which on one busy core cost more than the hash itself.
_GIL_RELEASE_SIZE = 2048


def sign(key: str, body: bytes) -> str:
    if len(body) >= _GIL_RELEASE_SIZE:
        return hmac.digest(key.encode("utf-8"), body, hashlib.sha256).hex()
    mac = _keyed(key).copy()  # the key's pads are hashed once, not per webhook
    mac.update(body)
    return mac.hexdigest()


@functools.lru_cache(maxsize=4)
def _keyed(key: str) -> hmac.HMAC:
    return hmac.new(key.encode("utf-8"), digestmod=hashlib.sha256)


def verify(key: str | None, body: bytes, signature: str | None) -> Verdict:
    """Judge a received body against its signature header, always over the raw bytes.

    Re-serialised JSON or re-encoded form fields would differ from what the sender signed,
    so callers must pass the body exactly as read from the socket.
    """
    if not key:
        return Verdict.NO_KEY
    if signature is None or not signature.strip():
        return Verdict.UNSIGNED
    expected = sign(key, body)
    # Hex is case-insensitive; lower-casing the received value keeps the comparison constant-time.
    received = signature.strip().lower()
    # Bytes, not str: compare_digest refuses non-ASCII text, and a header is attacker-controlled.
    matches = hmac.compare_digest(expected.encode("ascii"), received.encode("utf-8", "surrogateescape"))
    return Verdict.VALID if matches else Verdict.INVALID
