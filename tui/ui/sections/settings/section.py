"""Settings: the profile and its secrets, dialects, profile description (instance), delivery webhook (op 16),
session webhook (op 24), HMAC signing key (ops 17-19, applied to the listener at once), proxy (op 20), listener
address and theme, forwarding. Each block is its own widget (`tui.ui.sections.settings`); this section composes them,
shows the profile in them once the runtime is up, and does what crosses blocks (the warnings' buttons, ctrl+s,
the palette). Secrets are only ever shown masked; keyring and file calls run in thread workers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Button, Input, Static

from tui.api.operations import OperationId
from tui.ui.keymap import bindings_for
from tui.core.runtime import HmacDisagreement
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.sections.settings.block import SettingsHost, block_status
from tui.ui.sections.settings.delivery import DeliveryWebhookBlock
from tui.ui.sections.settings.description import DescriptionBlock
from tui.ui.sections.settings.dialects import DialectsBlock
from tui.ui.sections.settings.doctor import DoctorBlock
from tui.ui.sections.settings.forward import ForwardBlock
from tui.ui.sections.settings.health import HealthBlock
from tui.ui.sections.settings.hmac_key import HmacBlock
from tui.ui.sections.settings.listener import ListenerBlock
from tui.ui.sections.settings.profile_secrets import SecretsBlock
from tui.ui.sections.settings.proxy import ProxyBlock
from tui.ui.sections.settings.session_webhook import SessionWebhookBlock
from tui.api.operations import Section
from tui.ui.widgets.operation_form import DerivedForms


class SettingsCommand(StrEnum):
    """Settings' own palette commands (its gateway operations reach the palette from tui.api.operations)."""

    DOCTOR = "webhook-doctor"
    GENERATE_HMAC_KEY = "generate-hmac-key"
    POINT_WEBHOOKS = "point-webhooks"
    REPLACE_SECRET = "replace-secret"
    DIALECTS = "dialects"
    LISTENER_ADDRESS = "listener-address"
    FORWARD_TO = "forward-to"


# The gateway operations of this section performed by a hand-built block (op id -> the control that performs it).
# Any other operation of the section gets a form read off its row (tui.ui.widgets.operation_form), below the blocks.
HAND_BUILT: dict[str, str] = {
    OperationId.HMAC_SET: "#hmac-key", OperationId.HMAC_STATUS: "#hmac-status",
    OperationId.HMAC_DELETE: "#hmac-delete", OperationId.PROXY: "#proxy-url",
    OperationId.UPDATE_WEBHOOK_DELIVERY: "#delivery-url", OperationId.WEBHOOK: "#session-url",
    OperationId.PROFILE_DESCRIPTION: "#description", OperationId.STATUS: "#connection-check",
    # issue 24's "every callback to one URL": the button that points the webhooks at the listener
    OperationId.UPDATE_EVERY_WEBHOOKS: "#point-webhooks",
}


class SettingsSection(SettingsHost):
    OPERATIONS: ClassVar[Mapping[str, str]] = {
        SettingsCommand.DOCTOR: "Webhook doctor: check why events do not arrive",
        SettingsCommand.GENERATE_HMAC_KEY: "Generate HMAC key",
        SettingsCommand.POINT_WEBHOOKS: "Point webhooks at listener",
        SettingsCommand.REPLACE_SECRET: "Replace a secret",
        SettingsCommand.DIALECTS: "Change the profile's dialects (spec, Z-API, WuzAPI)",
        SettingsCommand.LISTENER_ADDRESS: "Change listener address",
        SettingsCommand.FORWARD_TO: "Forward events to your app",
    }

    HELP = """\
## Settings

- **Webhook doctor** — why the gateway's events would not reach the listener: each finding with its severity,
  plain words and fix. `F5` checks (with a probe message to the account's own number: asked first against
  a real gateway); each fix has its key, shown beside it and in the footer while it applies, and checks again.
  The header's webhook health follows the newest check. From anywhere: `ctrl+p` → *Webhook doctor*.
- **Warnings** (at the top, only when something is wrong) — the webhooks still point where the listener was
  (**Point the webhooks here**), or the gateway's key status disagrees with the profile's key (**Set this key
  on the gateway**, or generate one for both). The key status is read at start and with **Status**.
- **Profile and secrets** — the current profile; each secret masked (`••••abcd`) with where it comes from.
  Type a new value in the password field and **Replace**, or **Remove** it (confirmed); the gateway calls use
  it at once. The HMAC key has its own block below (it also changes the gateway and the listener).
- **Profile description** — the account's "about" text (instance family).
- **Delivery webhook** — where the gateway posts delivery notifications (operation 16).
- **Session webhook** — URL, event kinds and active switch (operation 24).
- **Point both webhooks at the listener** — uses the profile's public URL (a tunnel), else the listener's own.
- **HMAC key** — set (at least 32 characters), **generate** a strong random one, read its **status**, or
  **delete** it (confirmed). The listener verifies with it immediately.
- **Proxy** — enable and a URL in one of four forms: `socks5://host:port`, `socks5://user:password@host:port`,
  `http://host:port`, `http://user:password@host:port`.
- **Listener** — address and port of the local webhook listener; **Theme**.
- **Forward events to your app** — every accepted event is sent on to your app's URL, unchanged, with its id in
  `X-Gateway-Tui-Event`; loopback only unless **Allow a remote host** is on. In an event's detail, `r` replays it.
- **Reads and settings without a block** (the instance's data and callback URLs, the session webhook as the
  gateway has it, ...) — chosen in the palette, each opens a form of its own at the end, one line per field:
  **ctrl+s** sends it and the gateway's answer is shown under it.

**Escape** cancels a running call.
"""

    BINDINGS = bindings_for("settings")

    DEFAULT_CSS = """
    SettingsSection .block { height: auto; border: round $panel-lighten-2; padding: 0 1; margin-bottom: 1; }
    SettingsSection .block-title { text-style: bold; color: $accent; }
    SettingsSection .secret-line { height: auto; }
    SettingsSection .muted { color: $text-muted; padding: 0 1; }
    SettingsSection SelectionList { height: 6; }
    SettingsSection .switch-row { height: auto; padding: 0 1; }
    SettingsSection .switch-row Static { width: auto; padding: 1 1 0 0; }
    SettingsSection #health-block { border: round $warning; display: none; }
    SettingsSection #health-block.-shown { display: block; }
    SettingsSection .health-row { height: auto; display: none; }
    SettingsSection .health-row.-shown { display: block; layout: horizontal; }
    SettingsSection .health-text { width: 1fr; color: $text-warning; }
    SettingsSection .health-row Button { margin-left: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static("Settings", classes="section-title")
        # Shown only when something is wrong, above everything, each with the one action that fixes it.
        yield HealthBlock(classes="block", id="health-block")
        yield DoctorBlock(classes="block", id="doctor-block")
        yield SecretsBlock(classes="block", id="secrets-block")
        yield DialectsBlock(classes="block", id="dialect-form")
        yield DescriptionBlock(classes="block", id="description-form")
        yield DeliveryWebhookBlock(classes="block", id="delivery-form")
        yield SessionWebhookBlock(classes="block", id="session-webhook-form")
        yield HmacBlock(classes="block", id="hmac-form")
        yield ProxyBlock(classes="block", id="proxy-form")
        yield ListenerBlock(classes="block", id="listener-form")
        yield ForwardBlock(classes="block", id="forward-form")
        yield DerivedForms(Section.SETTINGS, HAND_BUILT, run_binding="settings.apply")

    # -- life cycle ----------------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.query_one(ListenerBlock).show_themes()
        self.watch(self.app, "runtime_ready", self._runtime_ready, init=True)

    def _runtime_ready(self, ready: bool) -> None:
        if ready:
            self.query_one(DoctorBlock).follow_record()
            self.refresh_profile()
            self.check_health(read_gateway=not self.accounts.sandbox_mode)

    @work(group="settings-profile", exclusive=True, exit_on_error=False)
    async def refresh_profile(self) -> None:
        secrets = self.query_one(SecretsBlock)
        secrets.show_profile_line()
        self.query_one(ForwardBlock).show_target()
        listener = self.query_one(ListenerBlock)
        listener.show_address()
        listener.show_limits()
        if self.profile is not None:
            base = self.run_display.scrub(self.webhooks.listener_base())
            self.query_one(DeliveryWebhookBlock).show_listener(base)
            self.query_one(SessionWebhookBlock).show_listener(base)
        self.query_one(DialectsBlock).show_dialects()
        await secrets.show_secret_lines()
        self.query_one(HmacBlock).show_state()
        await secrets.show_other_profiles()

    def on_secrets_block_changed(self, _message: SecretsBlock.Changed) -> None:
        self.refresh_profile()

    # -- health: do the gateway's webhooks and key agree with this app? ---------------------------------------

    @work(group="settings-health", exclusive=True, exit_on_error=False)
    async def check_health(self, *, read_gateway: bool = True) -> None:
        """Warn when the webhooks no longer point at the listener, and (reading op 18) when the gateway's key
        status disagrees with the profile's key; each warning has the button that fixes it."""
        from tui.api.errors import GatewayError

        self.query_one(HealthBlock).show_webhook_drift()
        if not read_gateway:
            return
        try:
            disagreement = await self.webhooks.hmac_disagreement()
        except GatewayError:
            return  # the header already says when the gateway cannot be reached
        self.show_hmac_disagreement(disagreement)

    def show_hmac_disagreement(self, disagreement: HmacDisagreement | None) -> None:
        self.query_one(HmacBlock).show_disagreement(disagreement)

    def _set_warning(self, selector: str, text: str) -> None:
        self.query_one(HealthBlock).set_warning(selector, text)

    @on(Button.Pressed, "#health-point")
    def fix_webhooks(self) -> None:
        self.query_one(SessionWebhookBlock).point_webhooks()

    @on(Button.Pressed, "#health-hmac")
    def fix_hmac(self) -> None:
        self.query_one(HmacBlock).fix_disagreement()

    @staticmethod
    def block_status(block: Widget) -> ErrorLine:
        """Each block answers under its own buttons, where the user is looking."""
        return block_status(block)

    # -- the webhook doctor's keys (issue 24) ---------------------------------------------------------------

    def action_doctor_check(self) -> None:
        self._reveal(self.query_one(DoctorBlock))
        self.query_one(DoctorBlock).check()

    def action_doctor_fix(self, fix: str) -> None:
        self._reveal(self.query_one(DoctorBlock))
        self.query_one(DoctorBlock).apply_fix(fix)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "doctor_fix" and not (parameters and self.query_one(DoctorBlock).offers(str(parameters[0]))):
            return False  # no listed finding is cured by it: not in the footer
        return super().check_action(action, parameters)

    def _reveal(self, block: DoctorBlock) -> None:
        """The panel in view, the focus on its button: its findings are what the key is about."""
        self.query_one("#doctor-check", Button).focus(scroll_visible=False)
        self.call_after_refresh(self.scroll_to_widget, block, animate=False, top=True)

    # -- the palette, ctrl+s and Enter ----------------------------------------------------------------------

    def open_operation(self, op_id: str) -> None:
        if self.open_derived(op_id):
            return
        targets: dict[str, str] = {
            SettingsCommand.GENERATE_HMAC_KEY: "#hmac-generate", SettingsCommand.POINT_WEBHOOKS: "#point-webhooks",
            SettingsCommand.REPLACE_SECRET: "#secret-value", SettingsCommand.LISTENER_ADDRESS: "#listener-port",
            SettingsCommand.DIALECTS: "#instance-dialect", SettingsCommand.FORWARD_TO: "#forward-url",
            SettingsCommand.DOCTOR: "#doctor-check",
            **HAND_BUILT,  # the gateway operations with a block focus the control that performs them
        }
        hmac = self.query_one(HmacBlock)
        # Palette entries that need nothing typed act at once (the focus still goes to their block).
        acts: dict[str, Callable[[], object]] = {
            SettingsCommand.GENERATE_HMAC_KEY: hmac.generate_hmac_key, OperationId.HMAC_STATUS: hmac.hmac_status,
            OperationId.HMAC_DELETE: hmac.delete_hmac_key,
            SettingsCommand.POINT_WEBHOOKS: self.query_one(SessionWebhookBlock).point_webhooks,
            OperationId.STATUS: self.query_one(DialectsBlock).check_connection,
            SettingsCommand.DOCTOR: self.query_one(DoctorBlock).check,
        }
        widget = self.query_one(targets[op_id])
        act = acts.get(op_id)

        def reveal(attempts: int = 10) -> None:
            # The section may have just been switched in (from the palette): it has no size until laid out.
            if not self.size.height and attempts:
                self.call_after_refresh(reveal, attempts - 1)
                return
            widget.focus(scroll_visible=False)
            self.scroll_to_widget(widget, animate=False, top=True)
            if act is not None:
                self.call_after_refresh(act)  # after the focus has moved, so the call gives it back there

        self.call_after_refresh(reveal)

    def action_apply_block(self) -> None:
        """ctrl+s: the first button of the block the focus is in (Set, Replace, Save, Forward there, ...), or the
        form read off the table the focus is in."""
        if self.submit_derived():
            return
        focused = self.screen.focused
        block = next((node for node in (focused.ancestors_with_self if focused else ()) if node.has_class("block")),
                     None)
        if block is None:
            return
        button = next((b for b in block.query(".actions Button").results(Button) if not b.disabled), None)
        if button is not None:
            button.press()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        """Enter moves on to the next field; a block is applied with ctrl+s or its button (the HMAC key field
        sets the key on Enter, a one-field form)."""
        if event.input.id == "hmac-key":
            return
        event.stop()
        self.screen.focus_next()
