"""Settings: the profile and its secrets, profile description (instance), delivery webhook (op 16), session
webhook (op 24), HMAC signing key (ops 17-19, applied to the listener at once), proxy (op 20), listener
address and theme. Secrets are only ever shown masked; keyring and file calls run in thread workers.
"""

from __future__ import annotations

import asyncio
import secrets as random_secrets
from typing import TYPE_CHECKING, Any, ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Button, Input, Select, SelectionList, Static, Switch

from tui.api.models import (
    HMAC_KEY_MIN_LENGTH,
    PROXY_FORMS,
    SESSION_EVENT_KINDS,
    DeliveryWebhook,
    HmacKey,
    NoBody,
    ProfileDescription,
    ProxyConfig,
    WebhookUpdate,
    redact_url_credentials,
)
from tui.api.dialects import InstanceDialect, SessionDialect
from tui.api.operations import (
    HMAC_STATUS,
    PAIRING_CALLS,
    PROFILE_DESCRIPTION,
    PROXY,
    UPDATE_WEBHOOK_DELIVERY,
    WEBHOOK,
    OperationId,
)
from tui.runtime import HmacDisagreement, StartupError
from tui.secrets import SecretName, mask_secret
from tui.keymap import bindings_for
from tui.widgets.feedback import ErrorLine
from tui.widgets.forms import FieldProblems, FieldRow, Form, TextInput, validated, value_of
from tui.widgets.section import ConfirmScreen, CopyableValue, OperationSection

if TYPE_CHECKING:  # for annotations only: the app imports this module
    from tui.app import GatewayApp
    from tui.runtime import Runtime

def password_span(url: str) -> tuple[int, int]:
    """Where the password of `user:password@host:port` is in `url` as typed (start, end); (0, 0) without one.
    Before the `@` is typed, what follows `user:` is taken for a password unless it is a port (digits)."""
    start = url.find("://")
    if start < 0:
        return 0, 0
    start += 3
    slash = url.find("/", start)
    authority_end = len(url) if slash < 0 else slash
    at = url.rfind("@", start, authority_end)
    colon = url.find(":", start, at if at >= 0 else authority_end)
    if colon < 0:
        return 0, 0
    end = at if at >= 0 else authority_end
    if at < 0 and url[colon + 1:end].isdigit():
        return 0, 0  # host:port, no password yet
    return colon + 1, end


class ProxyUrlInput(TextInput):
    """The proxy URL with its host and user in view and only the password masked: `socks5://user:•••@host:1080`
    (each hidden character one `•`, so the cursor stays where it is typed)."""

    @property
    def _value(self) -> Text:
        start, end = password_span(self.value)
        if start == end:
            return super()._value
        shown = self.value[:start] + "•" * (end - start) + self.value[end:]
        return Text(shown, no_wrap=True, overflow="ignore", end="")


GENERATED_KEY_BYTES = 48  # token_urlsafe(48) → 64 characters, twice the minimum
_DIALECT_TITLES: dict[InstanceDialect | SessionDialect, str] = {
    InstanceDialect.SPEC: "spec (default)",
    InstanceDialect.ZAPI: "Z-API",
    SessionDialect.SPEC: "spec (default)",
    SessionDialect.WUZAPI: "WuzAPI",
}

DEFAULT_EVENTS = ("Message", "ReadReceipt", "ChatPresence")

MIB = 1024 * 1024


class SettingsSection(OperationSection):
    # This section's own commands; its gateway operations reach the palette from tui.api.operations.
    OPERATIONS: ClassVar[dict[str, str]] = {
        "generate-hmac-key": "Generate HMAC key",
        "point-webhooks": "Point webhooks at listener",
        "replace-secret": "Replace a secret",
        "dialects": "Change the profile's dialects (spec, Z-API, WuzAPI)",
        "listener-address": "Change listener address",
        "forward-to": "Forward events to your app",
    }

    HELP = """\
## Settings

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
        with Vertical(classes="block", id="health-block"):
            with Horizontal(classes="health-row", id="webhook-warning"):
                yield Static("", id="webhook-warning-text", classes="health-text")
                yield Button("Point the webhooks here", id="health-point", compact=True, variant="warning")
            with Horizontal(classes="health-row", id="hmac-warning"):
                yield Static("", id="hmac-warning-text", classes="health-text")
                yield Button("Set this key on the gateway", id="health-hmac", compact=True, variant="warning")
        with Vertical(classes="block", id="secrets-block"):
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

        with Form(classes="block", id="dialect-form"):
            yield Static("Dialects: how requests are written", classes="block-title")
            with Horizontal(classes="form-cols"):
                yield FieldRow("Instance family", Select([(_DIALECT_TITLES[d], d.value) for d in InstanceDialect],
                                                         value=InstanceDialect.SPEC.value, allow_blank=False,
                                                         id="instance-dialect"), field="instance_dialect")
                yield FieldRow("Session family", Select([(_DIALECT_TITLES[d], d.value) for d in SessionDialect],
                                                        value=SessionDialect.SPEC.value, allow_blank=False,
                                                        id="session-dialect"), field="session_dialect")
            with Horizontal(classes="actions"):
                yield Button("Save dialects", id="dialect-apply", compact=True)
                yield Button("Check connection", id="connection-check", compact=True)
            yield ErrorLine(classes="block-status")

        with Form(classes="block", id="description-form"):
            yield Static("Profile description", classes="block-title")
            yield FieldRow("Description", TextInput(id="description", placeholder="Open 9–18h"), field="value")
            with Horizontal(classes="actions"):
                yield Button("Set description", id="description-apply", compact=True)
            yield ErrorLine(classes="block-status")

        with Form(classes="block", id="delivery-form"):
            yield Static("Delivery webhook (operation 16)", classes="block-title")
            yield FieldRow("URL", TextInput(id="delivery-url", placeholder="https://example.com/delivery"),
                           field="value", hint="Empty: remove the delivery webhook (asks first).")
            with Horizontal(classes="actions"):
                yield Button("Set delivery webhook", id="delivery-apply", compact=True)
            yield ErrorLine(classes="block-status")

        with Form(classes="block", id="session-webhook-form"):
            yield Static("Session webhook (operation 24)", classes="block-title")
            yield FieldRow("URL", TextInput(id="session-url", placeholder="https://example.com/session"),
                           field="webhook")
            yield FieldRow(
                "Event kinds",
                SelectionList[str](*[(kind, kind, kind in DEFAULT_EVENTS) for kind in SESSION_EVENT_KINDS],
                                   id="session-events"),
                field="events",
            )
            with Horizontal(classes="switch-row"):
                yield Static("Active")
                yield Switch(value=True, id="session-active")
            with Horizontal(classes="actions"):
                yield Button("Set session webhook", id="session-apply", compact=True)
                yield Button("Point both webhooks at the listener", id="point-webhooks", compact=True,
                             variant="primary")
            yield ErrorLine(classes="block-status")

        with Form(classes="block", id="hmac-form"):
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

        with Form(classes="block", id="proxy-form"):
            yield Static("Proxy (operation 20)", classes="block-title")
            with Horizontal(classes="switch-row"):
                yield Static("Enabled")
                yield Switch(value=False, id="proxy-enable")
            yield FieldRow("Proxy URL", ProxyUrlInput(id="proxy-url", placeholder="socks5://host:1080"),
                           field="proxy_url", hint="One of: " + ", ".join(PROXY_FORMS))
            with Horizontal(classes="actions"):
                yield Button("Set proxy", id="proxy-apply", compact=True)
            yield ErrorLine(classes="block-status")

        with Form(classes="block", id="listener-form"):
            yield Static("Listener and theme", classes="block-title")
            yield FieldRow("Listener address", TextInput(id="listener-host", value="127.0.0.1"), field="listener_host")
            yield FieldRow("Listener port (0: any free port)", TextInput(id="listener-port", type="integer"),
                           field="listener_port")
            yield FieldRow("Largest webhook body (MiB)", TextInput(id="listener-max-body", type="integer"),
                           field="max_body", hint="WuzAPI sends media inline: a 100 MB document needs 150")
            with Horizontal(classes="switch-row"):
                yield Static("Refuse unsigned webhooks on every path (Z-API never signs)")
                yield Switch(value=False, id="listener-require-signatures")
            with Horizontal(classes="actions"):
                yield Button("Restart listener here", id="listener-apply", compact=True)
            yield FieldRow("Theme", Select([], allow_blank=True, id="theme"), field="theme")
            yield ErrorLine(classes="block-status")

        with Form(classes="block", id="forward-form"):
            yield Static("Forward events to your app", classes="block-title")
            yield Static("Every accepted event goes on to this URL as it arrived (body, content type, signature) "
                         "plus X-Gateway-Tui-Event; retried while your app is down.", classes="muted")
            yield FieldRow("App URL", TextInput(id="forward-url", placeholder="http://127.0.0.1:3000/webhook"),
                           field="forward_to")
            with Horizontal(classes="switch-row"):
                yield Static("Allow a remote host")
                yield Switch(value=False, id="forward-remote")
            with Horizontal(classes="actions"):
                yield Button("Forward there", id="forward-apply", compact=True)
                yield Button("Stop forwarding", id="forward-stop", compact=True)
            yield ErrorLine(classes="block-status")

    # -- life cycle ----------------------------------------------------------------------------------------

    def on_mount(self) -> None:
        themes = sorted(self.app.available_themes)
        theme = self.query_one("#theme", Select)
        theme.set_options([(name, name) for name in themes])
        theme.value = self.app.theme if self.app.theme in themes else Select.NULL
        self.watch(self.app, "runtime_ready", self._runtime_ready, init=True)

    def _runtime_ready(self, ready: bool) -> None:
        if ready:
            self.refresh_profile()
            self.check_health(read_gateway=not self.runtime.sandbox_mode)

    # -- health: do the gateway's webhooks and key agree with this app? ---------------------------------------

    @work(group="settings-health", exclusive=True, exit_on_error=False)
    async def check_health(self, *, read_gateway: bool = True) -> None:
        """Warn when the webhooks no longer point at the listener, and (reading op 18) when the gateway's key
        status disagrees with the profile's key; each warning has the button that fixes it."""
        from tui.api.errors import GatewayError

        runtime = self.runtime
        self._show_webhook_drift()
        if not read_gateway:
            return
        try:
            disagreement = await runtime.hmac_disagreement()
        except GatewayError:
            return  # the header already says when the gateway cannot be reached
        self.show_hmac_disagreement(disagreement)

    def _show_webhook_drift(self) -> None:
        drift = self.runtime.webhook_drift()
        text = ""
        if drift is not None:
            old, new = (self.runtime.scrub(url) for url in drift)
            text = (f"The webhooks still point at {old}, but the listener is now at {new}: the gateway's events "
                    "go to the old address, so sends produce no events here.")
        self._set_warning("#webhook-warning", text)

    def show_hmac_disagreement(self, disagreement: HmacDisagreement | None) -> None:
        text, button = "", "Set this key on the gateway"
        if disagreement is HmacDisagreement.PROFILE_ONLY:
            text = ("The profile has an HMAC key but the gateway has none: the gateway sends events unsigned and "
                    "the listener cannot verify (or refuses) them.")
        elif disagreement is HmacDisagreement.GATEWAY_ONLY:
            text = ("The gateway signs events with a key this profile does not have: nothing is verified. Set a "
                    "new key on both.")
            button = "Generate a key for both"
        self.query_one("#health-hmac", Button).label = button
        self._set_warning("#hmac-warning", text)
        self._show_hmac_state()

    def _set_warning(self, selector: str, text: str) -> None:
        row = self.query_one(selector)
        row.query_one(".health-text", Static).update(Content(text))
        row.set_class(bool(text), "-shown")
        block = self.query_one("#health-block")
        block.set_class(any(r.has_class("-shown") for r in block.query(".health-row")), "-shown")

    @on(Button.Pressed, "#health-point")
    def fix_webhooks(self) -> None:
        self.point_webhooks()

    @on(Button.Pressed, "#health-hmac")
    def fix_hmac(self) -> None:
        if self.runtime.hmac_key_set:
            form = self.query_one("#hmac-form", Form)

            def done(_: Any) -> None:
                self._set_warning("#hmac-warning", "")
                self.block_status(form).show_ok("The profile's key is now set on the gateway: events are signed "
                                                "and verified again.")

            self.call("Set HMAC key", lambda _: self.runtime.push_hmac_key(), group="hmac", family="session",
                      busy=form, status=self.block_status(form), done=done)
        else:
            self.generate_hmac_key()

    @staticmethod
    def block_status(block: Widget) -> ErrorLine:
        """Each block answers under its own buttons, where the user is looking."""
        return block.query_one(".block-status", ErrorLine)

    @property
    def runtime(self) -> Runtime:
        return cast("GatewayApp", self.app).runtime

    def open_operation(self, op_id: str) -> None:
        targets: dict[str, str] = {
            "set-hmac-key": "#hmac-key", "generate-hmac-key": "#hmac-generate", "delete-hmac-key": "#hmac-delete",
            "hmac-status": "#hmac-status", "set-proxy": "#proxy-url", "set-delivery-webhook": "#delivery-url",
            "set-session-webhook": "#session-url", "point-webhooks": "#point-webhooks",
            "set-profile-description": "#description", "replace-secret": "#secret-value",
            "listener-address": "#listener-port", "theme": "#theme", "dialects": "#instance-dialect",
            "forward-to": "#forward-url",
            # the gateway operations of this section (tui.api.operations) focus the control that performs them
            OperationId.HMAC_SET: "#hmac-key", OperationId.HMAC_STATUS: "#hmac-status",
            OperationId.HMAC_DELETE: "#hmac-delete", OperationId.PROXY: "#proxy-url",
            OperationId.UPDATE_WEBHOOK_DELIVERY: "#delivery-url", OperationId.WEBHOOK: "#session-url",
            OperationId.PROFILE_DESCRIPTION: "#description", OperationId.STATUS: "#connection-check",
            # issue 23's pairing calls, until the Account section takes them: the connection block
            **{op: "#connection-check" for op in PAIRING_CALLS},
            # issue 24's webhook reads and settings: the button that points the webhooks
            OperationId.INSTANCE_DATA: "#point-webhooks", OperationId.UPDATE_EVERY_WEBHOOKS: "#point-webhooks",
            OperationId.WEBHOOK_READ: "#point-webhooks",
        }
        # Palette entries that need nothing typed act at once (the focus still goes to their block).
        acts = {
            "generate-hmac-key": self.generate_hmac_key, OperationId.HMAC_STATUS: self.hmac_status,
            "hmac-status": self.hmac_status, "delete-hmac-key": self.delete_hmac_key,
            OperationId.HMAC_DELETE: self.delete_hmac_key, "point-webhooks": self.point_webhooks,
            OperationId.STATUS: self.check_connection,
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
        """ctrl+s: the first button of the block the focus is in (Set, Replace, Save, Forward there, ...)."""
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

    # -- profile and secrets --------------------------------------------------------------------------------

    @work(group="settings-profile", exclusive=True, exit_on_error=False)
    async def refresh_profile(self) -> None:
        runtime = self.runtime
        profile = runtime.profile
        if runtime.sandbox_mode:
            self.query_one("#profile-line", Static).update(
                Content("Profile: sandbox — throwaway secrets in memory, gone when the app exits.")
            )
        elif profile is not None:
            self.query_one("#profile-line", Static).update(
                Content(f"Profile: {profile.name} · instance {profile.instance_id} · {profile.base_url} · "
                        f"session {profile.session_url}")
            )
        if profile is not None:
            self.query_one("#forward-url", Input).value = runtime.forward_target or ""
            self.query_one("#forward-remote", Switch).value = bool(getattr(profile, "forward_allow_remote", False))
            self.query_one("#listener-host", Input).value = profile.listener_host or "127.0.0.1"
            port = runtime.listener.port if runtime.listener is not None else profile.listener_port
            self.query_one("#listener-port", Input).value = str(profile.listener_port or port or 0)
        listener = runtime.listener
        if listener is not None:
            self.query_one("#listener-max-body", Input).value = str(max(1, listener.max_body // MIB))
            self.query_one("#listener-require-signatures", Switch).value = listener.require_signatures
        if profile is not None:
            self.query_one("#delivery-url", Input).placeholder = runtime.scrub(self._listener_base()) + "/delivery"
            self.query_one("#session-url", Input).placeholder = runtime.scrub(self._listener_base()) + "/session"
        self._show_dialects()
        lines = await asyncio.to_thread(self._secret_lines)
        self.query_one("#secret-lines", Static).update(Content(lines))
        self._show_hmac_state()
        if not runtime.sandbox_mode:
            from tui.config import load_profiles

            try:
                names = [p.name for p in await asyncio.to_thread(load_profiles)]
            except Exception as error:  # a broken file is reported, the section stays usable
                names, note = [], f" (profiles file: {error})"
            else:
                note = ""
            others = [name for name in names if name != runtime.profile_name]
            self.query_one("#other-profiles", Static).update(
                Content("Other profiles: " + (", ".join(others) if others else "none") + note
                        + " · switch with `gateway-tui --profile NAME`")
            )

    # -- dialects -------------------------------------------------------------------------------------------

    def _show_dialects(self) -> None:
        instance, session = self.runtime.dialects
        self.query_one("#instance-dialect", Select).value = instance.value
        self.query_one("#session-dialect", Select).value = session.value
        sandbox = self.runtime.sandbox_mode
        for selector in ("#instance-dialect", "#session-dialect", "#dialect-apply"):
            self.query_one(selector).disabled = sandbox
        if sandbox:
            self.block_status(self.query_one("#dialect-form")).show_ok(
                "The sandbox speaks what it was started with: gateway-tui --sandbox --instance-dialect zapi "
                "--session-dialect wuzapi."
            )

    @on(Button.Pressed, "#dialect-apply")
    def save_dialects(self) -> None:
        instance = InstanceDialect(str(self.query_one("#instance-dialect", Select).value))
        session = SessionDialect(str(self.query_one("#session-dialect", Select).value))
        self._save_dialects(instance, session)

    @work(group="settings-dialects", exclusive=True, exit_on_error=False)
    async def _save_dialects(self, instance: InstanceDialect, session: SessionDialect) -> None:
        from tui.config import ConfigError

        status = self.block_status(self.query_one("#dialect-form"))
        try:
            await self.runtime.set_dialects(instance, session)
        except (ConfigError, OSError, StartupError) as error:
            status.show_error(f"Dialects not changed: {error}")
            return
        status.show_ok(f"Now writing the instance family as {_DIALECT_TITLES[instance]} and the session family "
                       f"as {_DIALECT_TITLES[session]}; saved to the profile.")
        from tui.widgets.header import GatewayHeader

        for header in self.screen.query(GatewayHeader):
            header.refresh_dialects()

    @on(Button.Pressed, "#connection-check")
    def check_connection(self) -> None:
        from tui.widgets.header import GatewayHeader

        for header in self.screen.query(GatewayHeader):
            header.poll_status()
        self.block_status(self.query_one("#dialect-form")).show_ok("Reading the connection status: see the header.")

    def _secret_lines(self) -> str:
        """Masked values and where each comes from (runs in a thread: keyring calls may block)."""
        from tui.secrets import secret_sources

        runtime = self.runtime
        store = runtime.secrets
        if store is None:
            return "Secrets: not available (the secret store did not open)."
        profile = runtime.profile_name
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
        self._write_secret(name, value)

    @on(Button.Pressed, "#secret-remove")
    def remove_secret(self) -> None:
        name = self._chosen_secret()

        def answered(yes: bool | None) -> None:
            if yes:
                self._write_secret(name, None)

        self.app.push_screen(
            ConfirmScreen(f"Remove the {name.label} of this profile?", "The app cannot reach the gateway without it "
                          "until you enter it again.", confirm_label="Remove"),
            answered,
        )

    @work(group="settings-secret", exclusive=True, exit_on_error=False)
    async def _write_secret(self, name: SecretName, value: str | None) -> None:
        status = self.block_status(self.query_one("#secrets-block"))
        account = self.runtime.current
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
        await self.runtime.reload_credentials()
        done = "removed" if value is None else "replaced"
        status.show_ok(f"{name.label} {done}; the gateway calls use it from now on.")
        self.refresh_profile()

    # -- gateway settings -----------------------------------------------------------------------------------

    @on(Button.Pressed, "#description-apply")
    def set_description(self) -> None:
        form = self.query_one("#description-form", Form)
        request = validated(form.rows(), lambda: ProfileDescription(value=value_of(self.query_one("#description"))),
                            status=self.block_status(form))
        if request is not None:
            self.run_operation(PROFILE_DESCRIPTION, request,
                               group="description", busy=form, status=self.block_status(form),
                      done=lambda _: self.block_status(form).show_ok(f"Profile description set to {request.value!r}."))

    @on(Button.Pressed, "#delivery-apply")
    def set_delivery_webhook(self) -> None:
        """Set the delivery webhook; an empty URL removes it (the spec's operation 16), after asking."""
        form = self.query_one("#delivery-form", Form)
        request = validated(form.rows(), lambda: DeliveryWebhook(value=value_of(self.query_one("#delivery-url"))),
                            status=self.block_status(form))
        if request is None:
            return

        def send() -> None:
            done = (f"Delivery notifications now go to {request.value}." if request.value
                    else "Delivery webhook removed: the gateway no longer posts delivery notifications.")
            self.run_operation(UPDATE_WEBHOOK_DELIVERY, request,
                               group="delivery", busy=form, status=self.block_status(form),
                               done=lambda _: self.block_status(form).show_ok(done))

        if request.value:
            send()
            return
        self.app.push_screen(
            ConfirmScreen("Remove the delivery webhook?", "The URL is empty: the gateway stops posting delivery "
                          "notifications, so sent messages show no delivery events.", confirm_label="Remove"),
            lambda yes: send() if yes else self.block_status(form).show_ok("Not removed; type a URL to set one."),
        )

    @on(Button.Pressed, "#session-apply")
    def set_session_webhook(self) -> None:
        form = self.query_one("#session-webhook-form", Form)
        events = list(self.query_one("#session-events", SelectionList).selected)
        active = self.query_one("#session-active", Switch).value

        def build() -> WebhookUpdate:
            if not events:
                raise FieldProblems({"events": "choose at least one event kind"})
            return WebhookUpdate(webhook=_required(form, "#session-url", "webhook"), events=events, active=active)

        request = validated(form.rows(), build, status=self.block_status(form))
        if request is not None:
            self.run_operation(WEBHOOK, request, group="session-webhook",
                               busy=form, status=self.block_status(form),
                      done=lambda config: self.block_status(form).show_ok(
                          f"Session webhook: {config.webhook or request.webhook} · {', '.join(events)} · "
                          f"{'active' if active else 'inactive'}."))

    def _listener_base(self) -> str:
        return self.runtime.listener_base()

    @on(Button.Pressed, "#point-webhooks")
    def point_webhooks(self) -> None:
        base = self._listener_base()
        form = self.query_one("#session-webhook-form", Form)
        if not base:
            self.block_status(form).show_error("The listener is not running; nothing was changed.")
            return
        def done(_: Any) -> None:
            self.block_status(form).show_ok(
                f"Both webhooks now point at {self.runtime.scrub(base)} (/delivery and /session).")
            self._show_webhook_drift()

        self.call("Point webhooks at the listener", lambda _: self.runtime.configure_webhooks(base),
                  group="session-webhook", family="instance", busy=form, status=self.block_status(form), done=done)

    # -- HMAC key -------------------------------------------------------------------------------------------

    def _show_hmac_state(self) -> None:
        runtime = self.runtime
        disagrees = self.query_one("#hmac-warning").has_class("-shown")
        if runtime.hmac_key_set and disagrees:
            text = "The profile has a key, but the gateway does not sign with it (see the warning at the top)."
        elif runtime.hmac_key_set:
            text = "A key is set: the listener verifies every event with it."
        else:
            text = "No key: events are stored with the verdict \"no key configured\"."
        self.query_one("#hmac-state", Static).update(Content(text))

    @on(Button.Pressed, "#hmac-set")
    @on(Input.Submitted, "#hmac-key")
    def set_hmac_key(self) -> None:
        form = self.query_one("#hmac-form", Form)
        request = validated(form.rows(), lambda: HmacKey(hmac_key=self.query_one("#hmac-key", Input).value),
                            status=self.block_status(form))
        if request is not None:
            self._apply_hmac_key(request.hmac_key, generated=False)

    @on(Button.Pressed, "#hmac-generate")
    def generate_hmac_key(self) -> None:
        """Asks first: the new key replaces the old one on the gateway and in the listener at once."""
        form = self.query_one("#hmac-form", Form)
        replaces = self.runtime.hmac_key_set

        def answered(yes: bool | None) -> None:
            if yes:
                self._apply_hmac_key(random_secrets.token_urlsafe(GENERATED_KEY_BYTES), generated=True)
            else:
                self.block_status(form).show_ok("Not generated; the key is unchanged.")

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
        form = self.query_one("#hmac-form", Form)

        def done(_: Any) -> None:
            self.query_one("#hmac-key", Input).value = ""
            self._set_warning("#hmac-warning", "")
            self._show_hmac_state()
            origin = "A new random key" if generated else "The key"
            new_key = self.query_one("#hmac-new-key", CopyableValue)
            if generated:
                new_key.show(key, shown=mask_secret(key))
            else:
                new_key.clear()
            # Hiding the warning above moves the block: the answer line brings itself (and the focused button)
            # back into view (tui.widgets.feedback.in_view).
            self.block_status(form).show_ok(
                f"{origin} ({mask_secret(key)}) is set on the gateway and used by the listener now.")

        self.call("Set HMAC key", lambda _: self.runtime.set_hmac_key(key), group="hmac", family="session", busy=form,
                  status=self.block_status(form), done=done)

    @on(Button.Pressed, "#hmac-status")
    def hmac_status(self) -> None:
        form = self.query_one("#hmac-form", Form)

        def done(status: Any) -> None:
            configured = bool(status.hmac_key)
            self.block_status(form).show_ok(f"Gateway: {'a key is configured' if configured else 'no key configured'} "
                                f"({mask_secret(status.hmac_key) if configured else 'nothing to show'}).")
            disagreement = None
            if configured != self.runtime.hmac_key_set:
                disagreement = HmacDisagreement.PROFILE_ONLY if self.runtime.hmac_key_set else HmacDisagreement.GATEWAY_ONLY
            self.show_hmac_disagreement(disagreement)

        self.run_operation(HMAC_STATUS, NoBody(), group="hmac", busy=form,
                  status=self.block_status(form), done=done)

    @on(Button.Pressed, "#hmac-delete")
    def delete_hmac_key(self) -> None:
        form = self.query_one("#hmac-form", Form)

        def answered(yes: bool | None) -> None:
            if yes:
                def deleted(_: Any) -> None:
                    self._set_warning("#hmac-warning", "")
                    self._show_hmac_state()
                    self.block_status(form).show_ok("HMAC key deleted: events are no longer signed or verified.")

                self.call("Delete HMAC key", lambda _: self.runtime.delete_hmac_key(), group="hmac", family="session",
                          busy=form, status=self.block_status(form), done=deleted)

        self.app.push_screen(
            ConfirmScreen("Delete the HMAC signing key?", "The gateway stops signing events and the listener can no "
                          "longer tell authentic events from forged ones.", confirm_label="Delete"),
            answered,
        )

    # -- proxy ----------------------------------------------------------------------------------------------

    @on(Button.Pressed, "#proxy-apply")
    def set_proxy(self) -> None:
        form = self.query_one("#proxy-form", Form)
        enable = self.query_one("#proxy-enable", Switch).value
        url = self.query_one("#proxy-url", Input).value.strip()
        request = validated(form.rows(), lambda: ProxyConfig(enable=enable, proxy_url=url if enable else ""),
                            status=self.block_status(form))
        if request is not None:
            shown = redact_url_credentials(request.proxy_url)
            self.run_operation(PROXY, request, group="proxy", busy=form,
                      status=self.block_status(form),
                      done=lambda _: self.block_status(form).show_ok(f"Proxy {'enabled: ' + shown if enable else 'disabled'}."))

    # -- listener and theme ---------------------------------------------------------------------------------

    @on(Button.Pressed, "#listener-apply")
    def change_listener(self) -> None:
        form = self.query_one("#listener-form", Form)
        host = value_of(self.query_one("#listener-host"))
        port_text = value_of(self.query_one("#listener-port"))
        problems = {}
        if not host or " " in host:
            problems["listener_host"] = "an address such as 127.0.0.1"
        if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
            problems["listener_port"] = "a port from 0 to 65535"
        max_body_text = value_of(self.query_one("#listener-max-body"))
        if not max_body_text.isdigit() or not 1 <= int(max_body_text) <= 4096:
            problems["max_body"] = "a size from 1 to 4096 MiB"
        form.clear_errors()
        if problems:
            form.apply_errors(problems)
            return
        require = self.query_one("#listener-require-signatures", Switch).value
        self._restart_listener(host, int(port_text), int(max_body_text) * MIB, require)

    @work(group="settings-listener", exclusive=True, exit_on_error=False)
    async def _restart_listener(self, host: str, port: int, max_body: int, require_signatures: bool) -> None:
        status = self.block_status(self.query_one("#listener-form"))
        runtime = self.runtime
        try:
            await runtime.restart_listener(host, port, max_body=max_body, require_signatures=require_signatures)
        except OSError as error:
            status.show_error(f"The listener could not bind {host}:{port} ({error.strerror or error}); "
                              "it keeps running on its old address.")
            return
        saved = await self._save_profile(
            listener_host=host, listener_port=port, max_body=max_body, require_signatures=require_signatures
        )
        moved = f"Listener now on {runtime.listener_address()}{' and saved to the profile' if saved else ''}."
        self._show_webhook_drift()
        if runtime.webhook_drift() is not None:
            status.show_ok(moved + " The gateway still sends events to the old address, so sends produce no events "
                           "here until the webhooks point here (the button at the top of Settings).")
            self.app.notify("The listener moved: sends produce no events until the webhooks point here "
                            "(Settings, top: Point the webhooks here).", severity="warning", markup=False, timeout=10)
        else:
            status.show_ok(moved + " Point the webhooks at it if the gateway should follow.")

    # -- forwarding -------------------------------------------------------------------------------------------

    @on(Button.Pressed, "#forward-apply")
    def forward_to_app(self) -> None:
        form = self.query_one("#forward-form", Form)
        form.clear_errors()
        url = value_of(self.query_one("#forward-url"))
        if not url:
            form.apply_errors({"forward_to": "required (Stop forwarding turns it off)"})
            return
        self._set_forward(url, self.query_one("#forward-remote", Switch).value)

    @on(Button.Pressed, "#forward-stop")
    def stop_forwarding(self) -> None:
        self.query_one("#forward-form", Form).clear_errors()
        self._set_forward("", False)

    @work(group="settings-forward", exclusive=True, exit_on_error=False)
    async def _set_forward(self, url: str, allow_remote: bool) -> None:
        form = self.query_one("#forward-form", Form)
        status = self.block_status(form)
        try:
            await self.runtime.set_forward_target(url or None, allow_remote=allow_remote)
        except ValueError as error:  # ForwardTargetRefused: not a URL, or a remote host not allowed
            form.apply_errors({"forward_to": str(error)})
            return
        saved = await self._save_profile(forward_to=url, forward_allow_remote=allow_remote)
        where = " and saved to the profile" if saved else ""
        if url:
            status.show_ok(f"Forwarding every accepted event to {url}{where}.")
        else:
            status.show_ok(f"Forwarding stopped{where}.")

    @on(Select.Changed, "#theme")
    def change_theme(self, event: Select.Changed) -> None:
        if event.value is Select.NULL or event.value == self.app.theme:
            return
        self.app.theme = str(event.value)
        self._persist_theme(str(event.value))

    @work(group="settings-theme", exclusive=True, exit_on_error=False)
    async def _persist_theme(self, theme: str) -> None:
        await self._save_profile(theme=theme)

    async def _save_profile(self, **changes: Any) -> bool:
        """Save changed fields of a real profile (the sandbox has nothing on disk). False when not saved."""
        status = self.block_status(self.query_one("#listener-form"))
        runtime = self.runtime
        if runtime.sandbox_mode or runtime.profile is None:
            return False
        from tui.config import ConfigError, save_profile

        updated = runtime.profile.model_copy(update=changes)
        try:
            await asyncio.to_thread(save_profile, updated)
        except (ConfigError, OSError) as error:
            status.show_error(f"Not saved to the profile: {error}")
            return False
        runtime.profile = updated
        return True


def _required(form: Form, selector: str, field: str) -> str:
    value = value_of(form.query_one(selector))
    if not value:
        raise FieldProblems({field: "required"})
    return value
