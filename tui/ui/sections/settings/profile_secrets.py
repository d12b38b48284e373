"""Settings' profile and secrets: the current profile, each secret masked with where it comes from, replace or
remove one (confirmed), and the other profiles."""

from __future__ import annotations

import asyncio
from functools import partial

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Input, Select, Static

from tui.local.secrets import SecretName, mask_secret
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.forms import FieldRow, Form, TextInput
from tui.ui.widgets.section import ConfirmScreen
from tui.ui.sections.settings.block import block_status, run_on_section, settings_of
from tui.ui.widgets.focus import TypingInForms


class SecretsBlock(Vertical, TypingInForms):
    """`#secrets-block`. After a secret changed it posts `SecretsBlock.Changed`: the section shows the profile
    again."""

    class Changed(Message):
        """A secret was replaced or removed."""

    def compose(self) -> ComposeResult:
        yield Static("Profile and secrets", classes="block-title")
        yield Static("", id="profile-line", classes="muted")
        yield Static("", id="secret-lines", classes="muted")
        with Form(id="secret-form"):
            yield FieldRow(
                "Secret",
                Select([(name.label, name.value) for name in SecretName], value=SecretName.CLIENT_TOKEN.value,
                       allow_blank=False, id="secret-name"),
                field="secret",
            )
            yield FieldRow("New value", TextInput(id="secret-value", password=True), field="value")
        with Horizontal(classes="actions"):
            yield Button("Replace", id="secret-replace", compact=True)
            yield Button("Remove", id="secret-remove", compact=True, variant="error")
        yield Static("", id="other-profiles", classes="muted")
        yield ErrorLine(classes="block-status")

    def show_profile_line(self) -> None:
        host = settings_of(self)
        profile = host.profile
        if host.accounts.sandbox_mode:
            self.query_one("#profile-line", Static).update(
                Content("Profile: sandbox — throwaway secrets in memory, gone when the app exits.")
            )
        elif profile is not None:
            instance, session = profile.instance, profile.session
            parts = [
                f"instance {instance.instance_id} · {instance.base_url}" if instance else "no instance family (Z-API)",
                f"session {session.url}" if session else "no session family (WuzAPI)",
            ]
            self.query_one("#profile-line", Static).update(Content(f"Profile: {profile.name} · " + " · ".join(parts)))

    async def show_secret_lines(self) -> None:
        lines = await asyncio.to_thread(self._secret_lines)
        self.query_one("#secret-lines", Static).update(Content(lines))

    async def show_other_profiles(self) -> None:
        host = settings_of(self)
        if host.accounts.sandbox_mode:
            return
        from tui.local.config import load_profiles

        try:
            names = [p.name for p in await asyncio.to_thread(load_profiles)]
        except Exception as error:  # a broken file is reported, the section stays usable
            names, note = [], f" (profiles file: {error})"
        else:
            note = ""
        others = [name for name in names if name != host.accounts.run_name]
        self.query_one("#other-profiles", Static).update(
            Content("Other profiles: " + (", ".join(others) if others else "none") + note
                    + " · switch with `gateway-tui --profile NAME`")
        )

    def _secret_lines(self) -> str:
        """Masked values and where each comes from (runs in a thread: keyring calls may block)."""
        from tui.local.secrets import secret_sources

        host = settings_of(self)
        store = (host.accounts.current.secrets if host.accounts.current is not None else None)
        if store is None:
            return "Secrets: not available (the secret store did not open)."
        profile = host.accounts.run_name
        if profile is None:
            return "Secrets: no profile yet (ctrl+p → Set up a profile)."
        sources = secret_sources(profile, store)
        lines = []
        for name in SecretName:
            value = store.get(profile, name)
            stored_in = {"memory": "in memory", "keyring": "in the OS keyring", "insecure-file": "in the 0600 file"}
            where = {"stored": stored_in.get(store.kind, ""), "environment": "from the environment", "not set": ""}[sources[name]]
            lines.append(f"{name.label:<15} {mask_secret(value) if sources[name] != 'environment' else '••••'}  {where}".rstrip())
        return "\n".join(lines)

    def _chosen_secret(self) -> SecretName:
        return SecretName(str(self.query_one("#secret-name", Select).value))

    @on(Button.Pressed, "#secret-replace")
    def replace_secret(self) -> None:
        name = self._chosen_secret()
        value = self.query_one("#secret-value", Input).value
        form = self.query_one("#secret-form", Form)
        form.clear_errors()
        if not value:
            form.apply_errors({"value": "type the new value first"})
            return
        if name is SecretName.HMAC_KEY:
            form.apply_errors({"value": "use the HMAC key block below: it also updates the gateway and the listener"})
            return
        run_on_section(self, partial(self._write_secret, name, value), "settings-secret")

    @on(Button.Pressed, "#secret-remove")
    def remove_secret(self) -> None:
        name = self._chosen_secret()

        def answered(yes: bool | None) -> None:
            if yes:
                run_on_section(self, partial(self._write_secret, name, None), "settings-secret")

        self.app.push_screen(
            ConfirmScreen(f"Remove the {name.label} of this profile?", "The app cannot reach the gateway without it "
                          "until you enter it again.", confirm_label="Remove"),
            answered,
        )

    async def _write_secret(self, name: SecretName, value: str | None) -> None:
        status = block_status(self)
        host = settings_of(self)
        account = host.accounts.current
        if account is None:
            status.show_error("The secret store is not open; nothing was changed.")
            return
        store, profile = account.secrets, account.name
        try:
            if value is None:
                await asyncio.to_thread(store.delete, profile, name)
            else:
                await asyncio.to_thread(store.set, profile, name, value)
        except Exception as error:  # e.g. the keyring got locked
            status.show_error(f"{name.label} not saved: {error}")
            return
        self.query_one("#secret-value", Input).value = ""
        await host.accounts.reload_credentials()
        done = "removed" if value is None else "replaced"
        status.show_ok(f"{name.label} {done}; the gateway calls use it from now on.")
        self.post_message(self.Changed())
