"""WuzAPI's look-up of a person's LID (`GET /user/lid/{jid}`: asternic/wuzapi routes.go, the handler `GetUserLID`
answering whatsmeow's `Store.LIDs.GetLIDForPN`; its static/api/spec.yml documents the answer as `{jid, lid}`, in
WuzAPI's `{code, data, success}` envelope like every `Respond`)."""

from __future__ import annotations

from tui.api.models.base import Request, Response
from tui.api.models.fields import PhoneJid


class UserLidQuery(Request):
    """The path parameter, checked like a body field so the error names it: a phone number, bare or as its JID."""

    jid: PhoneJid


class UserLid(Response):
    """`{"jid": "5511999999999@s.whatsapp.net", "lid": "81896604192873@lid"}`; `lid` empty when WhatsApp has none."""

    jid: str = ""
    lid: str = ""
