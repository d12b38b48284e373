"""The open accounts: opening them, the current one, switching, the fleet board's reads."""
