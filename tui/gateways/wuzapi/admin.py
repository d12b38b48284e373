"""WuzAPI's admin API, `/admin/users` (docs/gateways/wuzapi.md §2.10; asternic/wuzapi handlers.go,
tests/api/wuzapi-openapi/spec.yml): the admin token sent bare in `Authorization`. The answers carry every user's
token: masked by key in what the request log records, and never in a user's repr."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any
from urllib.parse import quote

from pydantic import BeforeValidator, Field, field_validator

from tui.api.admin import AdminClient, AdminOperation
from tui.api.models import ListAnswer, Response
from tui.api.redaction import MASK


def _number_as_text(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


# A user's id: the database's integer key in API.md's examples and in WuzAPI's code until its newest, which sends
# text (docs/gateways/wuzapi.md §2.10); read as text either way.
WuzapiUserId = Annotated[str, BeforeValidator(_number_as_text)]


class WuzapiUser(Response):
    """One user of `GET /admin/users` (or the `data` of `POST /admin/users`): `events` is a comma string."""

    id: WuzapiUserId
    name: str = ""
    token: str = Field(default="", repr=False)
    webhook: str = ""
    jid: str = ""
    connected: bool = False
    loggedIn: bool = False
    events: str = ""
    expiration: int = 0

    @field_validator("name", "token", "webhook", "jid", "events", mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value


class WuzapiUsers(ListAnswer):
    items: list[WuzapiUser]


class DeletedUser(Response):
    """`DELETE /admin/users/{id}`: the newest WuzAPI answers with the id, older ones only with `Details`."""

    id: WuzapiUserId = ""


@dataclass(frozen=True, repr=False)
class NewUser:
    """`POST /admin/users`: WuzAPI does not make tokens up, the admin chooses each one. `events` as a list
    (sent comma-joined, WuzAPI's form); no `hmacKey`: WuzAPI does not sign with one given here until it restarts,
    so a user's key is set through its own `/session/hmac/config`."""

    name: str
    token: str = field(repr=False)
    webhook: str = ""
    events: tuple[str, ...] = ()

    def wire(self) -> dict[str, Any]:
        body: dict[str, Any] = {"name": self.name, "token": self.token}
        if self.webhook:
            body["webhook"] = self.webhook
        if self.events:
            body["events"] = ",".join(self.events)
        return body

    def __repr__(self) -> str:
        return f"NewUser(name={self.name!r}, token={MASK!r}, webhook={self.webhook!r}, events={self.events!r})"



class WuzapiAdminClient(AdminClient):
    """WuzAPI's admin API: `Authorization: <admin token>` (the bare token, WUZAPI_ADMIN_TOKEN)."""

    def _authorization(self) -> str:
        return self.credentials.token

    async def list_users(self) -> list[WuzapiUser]:
        answer: WuzapiUsers = await self._call(AdminOperation.LIST_USERS, "GET", "/admin/users", WuzapiUsers)
        return answer.items

    async def create_user(self, user: NewUser) -> WuzapiUser:
        """201 with the user (its new `id`); 409 when a user already has this token."""
        created: WuzapiUser = await self._call(
            AdminOperation.CREATE_USER, "POST", "/admin/users", WuzapiUser, body=user.wire())
        return created

    async def delete_user(self, user_id: str) -> DeletedUser:
        """Removes the user from WuzAPI's database (not its WhatsApp session: that is `/full`, not offered)."""
        deleted: DeletedUser = await self._call(
            AdminOperation.DELETE_USER, "DELETE", "/admin/users/" + quote(user_id, safe=""), DeletedUser)
        return deleted if deleted.id else DeletedUser(id=user_id)
