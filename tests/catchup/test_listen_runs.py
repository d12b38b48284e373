"""`listen` keeps its runs in the store (issue 35 item 4): each start and stop is recorded, and a start after a stop
says for how long nothing was received. Real `listen` processes, waits on conditions."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.alerts.test_listen_alerts import stop
from tests.webhooks.conftest import no_listener_left_running  # noqa: F401  (an autouse fixture, by import)
from tests.webhooks.headless import start_headless


async def test_listen_records_its_runs_and_names_the_gap_since_the_last(tmp_path: Path) -> None:
    db = tmp_path / "events.sqlite3"
    process, _url = await start_headless(db)
    first = await stop(process)
    assert "not listening" not in first
    process, _url = await start_headless(db)
    second = await stop(process)
    assert "not listening " in second and "what the gateways sent then was not received" in second
    with sqlite3.connect(db) as connection:
        runs = connection.execute("SELECT started_us, stopped_us FROM listener_runs ORDER BY id").fetchall()
    assert len(runs) == 2 and all(stopped is not None and stopped >= started for started, stopped in runs)
    assert runs[1][0] >= runs[0][1]
