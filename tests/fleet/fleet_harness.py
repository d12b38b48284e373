"""Several accounts for the fleet tests: N in-process sandbox gateways on port 0, each with its own tokens and its
own phone number, and one profile per gateway (fixed names `shop-1` … `shop-N`) whose secrets are in the private
0600 file (so a `gateway-tui` process started by a test reads them as the app does)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from tui.local import config
from tui.gateways.sandbox import SandboxGateway
from tui.sandbox.state import seed_demo_state
from tui.local.secrets import SecretName, open_secret_store


def number_of(index: int) -> str:
    return f"55119000000{index:02d}"


def profile_name(index: int) -> str:
    return f"shop-{index}"


@contextlib.asynccontextmanager
async def sandbox_fleet(count: int, *, dialects: tuple[str, str] = ("zapi", "wuzapi"),
                        instance_only: bool = False) -> AsyncIterator[list[SandboxGateway]]:
    """`instance_only`: the profiles have the instance family alone (Z-API accounts, which no session read names)."""
    gateways = []
    secrets = open_secret_store(True)
    try:
        for index in range(1, count + 1):
            tokens = {name: f"{name}-{index}-SECRET" for name in ("instance", "client", "session")}
            gateway = SandboxGateway(
                instance_id=f"inst{index}", instance_token=tokens["instance"], client_token=tokens["client"],
                session_token=tokens["session"], instance_dialect=dialects[0], session_dialect=dialects[1],
                delivery_delay=0.0, state=seed_demo_state(own_phone=number_of(index)),
            )
            await gateway.start()
            gateways.append(gateway)
            base = gateway.url.rstrip("/")
            name = profile_name(index)
            config.save_profile(config.Profile(
                name=name, base_url=base, instance_id=f"inst{index}", session_url=None if instance_only else base,
                secrets_file=True, instance_dialect=dialects[0], session_dialect=dialects[1], listener_port=0,
            ))
            secrets.set(name, SecretName.INSTANCE_TOKEN, tokens["instance"])
            secrets.set(name, SecretName.CLIENT_TOKEN, tokens["client"])
            if not instance_only:
                secrets.set(name, SecretName.SESSION_TOKEN, tokens["session"])
        yield gateways
    finally:
        for gateway in gateways:
            await gateway.stop()
