"""`Accounts.named`, asked for every event stored (the account it came for), answers from an index of the open
accounts: it must follow the list as accounts are opened beside the first, and when the list is replaced."""

from __future__ import annotations

from tui.api.exchange import RequestLog
from tui.core.accounts.accounts import Accounts
from tui.core.feed.bus import EventBus
from tui.core.feed.feed import EventFeed
from tui.local.config import Profile
from tui.local.secrets import MemorySecrets


def profile(name: str) -> Profile:
    return Profile(name=name, session_url="http://127.0.0.1:9")


def test_named_finds_the_accounts_opened_after_it_was_asked_and_after_the_list_was_replaced():
    accounts = Accounts(EventFeed(EventBus(), owner_of=lambda _event: None), RequestLog(10), {},
                        sandbox_mode=False, http_timeout=1.0)
    secrets = MemorySecrets()
    first = accounts.open_current(profile("box"), secrets)
    assert accounts.named("box") is first and accounts.named("shop") is None
    shop = accounts.new(profile("shop"), secrets)
    accounts.all.append(shop)  # as the start opens the others
    assert accounts.named("shop") is shop
    again = accounts.open_current(profile("shop"), secrets)  # a new list
    assert accounts.named("shop") is again and accounts.named("box") is None
