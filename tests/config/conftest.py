from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.sandbox.test_fleet import ENV, start, stop


@pytest.fixture(scope="module")
def fleet_sandbox() -> Iterator[str]:
    """`sandbox --accounts 3` (Z-API and WuzAPI dialects) in a process of its own, one per test module: its URL."""
    process, url, _banner = start("--accounts", "3", "--session-dialect", "wuzapi", "--instance-dialect", "zapi",
                                  env=dict(os.environ, **ENV))
    yield url
    assert stop(process) == 0
