"""The Account section's parts (issue 23), a widget per file: a family's connection state, the QR code, the
phone number field, and the words under them. `tui.ui.sections.account.section.AccountSection` composes them."""
