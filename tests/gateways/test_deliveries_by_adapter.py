"""Webhook classification sits behind the adapter interface (issue 36 item 4): every registered gateway says how its
deliveries read, and a gateway's new format is classified by adding it to its adapter, nothing else."""

from __future__ import annotations

import dataclasses

from tui.api.deliveries import NO_DELIVERIES, Description
from tui.gateways import ADAPTERS
from tui.gateways.spec import SPEC
from tui.webhooks import classify as classifier


def test_every_registered_gateway_describes_its_deliveries():
    assert all(adapter.deliveries is not NO_DELIVERIES for adapter in ADAPTERS)


class _ToyDeliveries:
    """A made-up gateway whose deliveries say `{"toy": "<kind>", "from": jid, "ids": [...]}`."""

    def describe(self, payload: dict) -> Description | None:
        kind = payload.get("toy")
        if not isinstance(kind, str):
            return None
        return Description(f"toy.{kind}", f"toy.{kind} from {payload.get('from')}", list(payload.get("ids", [])))


def test_a_new_gateways_format_is_classified_once_its_adapter_has_it(monkeypatch):
    payload = {"toy": "hello", "from": "5511999999999", "ids": ["T1", "T1", "T2"]}
    assert classifier.classify(payload)[0] == "unknown"
    toy = dataclasses.replace(SPEC, name="toy", dialects={}, deliveries=_ToyDeliveries())
    monkeypatch.setattr(classifier, "ADAPTERS", (*ADAPTERS, toy))
    assert classifier.classify(payload) == ("toy.hello", "toy.hello from 5511999999999", ("T1", "T2"))

