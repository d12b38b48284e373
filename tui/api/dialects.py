"""The two families and the dialects a profile may speak, one enum per family (standard library only: config, the
secrets and the CLI read it).

The spec is the contract and the default. A real account speaks its gateway's dialect: `zapi` for the instance
family (docs/gateways/zapi.md), `wuzapi` for the session family (docs/gateways/wuzapi.md). What each changes on the wire
is written beside each operation in `tui.api.operations`.
"""

from __future__ import annotations

import enum


class Family(enum.StrEnum):
    """The two endpoint families; a real account is one of them (a profile has one or both)."""

    INSTANCE = "instance"
    SESSION = "session"

    @property
    def gateway(self) -> str:
        """The real gateway that speaks this family."""
        return "Z-API" if self is Family.INSTANCE else "WuzAPI"

    @property
    def label(self) -> str:
        """`session family (WuzAPI)`: how messages name a family to the user."""
        return f"{self.value} family ({self.gateway})"


class InstanceDialect(enum.StrEnum):
    """How the instance family is written: the spec's shapes, Z-API's, or Evolution API's (a gateway of its own,
    tui.gateways.evolution, that also says what the spec puts in the session family)."""

    SPEC = "spec"
    ZAPI = "zapi"
    EVOLUTION = "evolution"


class SessionDialect(enum.StrEnum):
    """How the session family is written: the spec's shapes, or WuzAPI's (webhook updates are sent whole)."""

    SPEC = "spec"
    WUZAPI = "wuzapi"


Dialect = InstanceDialect | SessionDialect
