"""Evolution's privacy settings are written six at once (docs/gateways/evolution.md §2.7): POST
/chat/updatePrivacySettings requires `readreceipts`, `profile`, `status`, `online`, `last` and `groupadd`, so
changing one is reading the six with GET /chat/fetchPrivacySettings first and sending them back with that one
changed. Evolution keeps no list of excepted contacts (WhatsApp keeps it on the phone): a request naming some is
refused before anything is sent."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ConfigDict

from tui.api import models as m
from tui.api import operations as ops
from tui.api.adapter import ReadFirst
from tui.api.errors import GatewayError
from tui.api.operations import Body, DialectRefusal, Operation, WireRequest

Req = TypeVar("Req", bound=m.Request)
Res = TypeVar("Res", bound=BaseModel)

# Our scopes in Evolution's words (§2.7).
SCOPES = {m.PrivacyScope.ALL: "all", m.PrivacyScope.CONTACT: "contacts",
          m.PrivacyScope.CONTACT_BLACKLIST: "contact_blacklist", m.PrivacyScope.NONE: "none"}
PRIVACY_READ = WireRequest(("chat", "fetchPrivacySettings", "{instance}"), None)


class EvolutionPrivacy(BaseModel):
    """GET /chat/fetchPrivacySettings's answer: the six settings, in Evolution's words."""

    model_config = ConfigDict(extra="ignore")

    readreceipts: str
    profile: str
    status: str
    online: str
    last: str
    groupadd: str


def privacy_setting(request: m.Request) -> tuple[str, str]:
    """(Evolution's key, its value) of the one setting `request` changes; DialectRefusal for excepted contacts."""
    if isinstance(request, m.PrivacyGroupAdd):
        key, scope = "groupadd", request.type
    elif isinstance(request, m.PrivacyLastSeen):
        key, scope = "last", request.visualizationType
    else:
        raise TypeError(f"{type(request).__name__} is no privacy setting")
    if request.contactsBlacklist:
        raise DialectRefusal("contactsBlacklist", "cannot be sent: Evolution API keeps no list of excepted contacts "
                                                  "(set it on the phone); send the scope alone")
    return key, SCOPES[scope]


def placeholder_body(request: m.Request) -> Body:
    """The write's body before the read: the one setting (checked); `privacy_read_first` sends the whole six."""
    key, value = privacy_setting(request)
    return {key: value}


def privacy_read_first(op: Operation[Req, Res], request: Req) -> ReadFirst:
    key, value = privacy_setting(request)

    def merge(current: BaseModel) -> Body:
        if not isinstance(current, EvolutionPrivacy):
            raise TypeError(f"fetchPrivacySettings answers EvolutionPrivacy, not {type(current).__name__}")
        return {**current.model_dump(), key: value}

    def failed(error: GatewayError) -> str:
        return (f"Not sent: Evolution takes all six privacy settings at once, and reading the current ones failed "
                f"({error.message}); nothing was changed")

    return ReadFirst(operation=f"{op.id.value} (read before writing all six)", read=PRIVACY_READ,
                     answer=EvolutionPrivacy, merge=merge, failed=failed)


PRIVACY_OPERATIONS = (ops.OperationId.PRIVACY_GROUP_ADD, ops.OperationId.PRIVACY_LAST_SEEN)
