"""HMAC-SHA256 webhook signatures: `x-hmac-signature` is the lowercase hex digest of the exact body bytes."""

from __future__ import annotations

import enum
import hashlib
import hmac

SIGNATURE_HEADER = "x-hmac-signature"


class Verdict(enum.StrEnum):
    VALID = "valid"
    INVALID = "invalid"
    UNSIGNED = "unsigned"
    NO_KEY = "no-key"


def sign(key: str, body: bytes) -> str:
    # hmac.digest is the one-shot C path: no HMAC object per webhook.
    return hmac.digest(key.encode("utf-8"), body, hashlib.sha256).hex()


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
