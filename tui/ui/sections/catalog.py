"""Catalog: look up a product; price in its currency from the smallest unit, images as links (spec op 15)."""

from __future__ import annotations

from urllib.parse import urlsplit

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.style import Style
from textual.widgets import Button, Input, Static

from tui.api.models import Product, ProductQuery, format_price
from tui.api.operations import PRODUCTS, OperationId, Section
from tui.ui.keymap import bindings_for, label
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.forms import FieldRow, Form, TextInput, validated, value_of
from tui.ui.widgets.operation_form import DerivedForms
from tui.ui.widgets.section import OperationSection

# The gateway operations of this section with a hand-built form (op id -> its first field). Any other operation of
# the section gets a form read off its row (tui.ui.widgets.operation_form), below the product.
HAND_BUILT: dict[str, str] = {OperationId.PRODUCTS: "product-id"}


def _link(url: str) -> Content:
    """A clickable link when the URL is http(s); plain text otherwise. The URL is never parsed as markup."""
    if urlsplit(url).scheme in ("http", "https"):
        return Content.styled(url, Style(underline=True, link=url))
    return Content(url)


def product_content(product: Product) -> Content:
    lines: list[Content | str] = [
        Content.styled(product.name or "(no name)", "bold"),
        "\n",
        Content.assemble("Price        ", (format_price(product.price, product.currency), "bold $text-success")),
        "\n",
        f"Product id   {product.productId}",
        "\n",
        f"Visibility   {'hidden from the catalog' if product.isHidden else 'visible'}",
        "\n",
        "Link         ",
        _link(product.url) if product.url else "—",
        "\n\n",
        Content.styled("Description", "bold"),
        "\n",
        product.description or "—",
        "\n\n",
        Content.styled(f"Images ({len(product.images)})", "bold"),
    ]
    for image in product.images:
        lines += ["\n", "• ", _link(image)]
    return Content.assemble(*lines)


class CatalogSection(OperationSection):
    # Its one gateway operation (products) reaches the palette from tui.api.operations.
    HELP = """\
## Catalog

Type a **product id** and press Enter or **ctrl+s** to look it up. The price is shown in the
product's currency, converted from the smallest unit the gateway sends (cents for BRL/USD, none for
JPY, …). The product link and images are links: click them (or copy the text).

**Escape** cancels a running lookup.
"""

    BINDINGS = bindings_for("catalog")

    DEFAULT_CSS = """
    CatalogSection .lookup-bar { height: auto; }
    CatalogSection .lookup-bar > FieldRow { width: 1fr; }
    CatalogSection .lookup-bar > Button { margin-top: 1; }
    CatalogSection #product { height: auto; margin-top: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static("Catalog", classes="section-title")
        with Form(id="product-form"):
            with Horizontal(classes="lookup-bar"):
                yield FieldRow("Product id", TextInput(id="product-id", placeholder="e.g. 7201826153271612"), field="PRODUCT_ID")
                yield Button(label("Look up", "catalog.lookup"), id="lookup-product", variant="primary")
        yield Static("", id="product", classes="panel")
        yield ErrorLine(id="catalog-status")
        yield DerivedForms(Section.CATALOG, HAND_BUILT, run_binding="catalog.lookup")

    @property
    def status(self) -> ErrorLine:
        return self.query_one("#catalog-status", ErrorLine)

    def open_operation(self, op_id: str) -> None:
        if self.open_derived(op_id):
            return
        if op_id not in HAND_BUILT:
            raise KeyError(op_id)
        self.call_after_refresh(self.query_one(f"#{HAND_BUILT[op_id]}", Input).focus)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_lookup()

    @on(Button.Pressed, "#lookup-product")
    def action_lookup(self) -> None:
        if self.submit_derived():  # ctrl+s in a form read off the table sends that one
            return
        form = self.query_one("#product-form", Form)
        query = validated(
            form.rows(), lambda: ProductQuery(PRODUCT_ID=value_of(self.query_one("#product-id"))), status=self.status
        )
        if query is None:
            return
        self.run_operation(
            PRODUCTS,
            query,
            title="Look up product",
            busy=form,
            status=self.status,
            done=self._shown,
        )

    def _shown(self, product: Product) -> None:
        self.query_one("#product", Static).update(product_content(product))
        self.status.clear()
