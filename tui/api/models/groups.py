"""Requests about groups: participants, admins, names, invitation links, metadata, creating one."""

from __future__ import annotations

from pydantic import (
    Field,
)

from tui.api.models.base import Request
from tui.api.models.fields import CommunityId, GroupId, GroupJid, Phone, Text


class AddParticipant(Request):
    groupId: GroupId
    phones: list[Phone] = Field(min_length=1)
    autoInvite: bool = False


class UpdateGroupName(Request):
    groupId: GroupId
    groupName: Text


class AddAdmin(Request):
    communityId: CommunityId
    phones: list[Phone] = Field(min_length=1)


class RedefineInvitationLink(Request):
    communityId: CommunityId
    groupsPhones: list[GroupId] | None = None


class GroupMetadataQuery(Request):
    """Operation 10's path parameter, checked like a body field so the error names it."""

    GROUP_PHONE_NUMBER: GroupId


class GroupInfoRequest(Request):
    GroupJID: GroupJid


class GroupCreate(Request):
    name: Text
    participants: list[Phone] = Field(min_length=1)
