"""The app points an Evolution profile's one webhook at the listener's `/evolution` path, whole (`POST
/webhook/set/{instance}`: on, the events the app reads, media bytes inline), as `fleet import` and the doctor's
fix do; the sandbox's Evolution dialect keeps what it was sent (its `/webhook/find` row)."""

from __future__ import annotations

from tui.api.dialects import InstanceDialect
from tui.local.config import Profile
from tui.local.secrets import KeyringSecrets, SecretName

INSTANCE = "office"
API_KEY = "B6D711FC-DE4D-4FD5-9365-44120E713976"
NEEDED = {"MESSAGES_UPSERT", "MESSAGES_UPDATE", "CONNECTION_UPDATE", "SEND_MESSAGE", "QRCODE_UPDATED"}


async def test_the_app_points_evolutions_webhook_whole_at_its_own_path(monkeypatch) -> None:
    from tui.core.runtime import Runtime
    from tui.gateways.sandbox import SandboxGateway
    from tui.local import config

    sandbox = SandboxGateway(instance_id=INSTANCE, instance_token=API_KEY, client_token="unused-client-token",
                             session_token="unused-session-token", instance_dialect=InstanceDialect.EVOLUTION,
                             delivery_delay=0.0)
    await sandbox.start()
    office = Profile(name="office", base_url=sandbox.url, instance_id=INSTANCE,
                     instance_dialect=InstanceDialect.EVOLUTION, listener_port=0)
    monkeypatch.setattr(config, "load_profiles", lambda: [office])
    KeyringSecrets().set("office", SecretName.INSTANCE_TOKEN, API_KEY)
    runtime = Runtime(profile="office")
    await runtime.start()
    try:
        base = runtime.webhooks.listener_base()
        await runtime.webhooks.configure_webhooks(base)
        stored = sandbox.state.evolution_webhook
        assert stored is not None
        assert (stored["url"], stored["enabled"], stored["webhookBase64"]) == (f"{base}/evolution", True, True)
        assert NEEDED <= set(stored["events"])
    finally:
        await runtime.stop()
        await sandbox.stop()
