"""A dialect the sandbox does not speak yet (Evolution API's: its client side came first, issue 33) refuses to
start, naming the dialect and what it can be run with, instead of failing later on a missing route table."""

from __future__ import annotations

import pytest

from tui.api.dialects import InstanceDialect
from tui.gateways.sandbox import SandboxFleet, SandboxGateway


def test_the_sandbox_refuses_to_start_in_a_dialect_it_does_not_speak() -> None:
    with pytest.raises(ValueError, match=r"does not speak the evolution instance dialect yet.*spec or zapi"):
        SandboxGateway(instance_token="i", client_token="c", session_token="s",
                       instance_dialect=InstanceDialect.EVOLUTION)


def test_nor_does_a_fleet_of_sandbox_accounts() -> None:
    with pytest.raises(ValueError, match="does not speak the evolution instance dialect yet"):
        SandboxFleet(accounts=2, admin_token="a", client_token="c", instance_dialect=InstanceDialect.EVOLUTION)
