"""A campaign's pace, and the listener's latency while it runs (issue 34): `gateway-tui campaign start` as a real
process sends to N recipients of the sandbox at a configured pace; the sandbox delivers each send's notification to
a real `gateway-tui listen` writing the same profile's event store the campaign records its sends in, and a prober
posts a signed WuzAPI Message to that listener every --probe-every seconds, timing each answer (the listener
answers after its commit: the time is the store's latency as a gateway sees it).

    uv run python bench/campaign_pace.py [--recipients 500] [--pace 0.05-0.15] [--probe-every 0.02] [--baseline 60]

Reports the gaps between the starts of consecutive sends (from the campaign's own ledger) as min/median/max against
the configured range, and the probe's p50/p99/max (target p99 < 100 ms). Bounded: the campaign's time is about
recipients × the mean gap, and the bench gives up after --timeout seconds. The load average is printed before and
after: the machine may be shared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

TOKENS = {
    "GATEWAY_TUI_INSTANCE_TOKEN": "bench-instance-token",
    "GATEWAY_TUI_CLIENT_TOKEN": "bench-client-token",
    "GATEWAY_TUI_SESSION_TOKEN": "bench-session-token",
}
TARGET_P99_MS = 100.0


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


async def start_listener(env: dict[str, str], db: Path) -> tuple[asyncio.subprocess.Process, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui", "listen", "--port", "0", "--db", str(db), env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, cwd=REPO)
    assert process.stderr is not None
    line = (await asyncio.wait_for(process.stderr.readline(), timeout=60)).decode()
    found = re.search(r"listening on (http://\S+?);", line)
    if found is None:
        process.kill()
        raise SystemExit(f"unexpected first line from the listener: {line!r}")
    return process, found.group(1).rstrip("/")


def probe_body(n: int) -> bytes:
    payload = {"type": "Message", "event": {"Info": {
        "Chat": "5491155553934@s.whatsapp.net", "Sender": "5491155553934@s.whatsapp.net", "IsFromMe": False,
        "IsGroup": False, "ID": f"3EB0PROBE{n:012X}", "Type": "text", "PushName": "Probe",
        "Timestamp": "2026-12-07T10:40:13-03:00", "MediaType": ""}, "Message": {"conversation": f"probe {n}"}}}
    return json.dumps(payload, separators=(",", ":")).encode()


async def probe(url: str, every: float, stop: asyncio.Event, latencies: list[float]) -> None:
    import httpx

    async with httpx.AsyncClient(timeout=10.0) as client:
        n = 0
        while not stop.is_set():
            n += 1
            started = time.perf_counter()
            answer = await client.post(f"{url}/webhook", content=probe_body(n),
                                       headers={"Content-Type": "application/json"})
            latencies.append((time.perf_counter() - started) * 1000)
            if answer.status_code != 200:
                raise SystemExit(f"the listener answered {answer.status_code}: {answer.text[:200]}")
            await asyncio.sleep(every)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipients", type=int, default=500)
    parser.add_argument("--pace", default="0.05-0.15", help="the campaign's --pace (seconds between sends)")
    parser.add_argument("--probe-every", type=float, default=0.02, help="seconds between two probes")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--baseline", type=float, default=None, metavar="SECONDS",
                        help="no campaign: only the probes, for this long (the listener's latency without it)")
    args = parser.parse_args()
    least, _, most = args.pace.partition("-")
    least_s, most_s = float(least), float(most or least)

    with tempfile.TemporaryDirectory(prefix="campaign-pace-") as scratch:
        work = Path(scratch)
        os.environ.update({"GATEWAY_TUI_CONFIG_DIR": str(work / "config"), "GATEWAY_TUI_DATA_DIR": str(work / "data"),
                           **TOKENS})
        env = dict(os.environ)
        from tui.local import config
        from tui.local.paths import profile_events_path
        from tui.gateways.sandbox import SandboxGateway

        gateway = SandboxGateway(instance_id="benchinst", instance_token=TOKENS["GATEWAY_TUI_INSTANCE_TOKEN"],
                                 client_token=TOKENS["GATEWAY_TUI_CLIENT_TOKEN"],
                                 session_token=TOKENS["GATEWAY_TUI_SESSION_TOKEN"], delivery_delay=0.0)
        await gateway.start()
        config.save_profile(config.Profile(name="shop", base_url=gateway.url.rstrip("/"), instance_id="benchinst"))
        listener, url = await start_listener(env, profile_events_path("shop"))
        gateway.state.delivery_url = f"{url}/delivery"  # each send's notification goes to the listener
        people = work / "people.csv"
        people.write_text("phone,name\n" + "".join(f"55119{index:08d},P{index}\n"
                                                  for index in range(1, args.recipients + 1)), encoding="utf-8")
        create = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tui", "campaign", "create", "bench", "--recipients", str(people), "--text",
            "Hi {name}, your order is ready", "--profile", "shop", env=env, cwd=REPO,
            stdout=asyncio.subprocess.DEVNULL)
        assert await create.wait() == 0
        print(f"load average before: {load()}", flush=True)
        stop = asyncio.Event()
        latencies: list[float] = []
        prober = asyncio.create_task(probe(url, args.probe_every, stop, latencies))
        started = time.monotonic()
        if args.baseline is not None:
            await asyncio.sleep(args.baseline)
            stop.set()
            await prober
            print(f"load average after: {load()}", flush=True)
            listener.terminate()
            await listener.wait()
            await gateway.stop()
            report_latency(latencies, "without a campaign")
            return
        campaign = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tui", "campaign", "start", "bench", "--pace", args.pace, "--daily-cap", "none",
            env=env, cwd=REPO, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        _, err = await asyncio.wait_for(campaign.communicate(), args.timeout)
        elapsed = time.monotonic() - started
        stop.set()
        await prober
        print(f"load average after: {load()}", flush=True)
        listener.terminate()
        await listener.wait()
        await gateway.stop()
        if campaign.returncode != 0:
            raise SystemExit(f"the campaign ended with {campaign.returncode}: {err.decode()[-500:]}")
        ledger = sqlite3.connect(work / "data" / "campaigns.sqlite3")
        starts = [row[0] / 1e6 for row in ledger.execute(
            "SELECT sending_us FROM campaign_recipients WHERE campaign = 'bench' ORDER BY sending_us")]
        states = dict(ledger.execute("SELECT state, count(*) FROM campaign_recipients GROUP BY state").fetchall())
        gaps = [later - earlier for earlier, later in zip(starts, starts[1:], strict=False)]
        sent = gateway.state.sends_by_recipient
        print(f"{args.recipients} recipients at --pace {args.pace} in {elapsed:.1f} s: {states}; the sandbox counted "
              f"{sent.total()} sends, at most {max(sent.values())} to one recipient")
        print(f"gaps between sends: min {min(gaps):.3f} s, median {statistics.median(gaps):.3f} s, "
              f"max {max(gaps):.3f} s, mean {statistics.fmean(gaps):.3f} s "
              f"(configured {least_s:g}-{most_s:g} s, mean {(least_s + most_s) / 2:g} s); "
              f"{sum(1 for gap in gaps if gap < least_s)} below the range, "
              f"{sum(1 for gap in gaps if gap > most_s)} above it")
        report_latency(latencies, "while the campaign ran")


def report_latency(latencies: list[float], when: str) -> None:
    latencies.sort()
    p99 = latencies[int(len(latencies) * 0.99) - 1]
    print(f"listener (store) latency {when}, {len(latencies)} probes: p50 {statistics.median(latencies):.1f} ms, "
          f"p99 {p99:.1f} ms, max {latencies[-1]:.1f} ms (target p99 < {TARGET_P99_MS:g} ms: "
          f"{'met' if p99 < TARGET_P99_MS else 'MISSED'})")


if __name__ == "__main__":
    asyncio.run(main())
