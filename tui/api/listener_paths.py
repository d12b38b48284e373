"""Where the listener takes each gateway's webhooks: a family's path, and under `listen --all` the same path below
`/a/<profile>`. Here, at the bottom, because both sides need them: the listener (tui.webhooks.families) to tell a
path's family, the gateways' fleet imports (tui.gateways.*.fleet) to point each account's webhooks at its path."""

from __future__ import annotations

INSTANCE_PATH = "/delivery"
SESSION_PATH = "/session"
EVOLUTION_PATH = "/evolution"
"""Evolution's one webhook (with "webhook by events" on, Evolution appends a path per event kind to it)."""
ACCOUNT_PREFIX = "/a/"
"""One listener for several accounts (issue 26): each account's paths are the paths above under `/a/<profile>`."""
