"""Evolution API (github EvolutionAPI/evolution-api, v2), a gateway of its own: docs/gateways/evolution.md.

One Evolution profile is one gateway: the instance's name in every path, its key in the `apikey` header, no
Client-Token. It is spoken as an instance-family dialect (`--instance-dialect evolution`); the operations the spec
puts in the session family are written by these same forms and sent through the instance's endpoint with its key
(`session_through_instance`: the profile needs no session-family settings)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TypeVar

from pydantic import BaseModel

from tui.api import models as m
from tui.api.adapter import Endpoint, FamilyAdapter, ReadFirst
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.dialects import Family, InstanceDialect
from tui.api.listener_paths import EVOLUTION_PATH
from tui.api.operations import Operation, WireRequest
from tui.gateways.evolution.answers import read_evolution_answer
from tui.gateways.evolution.deliveries import EVOLUTION_DELIVERIES
from tui.gateways.evolution.media import EVOLUTION_MEDIA_RULES
from tui.gateways.evolution.privacy import PRIVACY_OPERATIONS, privacy_read_first
from tui.gateways.evolution.wire import QUERIES, evolution_forms

Req = TypeVar("Req", bound=m.Request)
Res = TypeVar("Res", bound=BaseModel)

INSTANCE_PLACEHOLDER = "instance"


def evolution_endpoint(base_url: str, instance_name: str, api_key: str) -> Endpoint:
    """Routes hang off the server's root; the instance name fills `{instance}`; the key goes as `apikey` (§1.1)."""
    url = base_url.rstrip("/")
    return Endpoint(url=url, shown_url=url, headers={"apikey": api_key, "Content-Type": "application/json"},
                    placeholders={INSTANCE_PLACEHOLDER: instance_name})


@dataclass(frozen=True)
class EvolutionAdapter(FamilyAdapter):
    """Evolution's own endpoint, and its own query: every operation it writes goes on a route of its own, whose
    parameters (if any) are Evolution's, never the table row's (`page`/`pageSize` are body fields there)."""

    def wire(self, op: Operation[Req, Res], request: Req) -> WireRequest:
        wire = self.forms.wire(op, request)
        query = QUERIES.get(op.id)
        return replace(wire, query=query(request) if query is not None else {})

    def read_first(self, op: Operation[Req, Res], request: Req) -> ReadFirst | None:
        """A privacy setting: Evolution takes all six at once, so the others are read first (privacy.py)."""
        if op.id in PRIVACY_OPERATIONS:
            return privacy_read_first(op, request)
        return None

    def instance_endpoint(self, credentials: InstanceCredentials) -> Endpoint:
        return evolution_endpoint(credentials.base_url, credentials.instance_id, credentials.instance_token)

    def session_endpoint(self, credentials: SessionCredentials) -> Endpoint:
        # Never a second set of settings: an Evolution profile is its instance (module docstring).
        raise NotImplementedError("Evolution API is spoken through the instance family's profile settings")


EVOLUTION = EvolutionAdapter(name="Evolution API", dialects={Family.INSTANCE: InstanceDialect.EVOLUTION},
                             forms=evolution_forms(), read_answer=read_evolution_answer,
                             media_rules=EVOLUTION_MEDIA_RULES, deliveries=EVOLUTION_DELIVERIES,
                             instance_listener_path=EVOLUTION_PATH, session_through_instance=True)
