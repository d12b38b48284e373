"""Catch-up after downtime (issue 35 item 4): the store keeps the listener's runs, so a start knows the gap since
the last one ended; for each account whose gateway lists recent messages (WuzAPI's history, Z-API's chat messages, Evolution's
findMessages: tui.gateways.history), the messages of the gap
are stored once, marked recovered, and the inbox gets one line ("12 messages recovered from 03:10–03:42"); what no
gateway lists is named as a gap.

    run, gap = store.write(lambda c: listener_started(c, now_us))     # at the listener's start
    results = await catch_up_accounts(store, gap, [AccountClients("", (instance, session))])
    store.write(lambda c: listener_stopped(c, run, now_us))          # at its stop

An account's own disconnected periods (its gateway up, its link to WhatsApp not) are recorded from the connection
events the listener stores and caught up when they end (tui.core.catchup.outages).
"""

from tui.core.catchup.accounts import AccountClients, catch_up_accounts, family_only, profile_clients
from tui.core.catchup.recovery import CatchUp, catch_up, newest_notes, recovered_ids
from tui.core.catchup.outages import OutageCatchUp
from tui.core.catchup.runs import Gap, listener_started, listener_stopped

__all__ = ["AccountClients", "CatchUp", "Gap", "OutageCatchUp", "catch_up", "catch_up_accounts", "family_only",
           "listener_started", "listener_stopped", "newest_notes", "profile_clients", "recovered_ids"]
