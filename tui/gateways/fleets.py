"""The gateways' fleets for `gateway-tui fleet import` (tui.gateways.fleet_source): one per gateway whose admin API
lists its accounts. Adding one is its package's `fleet.py` and one line here."""

from __future__ import annotations

from collections.abc import Mapping

from tui.gateways.evolution.fleet import EvolutionFleet
from tui.gateways.fleet_source import FleetSource
from tui.gateways.wuzapi.fleet import WuzapiFleet
from tui.gateways.zapi.fleet import ZapiFleet

FLEET_SOURCES: Mapping[str, FleetSource] = {
    "wuzapi": WuzapiFleet(),
    "zapi": ZapiFleet(),
    "evolution": EvolutionFleet(),
}
"""By the name the command line uses for the gateway."""


def fleet_source(name: str) -> FleetSource:
    try:
        return FLEET_SOURCES[name]
    except KeyError:
        raise KeyError(f"no gateway named {name!r} has a fleet to import (known: {', '.join(FLEET_SOURCES)})") from None


def source_of(family: str, dialect: str) -> FleetSource | None:
    """The fleet source whose accounts speak `dialect` in `family` (None: no gateway's admin API lists them)."""
    return next((source for source in FLEET_SOURCES.values() if source.sandbox_dialect[:2] == (family, dialect)),
                None)
