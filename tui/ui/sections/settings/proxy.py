"""Settings' proxy (operation 20): enabled, and a URL in one of four forms, its password masked as typed."""

from __future__ import annotations

from typing import Any

from rich.highlighter import Highlighter
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, Input, Static, Switch

from tui.api.models import PROXY_FORMS, ProxyConfig, redact_url_credentials
from tui.api.operations import PROXY
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.forms import FieldRow, Form, TextInput, validated
from tui.ui.sections.settings.block import block_status, section_of


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


class PasswordMask(Highlighter):
    """Shows the password of a proxy URL as `•`, one per character, so the cursor stays where it is typed; the host
    and the user stay readable. A highlighter is the public way into what an Input draws (Textual hands it the text
    before it is shown); the value itself is untouched."""

    def highlight(self, text: Text) -> None:
        start, end = password_span(text.plain)
        if start != end:
            text.plain = text.plain[:start] + "•" * (end - start) + text.plain[end:]


class ProxyUrlInput(TextInput):
    """The proxy URL with its host and user in view and only the password masked: `socks5://user:•••@host:1080`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(highlighter=PasswordMask(), **kwargs)


class ProxyBlock(Form):
    """`#proxy-form`."""

    def compose(self) -> ComposeResult:
        yield Static("Proxy (operation 20)", classes="block-title")
        with Horizontal(classes="switch-row"):
            yield Static("Enabled")
            yield Switch(value=False, id="proxy-enable")
        yield FieldRow("Proxy URL", ProxyUrlInput(id="proxy-url", placeholder="socks5://host:1080"),
                       field="proxy_url", hint="One of: " + ", ".join(PROXY_FORMS))
        with Horizontal(classes="actions"):
            yield Button("Set proxy", id="proxy-apply", compact=True)
        yield ErrorLine(classes="block-status")

    @on(Button.Pressed, "#proxy-apply")
    def set_proxy(self) -> None:
        enable = self.query_one("#proxy-enable", Switch).value
        url = self.query_one("#proxy-url", Input).value.strip()
        status = block_status(self)
        request = validated(self.rows(), lambda: ProxyConfig(enable=enable, proxy_url=url if enable else ""),
                            status=status)
        if request is not None:
            shown = redact_url_credentials(request.proxy_url)
            section_of(self).run_operation(
                PROXY, request, group="proxy", busy=self, status=status,
                done=lambda _: status.show_ok(f"Proxy {'enabled: ' + shown if enable else 'disabled'}."))
