"""First run: no profile yet. One form for the profile and its secrets, grouped by gateway: Z-API (the instance
family), WuzAPI (the session family), or both; a gateway whose fields are left blank is not part of the profile, and
none of its secrets is asked for. The profile goes to the config file, the secrets to the OS keyring (or the opt-in 0600 file, which the profile then remembers: later runs and `locate` find
it without --insecure-storage). Nothing is saved unless everything is valid and the secret store is usable.
Dismisses with the new profile's name, or False when cancelled. Enter moves to the next field, and from the last
one to Save: only ctrl+s or the Save button saves.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from textual import on, work
from textual.app import ComposeResult
from textual.actions import SkipAction
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, Static

from tui.api.dialects import Family
from tui.api.models import HMAC_KEY_MIN_LENGTH, field_errors
from tui.local.secrets import SecretName
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.forms import FieldProblems, FieldRow, Form, TextInput, validated, value_of

if TYPE_CHECKING:
    from tui.ui.widgets.gateway_app import AppState

COMMON_FIELDS = (
    ("name", "Profile name", "work"),
    ("listener_port", "Webhook listener port (0: any free port)", "8787"),
    ("public_url", "Public webhook URL the gateway calls (optional, e.g. a tunnel)", "https://my-tunnel.example.com"),
)
# Each gateway's part of the form: its settings, then its secrets (tui.local.config.FAMILY_FIELDS names the same fields).
FAMILY_FIELDS = {
    Family.INSTANCE: (
        ("base_url", "Instance-family base URL", "https://api.example.com"),
        ("instance_id", "Instance id", "3C01A1B2C3D4E5F6"),
    ),
    Family.SESSION: (("session_url", "Session-family base URL", "https://wuzapi.example.com"),),
}
PROFILE_FIELDS = COMMON_FIELDS + FAMILY_FIELDS[Family.INSTANCE] + FAMILY_FIELDS[Family.SESSION]
NO_GATEWAY = "fill in Z-API's fields (the instance family), WuzAPI's (the session family), or both"


def form_order() -> list[str]:
    """The form's fields as Tab and Enter go through them: the profile, then each gateway's settings and secrets."""
    order = [field for field, _, _ in COMMON_FIELDS]
    for family, fields in FAMILY_FIELDS.items():
        order += [field for field, _, _ in fields] + [name.value for name in SecretName.of([family])]
    return order


class SetupScreen(Screen[str | bool]):
    BINDINGS = [
        Binding("ctrl+s", "save", "Save profile", id="setup.save"),
        Binding("escape", "cancel", "Cancel", id="setup.cancel"),
        # Before the field gets the key (priority): the focus moves at once, so what is typed right after Enter goes
        # into the next field even when the app is slow to handle it (a submitted message would arrive too late).
        Binding("enter", "next_field", "Next field", show=False, priority=True, id="setup.next"),
    ]

    DEFAULT_CSS = """
    SetupScreen { align: center top; }
    SetupScreen > VerticalScroll { width: 100; max-width: 100%; padding: 1 2; }
    SetupScreen .title { text-style: bold; color: $accent; }
    SetupScreen .intro { color: $text-muted; margin-bottom: 1; }
    SetupScreen .group { text-style: bold; margin-top: 1; }
    SetupScreen .actions { height: auto; margin-top: 1; }
    SetupScreen .actions Button { margin-right: 2; }
    SetupScreen #setup-way-out { display: none; }
    SetupScreen #setup-way-out.-shown { display: block; }
    """

    def __init__(self, state: AppState, *, first_run: bool = True) -> None:
        """`state`: where the run keeps secrets (the 0600 file or the keyring); the way out below switches it."""
        super().__init__()
        self.state = state
        self.first_run = first_run

    def compose(self) -> ComposeResult:
        insecure = self.state.insecure_storage
        where = "a file readable only by you (insecure storage)" if insecure else "the OS keyring only"
        gateways = "Fill in Z-API's part, WuzAPI's, or both; leave the other blank."
        intro = (f"No profile yet. Enter your gateway account below. {gateways} Secrets go to {where}. No account? "
                 "Quit (ctrl+q) and run `gateway-tui --sandbox` to try everything on a built-in sandbox gateway."
                 if self.first_run else
                 f"Add another gateway account as a new profile. {gateways} Secrets go to {where}. Escape leaves "
                 "without saving.")
        with VerticalScroll():
            yield Static("Set up gateway-tui" if self.first_run else "Add a profile", classes="title")
            yield Static(Content(intro), classes="intro")
            # Problems that stop the save show here, at the top, with the way out under them.
            yield ErrorLine(id="setup-status")
            with Horizontal(classes="actions", id="setup-way-out"):
                yield Button("Keep secrets in a private file instead (0600) and save", id="setup-insecure",
                             variant="warning")
            with Form(id="setup-form"):
                yield Static("Profile", classes="group")
                for field, label, placeholder in COMMON_FIELDS:
                    value = "8787" if field == "listener_port" else ""
                    yield FieldRow(label, TextInput(id=f"setup-{field}", placeholder=placeholder, value=value),
                                   field=field)
                for family, fields in FAMILY_FIELDS.items():
                    other = Family.SESSION if family is Family.INSTANCE else Family.INSTANCE
                    yield Static(Content.assemble(
                        f"{family.gateway}: the {family.value} family", (f"  blank for {other.gateway} only", "dim")
                    ), classes="group")
                    for field, label, placeholder in fields:
                        yield FieldRow(label, TextInput(id=f"setup-{field}", placeholder=placeholder), field=field)
                    for name in SecretName.of([family]):
                        optional = " (optional)" if name is SecretName.HMAC_KEY else ""
                        yield FieldRow(f"{name.label}{optional}", TextInput(id=f"setup-{name.value}", password=True),
                                       field=name.value)
            with Horizontal(classes="actions"):
                yield Button("Save (ctrl+s)", id="setup-save", variant="primary")
                yield Button("Cancel (esc)", id="setup-cancel")
        yield Footer()

    @property
    def status(self) -> ErrorLine:
        return self.query_one("#setup-status", ErrorLine)

    def on_mount(self) -> None:
        self.query_one("#setup-name", Input).focus()

    def action_next_field(self) -> None:
        """Enter in a field moves on, as in the other forms: to the next field, and from the last one to Save (never
        saves). On a button, Enter presses it."""
        fields = list(self.query_one("#setup-form", Form).query(Input))
        if self.focused not in fields:
            raise SkipAction()
        if self.focused is fields[-1]:
            self.set_focus(self.query_one("#setup-save", Button))
        else:
            self.focus_next()

    @on(Button.Pressed, "#setup-cancel")
    def action_cancel(self) -> None:
        self.dismiss(False)

    @on(Button.Pressed, "#setup-insecure")
    def use_insecure_storage(self) -> None:
        """No keyring: switch this run to the 0600 file (as --insecure-storage would) and save again (the app tells
        the runtime when set-up closes)."""
        self.state.insecure_storage = True
        self.query_one("#setup-way-out").remove_class("-shown")
        self.status.clear()
        self.action_save()

    @on(Button.Pressed, "#setup-save")
    def action_save(self) -> None:
        form = self.query_one("#setup-form", Form)
        built = validated(form.rows(), self._build, fallback=self.status.show_error)
        if built is not None:
            self._save(*built)

    def _build(self) -> tuple[Any, dict[SecretName, str]]:
        from tui.local.config import Profile

        values = {field: value_of(self.query_one(f"#setup-{field}")) for field, _, _ in PROFILE_FIELDS}
        secrets = {name: self.query_one(f"#setup-{name.value}", Input).value for name in SecretName}
        # A gateway is part of the profile when anything of it is filled in; then all of it is required.
        given = [
            family for family, fields in FAMILY_FIELDS.items()
            if any(values[field] for field, _, _ in fields) or any(secrets[name] for name in SecretName.of([family]))
        ]
        if not given:
            raise FieldProblems({"gateway": NO_GATEWAY})
        problems = {
            name.value: "required"
            for name in SecretName.of(given)
            if not secrets[name] and name is not SecretName.HMAC_KEY
        }
        problems |= {
            field: f"required for the {family.label}"
            for family in given
            for field, _, _ in FAMILY_FIELDS[family]
            if not values[field]
        }
        hmac_key = secrets[SecretName.HMAC_KEY]
        if hmac_key and len(hmac_key) < HMAC_KEY_MIN_LENGTH:
            problems[SecretName.HMAC_KEY.value] = f"at least {HMAC_KEY_MIN_LENGTH} characters"
        port = values.pop("listener_port")
        if not port.isdigit():
            problems["listener_port"] = "a port from 0 to 65535"
        try:  # every problem at once: the profile's own rules and the secrets'
            # The form's text, validated (and coerced: "true", a dialect's name) by the profile's own rules.
            profile = Profile.model_validate({"listener_port": int(port) if port.isdigit() else 0, **values})
        except ValidationError as error:
            raise FieldProblems(field_errors(error) | problems) from None
        if problems:
            raise FieldProblems(problems)
        return profile, {name: secrets[name] for name in SecretName.of(given) if secrets[name]}

    @work(group="setup", exclusive=True, exit_on_error=False)
    async def _save(self, profile: Any, secrets: dict[SecretName, str]) -> None:
        from tui.local import config
        from tui.local.secrets import KeyringUnavailable, open_secret_store

        insecure = self.state.insecure_storage
        form = self.query_one("#setup-form", Form)
        form.loading = True
        try:
            # The store first: if there is no keyring, nothing at all is written.
            store = await asyncio.to_thread(open_secret_store, insecure)
            existing = {p.name for p in await asyncio.to_thread(config.load_profiles)}
            if profile.name in existing:
                form.apply_errors({"name": "a profile with this name exists; choose another"})
                return
            if store.kind == "insecure-file":  # remembered: the next plain start (and `locate`) look there
                profile = profile.model_copy(update={"secrets_file": True})
            for name, value in secrets.items():
                await asyncio.to_thread(store.set, profile.name, name, value)
            await asyncio.to_thread(config.save_profile, profile)
        except KeyringUnavailable as error:
            self.status.show_error(f"{error} Nothing was saved. Or keep the secrets in a file readable only by you: "
                                   "the button below saves there now, no restart needed.")
            self.query_one("#setup-way-out").add_class("-shown")
            self.query_one(VerticalScroll).scroll_home(animate=False)
            self.query_one("#setup-insecure", Button).focus()
            return
        except (config.ConfigError, OSError) as error:
            self.status.show_error(f"Not saved: {error}")
            return
        finally:
            form.loading = False
        self.dismiss(profile.name)
