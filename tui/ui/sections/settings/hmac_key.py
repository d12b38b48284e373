"""Settings' HMAC signing key (operations 17-19): set, generate, read its status, delete. The listener verifies
with the key at once; the health block above warns when the gateway and the profile disagree."""

from __future__ import annotations

import secrets as random_secrets
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Button, Input, Static

from tui.api.models import HMAC_KEY_MIN_LENGTH, HmacKey, NoBody
from tui.api.operations import HMAC_STATUS
from tui.core.runtime import HmacDisagreement
from tui.local.secrets import mask_secret
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.forms import FieldRow, Form, TextInput, validated
from tui.ui.widgets.section import ConfirmScreen, CopyableValue
from tui.ui.sections.settings.block import block_status, settings_of, section_of
from tui.ui.sections.settings.health import HealthBlock

GENERATED_KEY_BYTES = 48  # token_urlsafe(48) → 64 characters, twice the minimum


class HmacBlock(Form):
    """`#hmac-form`."""

    def compose(self) -> ComposeResult:
        yield Static("HMAC signing key (operations 17–19)", classes="block-title")
        yield Static("", id="hmac-state", classes="muted")
        yield FieldRow(
            "New key", TextInput(id="hmac-key", password=True, placeholder=f"at least {HMAC_KEY_MIN_LENGTH} characters"),
            field="hmac_key",
        )
        with Horizontal(classes="actions"):
            yield Button("Set key", id="hmac-set", compact=True)
            yield Button("Generate", id="hmac-generate", compact=True, variant="primary")
            yield Button("Status", id="hmac-status", compact=True)
            yield Button("Delete", id="hmac-delete", compact=True, variant="error")
        yield CopyableValue("New key:", id="hmac-new-key")  # shown masked; Copy gives the key to other signers
        yield ErrorLine(classes="block-status")

    @property
    def _health(self) -> HealthBlock:
        return section_of(self).query_one(HealthBlock)

    def show_state(self) -> None:
        host = settings_of(self)
        disagrees = self._health.hmac_disagrees
        if host.webhooks.hmac_key_set and disagrees:
            text = "The profile has a key, but the gateway does not sign with it (see the warning at the top)."
        elif host.webhooks.hmac_key_set:
            text = "A key is set: the listener verifies every event with it."
        else:
            text = "No key: events are stored with the verdict \"no key configured\"."
        self.query_one("#hmac-state", Static).update(Content(text))

    def show_disagreement(self, disagreement: HmacDisagreement | None) -> None:
        """The health block's warning (and its button), then this block's own line."""
        self._health.show_hmac_disagreement(disagreement)
        self.show_state()

    @on(Button.Pressed, "#hmac-set")
    @on(Input.Submitted, "#hmac-key")
    def set_hmac_key(self) -> None:
        request = validated(self.rows(), lambda: HmacKey(hmac_key=self.query_one("#hmac-key", Input).value),
                            status=block_status(self))
        if request is not None:
            self._apply_hmac_key(request.hmac_key, generated=False)

    @on(Button.Pressed, "#hmac-generate")
    def generate_hmac_key(self) -> None:
        """Asks first: the new key replaces the old one on the gateway and in the listener at once."""
        replaces = settings_of(self).webhooks.hmac_key_set

        def answered(yes: bool | None) -> None:
            if yes:
                self._apply_hmac_key(random_secrets.token_urlsafe(GENERATED_KEY_BYTES), generated=True)
            else:
                block_status(self).show_ok("Not generated; the key is unchanged.")

        self.app.push_screen(
            ConfirmScreen(
                "Replace the HMAC key with a new random one?" if replaces else "Generate a random HMAC key?",
                "The gateway signs with it and the listener verifies with it at once"
                + ("; anything that checks signatures with the old key fails until it has the new one" if replaces
                   else "") + ". Copy it afterwards with the Copy button.",
                confirm_label="Generate",
            ),
            answered,
        )

    def _apply_hmac_key(self, key: str, *, generated: bool) -> None:
        host = settings_of(self)

        def done(_: Any) -> None:
            self.query_one("#hmac-key", Input).value = ""
            self._health.set_warning("#hmac-warning", "")
            self.show_state()
            origin = "A new random key" if generated else "The key"
            new_key = self.query_one("#hmac-new-key", CopyableValue)
            if generated:
                new_key.show(key, shown=mask_secret(key))
            else:
                new_key.clear()
            # Hiding the warning above moves the block: the answer line brings itself (and the focused button)
            # back into view (tui.ui.widgets.feedback.in_view).
            block_status(self).show_ok(
                f"{origin} ({mask_secret(key)}) is set on the gateway and used by the listener now.")

        section_of(self).call("Set HMAC key", lambda _: host.webhooks.set_hmac_key(key), group="hmac", family="session",
                              busy=self, status=block_status(self), done=done)

    def fix_disagreement(self) -> None:
        """The health block's button: the profile's key onto the gateway, or a new key for both."""
        host = settings_of(self)
        if host.webhooks.hmac_key_set:

            def done(_: Any) -> None:
                self._health.set_warning("#hmac-warning", "")
                block_status(self).show_ok("The profile's key is now set on the gateway: events are signed "
                                           "and verified again.")

            section_of(self).call("Set HMAC key", lambda _: host.webhooks.push_hmac_key(), group="hmac", family="session",
                                  busy=self, status=block_status(self), done=done)
        else:
            self.generate_hmac_key()

    @on(Button.Pressed, "#hmac-status")
    def hmac_status(self) -> None:
        host = settings_of(self)
        status = block_status(self)

        def done(answer: Any) -> None:
            configured = bool(answer.hmac_key)
            status.show_ok(f"Gateway: {'a key is configured' if configured else 'no key configured'} "
                           f"({mask_secret(answer.hmac_key) if configured else 'nothing to show'}).")
            disagreement = None
            if configured != host.webhooks.hmac_key_set:
                disagreement = HmacDisagreement.PROFILE_ONLY if host.webhooks.hmac_key_set else HmacDisagreement.GATEWAY_ONLY
            self.show_disagreement(disagreement)

        section_of(self).run_operation(HMAC_STATUS, NoBody(), group="hmac", busy=self, status=status, done=done)

    @on(Button.Pressed, "#hmac-delete")
    def delete_hmac_key(self) -> None:
        host = settings_of(self)

        def answered(yes: bool | None) -> None:
            if yes:
                def deleted(_: Any) -> None:
                    self._health.set_warning("#hmac-warning", "")
                    self.show_state()
                    block_status(self).show_ok("HMAC key deleted: events are no longer signed or verified.")

                section_of(self).call("Delete HMAC key", lambda _: host.webhooks.delete_hmac_key(), group="hmac",
                                      family="session", busy=self, status=block_status(self), done=deleted)

        self.app.push_screen(
            ConfirmScreen("Delete the HMAC signing key?", "The gateway stops signing events and the listener can no "
                          "longer tell authentic events from forged ones.", confirm_label="Delete"),
            answered,
        )
