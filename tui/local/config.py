"""Profiles: the non-secret settings of each account, as TOML in the user config dir (one `[profiles.NAME]`
table each). Secrets never live here (see tui.local.secrets). A broken file is reported with its line and left
untouched: nothing is ever saved over it.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from tui.api.dialects import Family, InstanceDialect, SessionDialect
from tui.api.wording import problem_sentence
from tui.local.paths import config_dir
from tui.local.forward_targets import ForwardTargetRefused, check_target

# WhatsApp documents go up to 100 MB and WuzAPI inlines media as base64 inside a form-encoded field: 100 MiB of
# file is 139.8 MB of base64, and percent-encoding its `+` and `/` (1 character in 32) makes the body ~148.6 MB.
# 150 MiB takes that with room for the event around it; a 16 MB video arrives as ~22.7 MB.
DEFAULT_MAX_BODY = 150 * 1024 * 1024
DEFAULT_MEDIA_LIMIT = 512 * 1024 * 1024  # tui.api.media's (not imported here: the app's start would pay for it)

PROFILES_FILE_NAME = "profiles.toml"
RESERVED_NAMES = {"sandbox"}
NAME_RULE = "letters, digits, '-' and '_' only"
DEFAULT_LISTENER_PORT = 8787


class ConfigError(Exception):
    """The profiles file cannot be used; the message names the file and, where known, the line."""


@dataclass(frozen=True)
class InstanceFamily:
    """Where a profile's instance family (Z-API) is, and how it is written; its tokens are secrets."""

    base_url: str
    instance_id: str
    dialect: InstanceDialect


@dataclass(frozen=True)
class SessionFamily:
    """Where a profile's session family (WuzAPI) is, and how it is written; its token and HMAC key are secrets."""

    url: str
    dialect: SessionDialect


# The `profile add` options that give a profile each family (named in MissingFamily's words).
_ADD_FAMILY_OPTIONS: dict[Family, str] = {
    Family.INSTANCE: "--base-url URL --instance-id ID",
    Family.SESSION: "--session-url URL",
}


class MissingFamily(Exception):
    """Something (a screen, a palette entry, `call`, a client) needs a family the profile does not have: nothing
    was sent. The one text for it everywhere, naming the family, its gateway and how to add it."""

    def __init__(self, profile: str, family: Family) -> None:
        text = (f"This profile ({profile}) has no {family.label}; nothing was sent. Add it with "
                f"`gateway-tui profile add {profile} {_ADD_FAMILY_OPTIONS[family]} ...`.")
        super().__init__(text)
        self.profile = profile
        self.family = family


WHOLE_GATEWAYS = {InstanceDialect.EVOLUTION: "Evolution API"}
"""The instance dialects that are one whole gateway (every operation, no session-family settings), by name."""

# Each family's fields in the file: a family is there when any of them is, and then all of them must be.
FAMILY_FIELDS: dict[Family, tuple[str, ...]] = {
    Family.INSTANCE: ("base_url", "instance_id"),
    Family.SESSION: ("session_url",),
}
NO_FAMILY = (
    "no gateway: give the instance family (Z-API: base_url and instance_id), the session family "
    "(WuzAPI: session_url), or both"
)


class Profile(BaseModel):
    """One account. It has the instance family (Z-API), the session family (WuzAPI), or both: a family's fields
    are all set or all absent (None). Read them through `instance` and `session`, which say which it has."""

    model_config = ConfigDict(extra="forbid")

    name: str
    base_url: str | None = None
    instance_id: str | None = None
    session_url: str | None = None
    listener_host: str = "127.0.0.1"
    listener_port: int = Field(default=DEFAULT_LISTENER_PORT, ge=0, le=65535)
    public_url: str = ""
    theme: str = "textual-dark"
    # Webhook listener: the largest body accepted, and whether unsigned calls are refused on every path
    # (/delivery included; see tui/webhooks/families.py).
    max_body: int = Field(default=DEFAULT_MAX_BODY, ge=1024)
    require_signatures: bool = False
    # Received media (WuzAPI's inline files) kept beside the event store: past this many bytes the oldest go.
    media_limit: int = Field(default=DEFAULT_MEDIA_LIMIT, ge=0)
    # How each family is written on the wire: the spec (default), or the real gateway's dialect.
    instance_dialect: InstanceDialect = InstanceDialect.SPEC
    session_dialect: SessionDialect = SessionDialect.SPEC
    forward_to: str = ""  # the user's own app: every accepted event is forwarded there (tui.webhooks.forwarder)
    forward_allow_remote: bool = False
    # Where this profile's secrets are: the private 0600 file (chosen in set-up when there was no keyring, or saved
    # with --insecure-storage) instead of the OS keyring. Every later run uses it without the flag. Not a secret.
    secrets_file: bool = False
    # Every operation that writes (`writes` in tui.api.operations) is refused, in the app and in `call`; written
    # only when true, so files from before stay as they were.
    read_only: bool = False
    # After a disconnect, try the gateway's reconnect this many times (backoff, staggered across the fleet; never
    # a logout or a new code: tui.core.reconnect). 0, the default: no reconnect policy, and nothing written.
    reconnect_tries: int = Field(default=0, ge=0, le=20)

    @field_validator("name")
    @classmethod
    def _usable_name(cls, name: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name):
            raise ValueError(f"1 to 64 characters: {NAME_RULE}")
        if name in RESERVED_NAMES:
            raise ValueError(f"{name!r} is reserved for the built-in sandbox")
        return name

    @field_validator("base_url", "instance_id", "session_url", mode="before")
    @classmethod
    def _blank_is_absent(cls, value: object) -> object:
        """A blank family field (an empty form field, `instance_id = ""`) is the field left out."""
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("instance_id")
    @classmethod
    def _stripped(cls, value: str | None) -> str | None:
        return value.strip() if value is not None else None

    @field_validator("base_url", "session_url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        return check_http_url(url) if url is not None else None

    @model_validator(mode="after")
    def _whole_families(self) -> Profile:
        """At least one family, and each one given whole; a missing field is named where it belongs."""
        present = self.model_dump(include={field for fields in FAMILY_FIELDS.values() for field in fields})
        if not any(value is not None for value in present.values()):
            raise ValueError(NO_FAMILY)
        missing = [
            InitErrorDetails(
                type=PydanticCustomError("value_error", "required for the {family}, with {given}",
                                         {"family": family.label, "given": " and ".join(given)}),
                loc=(field,),
                input=None,
            )
            for family, fields in FAMILY_FIELDS.items()
            if (given := [field for field in fields if present[field] is not None])
            for field in fields
            if present[field] is None
        ]
        if missing:
            raise ValidationError.from_exception_data(type(self).__name__, missing)
        return self

    @property
    def instance(self) -> InstanceFamily | None:
        """The instance family (Z-API), or None when the profile has none."""
        if self.base_url is None or self.instance_id is None:
            return None
        return InstanceFamily(self.base_url, self.instance_id, self.instance_dialect)

    @property
    def session(self) -> SessionFamily | None:
        """The session family (WuzAPI), or None when the profile has none."""
        return SessionFamily(self.session_url, self.session_dialect) if self.session_url is not None else None

    @property
    def families(self) -> tuple[Family, ...]:
        """The families this profile has, instance first."""
        return tuple(family for family in Family if self.has(family))

    @property
    def refuses_writes_as(self) -> str | None:
        """What its gateway clients take as `read_only`: the profile's name when it is read-only, else None."""
        return self.name if self.read_only else None

    def has(self, family: Family) -> bool:
        return (self.instance if family is Family.INSTANCE else self.session) is not None

    @property
    def session_through_instance(self) -> bool:
        """Whether its instance is one whole gateway (Evolution API) that also serves the operations the spec puts in
        the session family, through the instance's own endpoint and key: no session-family settings."""
        return self.session is None and self.instance is not None and self.instance_dialect in WHOLE_GATEWAYS

    def serves(self, family: Family) -> bool:
        """Whether `family`'s operations can be sent on this profile: it has the family, or its instance's gateway
        serves the session family's too (`session_through_instance`)."""
        return self.has(family) or (family is Family.SESSION and self.session_through_instance)

    def require(self, family: Family) -> None:
        """Raises MissingFamily when the profile cannot send `family`'s operations."""
        if not self.serves(family):
            raise MissingFamily(self.name, family)

    @field_validator("public_url")
    @classmethod
    def _optional_http_url(cls, url: str) -> str:
        return check_http_url(url) if url else url

    @model_validator(mode="after")
    def _forward_target(self) -> Profile:
        if self.forward_to:
            try:
                self.forward_to = check_target(
                    self.forward_to, allow_remote=self.forward_allow_remote, how_to_allow="forward_allow_remote = true"
                )
            except ForwardTargetRefused as error:
                raise ValueError(f"forward_to: {error}") from None
        return self

    @field_validator("listener_host")
    @classmethod
    def _host(cls, host: str) -> str:
        if not host or any(character.isspace() for character in host):
            raise ValueError("an address such as 127.0.0.1")
        return host


def check_http_url(url: str) -> str:
    if not re.match(r"^https?://[^\s/:]+(:\d{1,5})?(/\S*)?$", url):
        raise ValueError("an http:// or https:// URL with a host, such as https://api.example.com")
    return url.rstrip("/")


def chosen_profile(requested: str | None) -> str | None:
    """The profile a command uses, as the app picks it: the one asked for, else `default`, else the first in the
    file; None when there is no profile at all. Raises ConfigError for a name the file does not have."""
    names = [profile.name for profile in load_profiles()]
    if requested is not None:
        if requested not in names:
            known = ", ".join(sorted(names)) or "none yet"
            raise ConfigError(f"no profile named {requested!r} (known: {known}); see `gateway-tui profile list`")
        return requested
    if not names:
        return None
    return "default" if "default" in names else names[0]


def secrets_in_file(requested: str | None, insecure_storage: bool) -> bool:
    """Whether the chosen profile's secrets are in the 0600 file: --insecure-storage, or the profile remembers it
    (`Profile.secrets_file`). False when there is no profile. Raises ConfigError as `chosen_profile` does."""
    if insecure_storage:
        return True
    name = chosen_profile(requested)
    return any(profile.secrets_file for profile in load_profiles() if profile.name == name)


def events_store_path(requested: str | None, *, sandbox: bool = False) -> Path:
    """Where `listen` and `events` keep events without --db: the chosen profile's store (the app's), else the
    single `events.sqlite3` of a machine with no profile yet."""
    from tui.local.paths import data_dir, profile_events_path

    if sandbox:
        return profile_events_path("sandbox")
    name = chosen_profile(requested)
    return profile_events_path(name) if name is not None else data_dir() / "events.sqlite3"


def profiles_path() -> Path:
    return config_dir() / PROFILES_FILE_NAME


def load_profiles() -> list[Profile]:
    """Every profile in the file, in file order; [] when there is no file. Raises ConfigError, never a traceback."""
    path = profiles_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read ({error.strerror or error})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}. Fix that line; the file was left as it is.") from None
    tables = data.get("profiles", {})
    if not isinstance(tables, dict) or set(data) - {"profiles"}:
        raise ConfigError(f"{path}: expected only [profiles.NAME] tables. Fix the file; it was left as it is.")
    profiles: list[Profile] = []
    for name, table in tables.items():
        # The table's line only names it in an error: found then, since each look scans the whole file (for every
        # profile, that was quadratic: seconds at 1,000 profiles).
        if not isinstance(table, dict):
            raise ConfigError(f"{path}, line {_line_of_table(text, name)}: profiles.{name} must be a table")
        if "name" in table:
            raise ConfigError(f"{path}, line {_line_of_table(text, name)} ([profiles.{name}]): name: unknown setting "
                              "(the table's name is the profile's)")
        try:
            profiles.append(Profile(name=name, **table))
        except ValidationError as error:
            line = _line_of_table(text, name)
            problems = describe_profile_error(error, line_of=functools.partial(_line_of_key, text, line))
            raise ConfigError(f"{path}, line {line} ([profiles.{name}]): {problems}. The file was left as it is.") from None
    return profiles


def describe_profile_error(error: ValidationError, line_of: Callable[[str], int | None] | None = None) -> str:
    """`field: rule; field: rule` for a Profile that failed validation; the values themselves are not repeated.
    With `line_of`, each field also gets the line it is on in the file."""
    described = []
    for problem in error.errors():
        field = ".".join(str(part) for part in problem.get("loc", ())) or "profile"
        message = problem_sentence(problem)
        if problem.get("type") == "extra_forbidden":
            message = "unknown setting"
        line = line_of(field) if line_of else None
        described.append(f"{field} (line {line}): {message}" if line else f"{field}: {message}")
    return "; ".join(described)


def save_profile(profile: Profile) -> None:
    """Add or replace one profile, keeping the others; atomic. Refuses to touch a broken file."""
    profiles = {existing.name: existing for existing in load_profiles()}
    profiles[profile.name] = profile
    _write(list(profiles.values()))


def remove_profile(name: str) -> bool:
    profiles = load_profiles()
    kept = [profile for profile in profiles if profile.name != name]
    if len(kept) == len(profiles):
        return False
    _write(kept)
    return True


def _write(profiles: list[Profile]) -> None:
    path = profiles_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"profiles": {p.name: _stored_fields(p) for p in profiles}}
    # A unique temporary name in the same directory: two writers never share one, and os.replace stays atomic.
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            tomli_w.dump(document, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _stored_fields(profile: Profile) -> dict[str, object]:
    """The table written for a profile; forwarding settings and the secrets file only when used, so other files
    stay as they were."""
    fields = profile.model_dump(mode="json", exclude={"name"})
    for family, names in FAMILY_FIELDS.items():  # TOML has no null: an absent family is not written
        if not profile.has(family):
            for name in names:
                del fields[name]
            dialect = f"{family.value}_dialect"
            if fields[dialect] == "spec":  # the default, for a family it does not have: left out too
                del fields[dialect]
    if not profile.forward_to and not profile.forward_allow_remote:
        del fields["forward_to"], fields["forward_allow_remote"]
    if not profile.secrets_file:
        del fields["secrets_file"]
    if not profile.read_only:
        del fields["read_only"]
    if not profile.reconnect_tries:
        del fields["reconnect_tries"]
    if profile.media_limit == DEFAULT_MEDIA_LIMIT:  # a default is not written: files stay as the user wrote them
        del fields["media_limit"]
    return fields


def _line_of_table(text: str, name: str) -> int:
    pattern = re.compile(r"^\s*\[\s*profiles\s*\.\s*[\"']?" + re.escape(name) + r"[\"']?\s*\]")
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            return number
    return 1


def _line_of_key(text: str, table_line: int, key: str) -> int | None:
    """The line of `key = …` inside the table that starts at `table_line` (None when not written there)."""
    pattern = re.compile(r"^\s*[\"']?" + re.escape(key) + r"[\"']?\s*=")
    for number, line in enumerate(text.splitlines()[table_line:], start=table_line + 1):
        if line.lstrip().startswith("["):
            return None
        if pattern.match(line):
            return number
    return None
