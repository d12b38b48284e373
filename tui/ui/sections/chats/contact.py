"""The contact card's form: name, phone, e-mail, organisation and title, built into a vCard (session family)."""

from __future__ import annotations

from pydantic import ValidationError
from textual.app import ComposeResult
from textual.containers import Horizontal

from tui.api.dialects import InstanceDialect
from tui.api.models import PHONE_RULE, ContactCard, field_errors, is_phone
from tui.api.vcard import build_vcard
from tui.ui.sections.chats.kind_form import KindForm, text_row
from tui.ui.widgets.forms import FieldProblems, PhoneValidator, optional


class ContactForm(KindForm):
    """`#form-contact`."""

    def compose(self) -> ComposeResult:
        with Horizontal(classes="form-cols"):
            yield text_row("Contact name", "Name", "contact-name")
            yield text_row("Contact phone", "contact_phone", "contact-phone", validators=[PhoneValidator()])
        with Horizontal(classes="form-cols"):
            yield text_row("E-mail (optional)", "contact_email", "contact-email")
            yield text_row("Organisation (optional)", "contact_organization", "contact-organization")
            yield text_row("Title (optional)", "contact_title", "contact-title")

    def build(self, recipient: str, dialect: InstanceDialect) -> ContactCard:
        name = self.text("contact-name")
        contact_phone = self.text("contact-phone")
        problems: dict[str, str] = {}
        if not name:
            problems["Name"] = "must not be empty"
        if not is_phone(contact_phone):
            problems["contact_phone"] = f"must be {PHONE_RULE}"
        email = optional(self.text("contact-email"))
        if email is not None and ("@" not in email or email.startswith("@") or email.endswith("@")):
            problems["contact_email"] = "must be an e-mail address like name@example.com"
        if problems:
            # Check the rest of the card too, so every problem shows at once.
            try:
                ContactCard(Phone=recipient, Name=name or "-", Vcard="BEGIN:VCARD\nEND:VCARD")
            except ValidationError as error:
                problems = {**field_errors(error), **problems}
            raise FieldProblems(problems)
        vcard = build_vcard(
            name,
            contact_phone,
            email=email,
            organization=optional(self.text("contact-organization")),
            title=optional(self.text("contact-title")),
        )
        return ContactCard(Phone=recipient, Name=name, Vcard=vcard)
