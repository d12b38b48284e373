"""The Settings section's blocks, one widget per file, composed by `tui.ui.sections.settings.section.SettingsSection`."""
