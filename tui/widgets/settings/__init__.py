"""The Settings section's blocks, one widget per file, composed by `tui.screens.settings.SettingsSection`."""
