"""Campaigns: one message to many recipients who asked to hear from you, paced per account, durable across
crashes, never sent twice (issue 34).

    recipients.py  the recipients file (CSV or JSON lines, a `phone` column, the template's fields)
    template.py    the message template (`{name}`, `{order}` from the columns)
    pacer.py       a random gap between two sends of one account, quiet hours, the daily cap of first contacts
    ledger.py      the durable state: campaigns and each recipient's state (its own SQLite file, see there)
    optout.py      the opt-out list (a file) and the stop word read from recipients' replies
    store_view.py  what the profile's event store says: sent messages, delivered/read, replies
    runner.py      the sending loop: `sending` before the request, resolved after; the safety stops
    sending.py     a profile's gateway as the runner sends through it (the `call`/`send` path)
    results.py     each recipient's state with the store's delivered/read, for status and export
"""
