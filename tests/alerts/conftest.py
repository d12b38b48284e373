"""The alert tests start real `listen` processes: the webhook tests' guard kills any a failed test left running."""

from tests.webhooks.conftest import no_listener_left_running  # noqa: F401  (an autouse fixture, by import)
