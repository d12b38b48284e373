"""The `http://host:port` base URL of a server we run or reach on loopback: an IPv6 host in brackets."""

from __future__ import annotations


def http_base(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"
