"""Where a profile's secrets live: the OS keyring (service `gateway-tui`, user `<profile>:<secret>`), an opt-in
0600 file (`--insecure-storage`), or memory (the sandbox). Environment variables override stored values for a
run. Every call here may block on D-Bus: callers on the event loop use `asyncio.to_thread`.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from tui.api.dialects import Family, InstanceDialect
from tui.local.paths import config_dir

if TYPE_CHECKING:
    from tui.local.config import Profile

T = TypeVar("T")

KEYRING_SERVICE = "gateway-tui"
INSECURE_FILE_NAME = "secrets-insecure.json"
MASK = "••••"


WITHOUT_CLIENT_TOKEN = frozenset({InstanceDialect.EVOLUTION})
"""Instance-family dialects whose gateway has no Client-Token: never asked for, stored or required."""


class SecretName(StrEnum):
    CLIENT_TOKEN = "client-token"
    INSTANCE_TOKEN = "instance-token"
    SESSION_TOKEN = "session-token"
    HMAC_KEY = "hmac-key"

    @property
    def env_var(self) -> str:
        return "GATEWAY_TUI_" + self.name

    @property
    def label(self) -> str:
        return {
            SecretName.CLIENT_TOKEN: "Client-Token",
            SecretName.INSTANCE_TOKEN: "instance token",
            SecretName.SESSION_TOKEN: "session token",
            SecretName.HMAC_KEY: "HMAC key",
        }[self]

    @property
    def family(self) -> Family:
        """The family the secret belongs to: the tokens of Z-API's instance, WuzAPI's token and its webhook
        signing key (the session family configures HMAC signing)."""
        return Family.INSTANCE if self in (SecretName.CLIENT_TOKEN, SecretName.INSTANCE_TOKEN) else Family.SESSION

    @classmethod
    def of(cls, families: Iterable[Family], instance_dialect: InstanceDialect | None = None) -> list[SecretName]:
        """The secrets of these families, in the usual order; none a gateway lacks (Evolution API's instance has
        one key, its `apikey`, kept as the instance token, and no Client-Token)."""
        wanted = set(families)
        lacking = {SecretName.CLIENT_TOKEN} if instance_dialect in WITHOUT_CLIENT_TOKEN else set()
        return [name for name in cls if name.family in wanted and name not in lacking]


class GatewaySecret(StrEnum):
    """A gateway account's own credential, for its admin API: not a profile's (a profile is one WhatsApp account),
    so stored under the gateway's URL instead of a profile name (`gateway_scope`), and never among the secrets a
    profile lists or asks for (those iterate SecretName)."""

    ADMIN_TOKEN = "admin-token"  # WuzAPI's WUZAPI_ADMIN_TOKEN (/admin/users), Evolution's global API key (fetchInstances)
    PARTNER_TOKEN = "partner-token"  # Z-API's partner (integrator) token

    @property
    def env_var(self) -> str:
        return "GATEWAY_TUI_" + self.name

    @property
    def label(self) -> str:
        return {GatewaySecret.ADMIN_TOKEN: "WuzAPI admin token", GatewaySecret.PARTNER_TOKEN: "Z-API partner token"}[self]


class ListenerSecret(StrEnum):
    """A secret of the profile's own making, never typed by the user (so not among the SecretName a profile lists or
    asks for): stored under the profile like its tokens."""

    DELIVERY_PATH = "delivery-path-secret"  # the segment of a Z-API profile's webhook URL (listener_paths)

    @property
    def env_var(self) -> str:
        return "GATEWAY_TUI_" + self.name + "_SECRET"

    @property
    def label(self) -> str:
        return "webhook URL secret"


StoredSecret = SecretName | GatewaySecret | ListenerSecret

PATH_SECRET_BYTES = 24
"""secrets.token_urlsafe's bytes for a Z-API profile's webhook URL secret: 192 bits, 32 URL-safe characters."""


def gateway_scope(url: str) -> str:
    """Where a gateway's own secret is stored (the keyring's `<scope>:<secret>`): its URL without a trailing
    slash, marked so no profile name (letters, digits, - and _) can be it."""
    return "gateway@" + url.strip().rstrip("/")


class KeyringUnavailable(Exception):
    """No usable OS keyring. The message says why and what to do; never followed by a silent fallback."""


class NoKeyring(KeyringUnavailable):
    """There is no OS keyring at all (as opposed to one that is locked or refuses): nothing can be stored in it,
    and nothing was."""


class SecretStore(Protocol):
    kind: str

    def get(self, profile: str, name: StoredSecret) -> str | None: ...

    def set(self, profile: str, name: StoredSecret, value: str) -> None: ...

    def delete(self, profile: str, name: StoredSecret) -> None: ...


def keyring_username(profile: str, name: StoredSecret) -> str:
    return f"{profile}:{name.value}"


class MemorySecrets:
    """Throwaway secrets (the sandbox profile): gone when the process ends."""

    kind = "memory"

    def __init__(self) -> None:
        self._values: dict[tuple[str, StoredSecret], str] = {}

    def __repr__(self) -> str:
        return f"<MemorySecrets {len(self._values)} entries>"

    def get(self, profile: str, name: StoredSecret) -> str | None:
        return self._values.get((profile, name))

    def set(self, profile: str, name: StoredSecret, value: str) -> None:
        self._values[(profile, name)] = value

    def delete(self, profile: str, name: StoredSecret) -> None:
        self._values.pop((profile, name), None)


class EnvironmentOnlySecrets:
    """No keyring, but GATEWAY_TUI_* variables are set: this run takes its secrets from them (resolve_secrets reads
    the environment first) and nothing can be stored; saving one says why instead of pretending."""

    kind = "environment"

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return "<EnvironmentOnlySecrets>"

    def get(self, profile: str, name: StoredSecret) -> str | None:
        return None

    def set(self, profile: str, name: StoredSecret, value: str) -> None:
        raise KeyringUnavailable(f"{self.reason} (This run takes its secrets from the environment.)")

    def delete(self, profile: str, name: StoredSecret) -> None:
        raise KeyringUnavailable(f"{self.reason} (This run takes its secrets from the environment.)")


def secrets_in_environment(environ: Mapping[str, str] | None = None) -> list[SecretName]:
    environ = os.environ if environ is None else environ
    return [name for name in SecretName if environ.get(name.env_var)]


class KeyringSecrets:
    kind = "keyring"

    def __init__(self) -> None:
        import keyring

        self._keyring = keyring

    def __repr__(self) -> str:
        return f"<KeyringSecrets backend={type(self._keyring.get_keyring()).__name__}>"

    def get(self, profile: str, name: StoredSecret) -> str | None:
        return self._call(self._keyring.get_password, KEYRING_SERVICE, keyring_username(profile, name))

    def set(self, profile: str, name: StoredSecret, value: str) -> None:
        self._call(self._keyring.set_password, KEYRING_SERVICE, keyring_username(profile, name), value)

    def delete(self, profile: str, name: StoredSecret) -> None:
        from keyring.errors import PasswordDeleteError

        try:
            self._call(self._keyring.delete_password, KEYRING_SERVICE, keyring_username(profile, name))
        except PasswordDeleteError:
            pass  # nothing stored: already the state we want

    @staticmethod
    def _call(function: Callable[..., T], *args: object) -> T:
        from keyring.errors import KeyringError, NoKeyringError, PasswordDeleteError

        try:
            return function(*args)
        except PasswordDeleteError:
            raise
        except NoKeyringError as error:
            raise NoKeyring(_no_backend_text()) from error
        except KeyringError as error:
            raise KeyringUnavailable(
                f"The OS keyring refused the request ({type(error).__name__}: {error}). Unlock it and retry."
            ) from error


class InsecureFileSecrets:
    """Secrets in a JSON file readable by the owner only: used only when the user opts in."""

    kind = "insecure-file"

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or config_dir() / INSECURE_FILE_NAME
        # The file as last parsed, with what identifies that version of it: opening 1,000 accounts reads 2,000
        # secrets, and parsing the whole file for each was quadratic (seconds of the app's start).
        self._parsed: tuple[tuple[int, int, int], dict[str, str]] | None = None

    def __repr__(self) -> str:
        return f"<InsecureFileSecrets {self.path}>"

    def get(self, profile: str, name: StoredSecret) -> str | None:
        return self._read().get(keyring_username(profile, name))

    def set(self, profile: str, name: StoredSecret, value: str) -> None:
        values = self._read()
        values[keyring_username(profile, name)] = value
        self._write(values)

    def delete(self, profile: str, name: StoredSecret) -> None:
        values = self._read()
        if values.pop(keyring_username(profile, name), None) is not None:
            self._write(values)

    def _read(self) -> dict[str, str]:
        """The file's secrets, parsed again only when it changed (every write replaces it: a new inode; another
        process's too)."""
        try:
            facts = self.path.stat()
        except FileNotFoundError:
            return {}
        version = (facts.st_ino, facts.st_mtime_ns, facts.st_size)
        if self._parsed is not None and self._parsed[0] == version:
            return dict(self._parsed[1])
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as error:  # the message names the place, never the content
            raise KeyringUnavailable(
                f"{self.path}: not valid JSON (line {error.lineno}); fix or delete it, then add the secrets again."
            ) from None
        values = {str(key): str(value) for key, value in data.items()} if isinstance(data, dict) else {}
        self._parsed = (version, values)
        return dict(values)

    def _write(self, values: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # mkstemp creates it 0600 under a unique name, so the secrets are never readable by others, not even
        # for an instant, and two writers never share a temporary file.
        descriptor, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump(values, handle, indent=2, sort_keys=True)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporary, 0o600)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def _no_backend_text() -> str:
    return (
        "No OS keyring is available (no Secret Service is running or it is locked; usual over SSH, in "
        "containers and CI), so gateway-tui cannot store secrets safely. Install and unlock a Secret Service "
        "(e.g. gnome-keyring or KeePassXC), or opt in with --insecure-storage to keep them in a file readable "
        "only by you. Environment variables (GATEWAY_TUI_CLIENT_TOKEN, ...) also work for a single run."
    )


def open_secret_store(insecure: bool = False) -> SecretStore:
    """The store for a real profile. Raises KeyringUnavailable when there is no usable keyring (and not insecure)."""
    if insecure:
        return InsecureFileSecrets()
    import keyring
    from keyring.backends import fail

    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 1) <= 0:
        raise NoKeyring(_no_backend_text())
    return KeyringSecrets()


def open_secret_store_for_run(insecure: bool = False, environ: Mapping[str, str] | None = None) -> SecretStore:
    """The store for one run of a real profile: as `open_secret_store`, but with no keyring and GATEWAY_TUI_*
    variables set, the run goes on with them (as the no-keyring message promises) instead of refusing."""
    try:
        return open_secret_store(insecure)
    except KeyringUnavailable as error:
        if not secrets_in_environment(environ):
            raise
        return EnvironmentOnlySecrets(str(error))


def stored_secret(profile: str, name: StoredSecret, insecure: bool = False) -> str | None:
    """The profile's stored secret wherever it was kept: the OS keyring when there is one, else (or when the
    keyring has none) the opt-in private file. With `insecure` (--insecure-storage), the private file only. None
    when neither holds it: a missing keyring is not an error here, only one that exists and refuses, and then only
    if the private file does not hold the secret either."""
    private = InsecureFileSecrets()
    if insecure:
        return private.get(profile, name)
    refused: KeyringUnavailable | None = None
    try:
        value = open_secret_store().get(profile, name)
    except NoKeyring:
        value = None
    except KeyringUnavailable as error:  # a keyring that is locked or refuses may hold it: say so if nothing else does
        value, refused = None, error
    if value:
        return value
    value = private.get(profile, name) if private.path.exists() else None
    if value is None and refused is not None:
        raise refused
    return value


def resolve_secrets(
    profile: str, store: SecretStore | None, environ: Mapping[str, str] | None = None,
    names: Iterable[SecretName] = SecretName,
) -> dict[SecretName, str | None]:
    """Each secret for this run (`names`: only these): the environment variable when set, else the stored value."""
    return {name: resolve_secret(profile, store, name, environ) for name in names}


def secrets_to_open(families: Iterable[Family]) -> list[SecretName]:
    """The secrets an account of these families is opened with: the tokens of its own families, and the HMAC key
    whatever its families (the listener verifies its webhooks with it). Each is a keyring round trip: a
    session-only profile reads two, not four."""
    wanted = set(families)
    return [name for name in SecretName if name.family in wanted or name is SecretName.HMAC_KEY]


def resolve_secret(
    profile: str, store: SecretStore | None, name: StoredSecret, environ: Mapping[str, str] | None = None
) -> str | None:
    """One secret for this run: the environment variable when set, else the stored value."""
    environ = os.environ if environ is None else environ
    from_env = environ.get(name.env_var)
    return from_env if from_env else (store.get(profile, name) if store is not None else None)


def delivery_path_secret(profile: str, store: SecretStore | None, environ: Mapping[str, str] | None = None, *,
                         create: bool = True) -> str | None:
    """The secret segment of a Z-API profile's webhook URL (tui.api.listener_paths.PATH_SECRET_SEGMENT): its
    environment variable, else the stored one; with `create`, one is made and stored when there is none. None when
    there is none and none could be stored (no store, or one that keeps nothing: the URL then has no secret)."""
    import secrets

    found = resolve_secret(profile, store, ListenerSecret.DELIVERY_PATH, environ)
    if found or not create or store is None or isinstance(store, EnvironmentOnlySecrets):
        return found or None
    made = secrets.token_urlsafe(PATH_SECRET_BYTES)
    store.set(profile, ListenerSecret.DELIVERY_PATH, made)
    return made


def run_hmac_key(profile: str | None, insecure: bool = False, environ: Mapping[str, str] | None = None) -> str | None:
    """The HMAC key a run verifies and signs webhooks with, found as the app finds it: GATEWAY_TUI_HMAC_KEY, else
    the profile's stored key (keyring, or the 0600 file with `insecure`); None without either, or without a profile.
    Raises KeyringUnavailable when the profile's secrets cannot be read: a caller must not go on as if it had no key
    (a listener would then take forged events). `environ`: see `run_environment`."""
    environ = os.environ if environ is None else environ
    from_env = environ.get(SecretName.HMAC_KEY.env_var)
    if from_env or profile is None:
        return from_env or None
    store = open_secret_store_for_run(insecure, environ)
    return resolve_secret(profile, store, SecretName.HMAC_KEY, environ) or None


def run_instance_key(profile: str, insecure: bool = False, environ: Mapping[str, str] | None = None) -> str | None:
    """An Evolution profile's instance key, which its webhook deliveries carry as `apikey` (the listener compares
    them): GATEWAY_TUI_INSTANCE_TOKEN, else the profile's stored instance token; None without either. Raises
    KeyringUnavailable as run_hmac_key does."""
    environ = os.environ if environ is None else environ
    from_env = environ.get(SecretName.INSTANCE_TOKEN.env_var)
    if from_env:
        return from_env
    store = open_secret_store_for_run(insecure, environ)
    return resolve_secret(profile, store, SecretName.INSTANCE_TOKEN, environ) or None


def profile_path_secret(profile: Profile, store: SecretStore | None,
                        environ: Mapping[str, str] | None = None) -> str | None:
    """`profile`'s webhook URL secret when its instance family speaks Z-API (the app, `listen`, the doctor and
    `fleet import` all take it here), made and stored the first time; None for any other profile, or when there is
    no store that keeps it (no keyring and no 0600 file: its webhooks then point at the plain `/delivery`, as before)."""
    from tui.api.listener_paths import wants_path_secret

    if Family.INSTANCE not in profile.families or not wants_path_secret(profile.instance_dialect):
        return None
    try:
        return delivery_path_secret(profile.name, store, environ)
    except KeyringUnavailable:
        return None


def run_path_secret(profile: Profile, insecure: bool = False, environ: Mapping[str, str] | None = None) -> str | None:
    """profile_path_secret for a run of `listen` or `doctor`, in the store the run reads its other secrets from."""
    try:
        store = open_secret_store_for_run(insecure, environ)
    except KeyringUnavailable:
        return None
    return profile_path_secret(profile, store, environ)


def run_environment(open_profiles: int, warn: Callable[[str], None]) -> Mapping[str, str]:
    """The environment a run's secrets are resolved with (`environ` of the functions above). The GATEWAY_TUI_*
    secret variables stand for one profile's secrets: with one profile open they apply (os.environ); with several
    (`listen --all`) nobody could tell whose they are, so they are left out, each profile using its own stored
    secrets, and `warn` is called once, in one line, when any of them is set."""
    if open_profiles <= 1:
        return os.environ
    ignored = secrets_in_environment()
    if ignored:
        names = ", ".join(name.env_var for name in ignored)
        verb = "is" if len(ignored) == 1 else "are"
        warn(f"warning: {names} {verb} ignored: {open_profiles} profiles are open, each with its own stored secrets")
    left_out = {name.env_var for name in (*SecretName, *ListenerSecret)}
    return {variable: value for variable, value in os.environ.items() if variable not in left_out}


def secret_sources(profile: str, store: SecretStore | None, environ: Mapping[str, str] | None = None) -> dict[SecretName, str]:
    """Where each secret comes from ("environment", "stored", "not set"), for listings that must not show values."""
    environ = os.environ if environ is None else environ
    sources: dict[SecretName, str] = {}
    for name in SecretName:
        if environ.get(name.env_var):
            sources[name] = "environment"
        elif store is not None and store.get(profile, name):
            sources[name] = "stored"
        else:
            sources[name] = "not set"
    return sources


def mask_secret(value: str | None) -> str:
    """`••••abcd`: enough to recognise a secret, never enough to use it. Short secrets show no characters."""
    if not value:
        return "not set"
    return MASK + value[-4:] if len(value) >= 12 else MASK


def store_then_save(profile: Profile, store: SecretStore, values: dict[SecretName, str | None]) -> None:
    """Secrets first (None: removed), then the profile; if either step fails, the secrets go back to what they
    were. (`profile add` and `fleet import` save a profile with its secrets this way.)"""
    from tui.local.config import save_profile

    previous = {name: store.get(profile.name, name) for name in values}
    try:
        for name, value in values.items():
            if value is None:
                store.delete(profile.name, name)
            else:
                store.set(profile.name, name, value)
        save_profile(profile)
    except BaseException:
        for name, old in previous.items():
            try:
                if old is None:
                    store.delete(profile.name, name)
                else:
                    store.set(profile.name, name, old)
            except KeyringUnavailable:
                pass  # the original error below says what went wrong with the keyring
        raise
