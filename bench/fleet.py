"""The fleet at scale (issue 26 "Scale"): one app watching 100 sandbox accounts while 500 signed events a second
reach its one listener, measured as a terminal user sees it; with the listener in the app's process, or (issue 32)
in a `gateway-tui listen --all` process of its own with the app attached to it.

    uv run python bench/fleet.py [--accounts 100] [--rate 500] [--samples 200] [--starts 3] [--keyring]
        [--modes in-process,attached --rounds 3 --kill-listen]

Set-up (all in a scratch directory, torn down at the end): `gateway-tui sandbox --accounts N --session-dialect
wuzapi` as a process (its admin token, GATEWAY_TUI_ADMIN_TOKEN, made up by the bench and given only in the
environment), `gateway-tui fleet import --session-url URL --insecure-storage --listener-port P` into a private
GATEWAY_TUI_CONFIG_DIR (one profile per WuzAPI user, the secrets in the 0600 file, each user's webhook pointed at
`/a/<profile>/session`), then `gateway-tui --all-profiles` in a private tmux server (`-L`) at 120×40.

Measured:
- **start to interactive**, `--starts` times: from `tmux new-session` until the screen shows both the current
  account "● connected" in the header and a key typed at the launch (`z`, sent right after the session starts; the
  app keeps keys typed before it is ready) in the Chats search field. Secrets from the 0600 file, alternating with
  a config of the first profile alone (what the 99 others cost); with `--keyring`
  also with the secrets in gnome-keyring (a private D-Bus session with a throwaway HOME and an unlocked login
  keyring, as tests/config/test_real_keyring.py and .ci/run set it up; a second import stores them there).
- **under load**, in one further start: a separate process (this script, `--load-child`) posts correctly signed
  WuzAPI json-mode `Message` events (each account's own HMAC key, read from the 0600 file) to each account's
  `/a/<profile>/session`, round-robin over the accounts, paced at `--rate` events a second in total over
  keep-alive connections; the bodies and signatures are made before its clock starts. While it runs:
  * key to screen: `--samples` single characters typed with `tmux send-keys -l` into the Chats search field, each
    timed until `capture-pane` shows it in the field (polled as fast as tmux answers), at a human pace (80–160 ms
    between keys); every 16 characters the field is cleared (not timed);
  * the Fleet board (alt+9): `capture-pane` every 50 ms for `--board-seconds`; a refresh is a change of the
    board's rows (their events-per-minute count grows every second while the load runs, so each refresh shows);
    reported: refreshes per second and the longest gap between two;
  * then: every event answered 200 (counted per account by the sender) and stored under its account (rows of the
    store's `events` grouped by `account`, once the count stops growing), and the app's peak RSS (VmHWM in
    /proc/<pid>/status).
  * event to screen: `--event-samples` signed events to the current account, one at a time, each with a text of
    its own, timed from the listener's 200 (the bench's own keep-alive connection) until `capture-pane` shows the
    text (the events panel's row, or the inbox's);
  * the peak RSS of the app and, attached, of `listen`.
Modes (`--modes`, alternated run by run, `--rounds` of each, each run on a fresh data dir, the same imported
config): `in-process`, the app's own listener on the imported port; `attached`, `listen --all --port P` started
first (its first line waited for), then the app, which finds its records and attaches (binds nothing). With
`--kill-listen`, each attached run ends with issue 32's acceptance: `kill -9` of `listen`, the seconds until the
header says "nothing listens", `listen` started again, the seconds until the header names it, three events to it
on screen, and the store's count before the kill still there. The sender stops at its time: at a rate the
listener cannot take, it reports the rate it reached.
Diagnostics: `--spare-current` sends nothing to the current account; `--hide-panel` hides the events panel (F9)
before the keys.
Targets: interactive ≤ 2 s (issue 32: < 3 s with 1,000 accounts), none lost, board ≥ 1 refresh a second, key p99
≤ 50 ms, event to screen p99 < 500 ms, peak RSS < 400 MB. The load
average is printed before and after each part: the machine (2 cores) may be shared. Everything is bounded in
time (`--load-seconds` at most 120) and every process the bench started is ended at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import hmac
import json
import os
import platform
import random
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
APP = Path(sys.executable).with_name("gateway-tui")
SOCKET = f"fleetbench-{os.getpid()}"
WIDTH, HEIGHT = 120, 40
FIELD_ROW = 3  # the Chats search field's line on a 120×40 screen (header, section bar, "Chats · …", field)
TARGETS = {"interactive_s": 2.0, "key_p99_ms": 50.0, "rss_mb": 400.0, "refresh_per_s": 1.0}


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


# -- the terminal ------------------------------------------------------------------------------------------------


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, timeout=30, check=False).stdout


def screen() -> list[str]:
    return tmux("capture-pane", "-p", "-t", "app").splitlines()


def pane_pid() -> int | None:
    text = tmux("display", "-p", "-t", "app", "#{pane_pid}").strip()
    return int(text) if text.isdigit() else None


OPEN_AT_MOST = 100  # the app's --max-accounts: every account of the fleet (set in main)
PYCACHE: str | None = None  # the bytecode cache every start of the app shares (set in main; filled by a warm-up start)


def start_app(env: dict[str, str]) -> float:
    """The app in a fresh private tmux server; returns the clock just before `new-session`.

    With a bytecode cache, as a user's installed app has after its first run: without one (this machine sets
    PYTHONDONTWRITEBYTECODE, and the venv holds no .pyc), every start compiles Textual, pydantic and the app from
    source, ~2.5 s that no user pays."""
    cache = {"PYTHONPYCACHEPREFIX": PYCACHE} if PYCACHE else {}
    dirs = " ".join(f"{name}={value}" for name, value in (env | cache).items())
    command = (f"env -u COLUMNS -u LINES -u PYTHONDONTWRITEBYTECODE {dirs} {APP} --all-profiles "
               f"--max-accounts {OPEN_AT_MOST}")
    started = time.perf_counter()
    subprocess.run(["tmux", "-L", SOCKET, "-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", str(WIDTH),
                    "-y", str(HEIGHT), command], check=True, timeout=30)
    return started


def stop_app(timeout: float = 20.0) -> None:
    pid = pane_pid()
    tmux("kill-server")
    deadline = time.monotonic() + timeout
    while pid is not None and Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if pid is not None and Path(f"/proc/{pid}").exists():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def field_text(lines: list[str]) -> str | None:
    """What the Chats search field shows (None when the line is not the field: another section, no frame yet)."""
    if len(lines) <= FIELD_ROW or "Chats ·" not in lines[FIELD_ROW - 1]:
        return None
    return lines[FIELD_ROW][:42].split("│")[0].strip()


def interactive(lines: list[str]) -> bool:
    return bool(lines) and "● connected" in lines[0] and field_text(lines) == "z"


def time_start(env: dict[str, str], timeout: float = 60.0) -> dict[str, float]:
    """Seconds from `new-session` to the first frame (a header line) and to interactive."""
    started = start_app(env)
    tmux("send-keys", "-t", "app", "-l", "z")
    first = None
    deadline = started + timeout
    while time.perf_counter() < deadline:
        lines = screen()
        now = time.perf_counter()
        if first is None and lines and "gateway-tui" in lines[0]:
            first = now - started
        if interactive(lines):
            return {"first_frame": first if first is not None else now - started, "interactive": now - started}
    raise TimeoutError(f"not interactive within {timeout:.0f} s; the screen:\n" + "\n".join(screen()))


# -- the load --------------------------------------------------------------------------------------------------


def message(profile: str, index: int, serial: int, own: str) -> bytes:
    """A WuzAPI json-mode `Message` (docs/gateways/wuzapi.md §4.3) for account `profile`, from one of 20 peers."""
    peer = f"55219{serial % 20:08d}@s.whatsapp.net"
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    payload = {
        "type": "Message", "instanceName": profile, "userID": hashlib.md5(profile.encode()).hexdigest(),
        "event": {"Info": {"Chat": peer, "Sender": peer, "IsFromMe": False, "IsGroup": False,
                           "ID": f"3EBF{index:012d}", "Type": "text", "PushName": f"Peer {serial % 20}",
                           "Timestamp": stamp},
                  "Message": {"conversation": f"fleet bench message {index} to {own}"}},
    }
    return json.dumps(payload, separators=(",", ":")).encode()


async def load_child(args: argparse.Namespace) -> int:
    """Post `rate × seconds` signed events, round-robin over the profiles; print a JSON report on stdout."""
    sys.path.insert(0, str(REPO))
    from tui.local.secrets import InsecureFileSecrets, SecretName
    from tui.api.signing import SIGNATURE_HEADER

    profiles = args.profiles.split(",")
    secrets = InsecureFileSecrets()
    keys = {name: secrets.get(name, SecretName.HMAC_KEY) or "" for name in profiles}
    missing = [name for name, key in keys.items() if not key]
    if missing:
        print(json.dumps({"error": f"no HMAC key for {', '.join(missing[:5])}"}))
        return 1
    total = int(args.rate * args.seconds)
    requests: list[tuple[str, bytes]] = []
    for index in range(total):
        profile = profiles[index % len(profiles)]
        body = message(profile, index, index // len(profiles), profile)
        signature = hmac.new(keys[profile].encode(), body, hashlib.sha256).hexdigest()
        head = (f"POST /a/{profile}/session HTTP/1.1\r\nHost: 127.0.0.1:{args.port}\r\n"
                f"Content-Type: application/json\r\n{SIGNATURE_HEADER}: {signature}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        requests.append((profile, head + body))
    answered: dict[str, int] = {name: 0 for name in profiles}
    statuses: dict[str, int] = {}
    latencies: list[float] = []
    lateness: list[float] = []
    errors: list[str] = []
    next_index = 0
    print("ready", file=sys.stderr, flush=True)
    started = time.perf_counter()

    async def connection() -> None:
        nonlocal next_index
        reader, writer = await asyncio.open_connection("127.0.0.1", args.port)
        try:
            while next_index < total and time.perf_counter() - started < args.seconds + 5:
                # Past its time (a listener slower than the pace), the sender stops: what reached the listener is
                # the rate it took, reported; the measurements meanwhile were made under that load.
                index = next_index
                next_index += 1
                due = started + index / args.rate
                wait = due - time.perf_counter()
                if wait > 0:
                    await asyncio.sleep(wait)
                else:
                    lateness.append(-wait)
                profile, request = requests[index]
                sent = time.perf_counter()
                writer.write(request)
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=30)
                status = head.split(b" ", 2)[1].decode()
                found = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
                if found is None:
                    raise RuntimeError(f"an answer without Content-Length: {head[:200]!r}")
                await reader.readexactly(int(found.group(1)))
                latencies.append(time.perf_counter() - sent)
                statuses[status] = statuses.get(status, 0) + 1
                if status == "200":
                    answered[profile] += 1
        finally:
            writer.close()

    results = await asyncio.gather(*(connection() for _ in range(args.connections)), return_exceptions=True)
    elapsed = time.perf_counter() - started
    errors = [repr(result) for result in results if isinstance(result, BaseException)]
    print(json.dumps({
        "sent": next_index, "answered": answered, "statuses": statuses, "elapsed": elapsed, "errors": errors,
        "p50_ms": 1000 * percentile(latencies, 0.5) if latencies else None,
        "p99_ms": 1000 * percentile(latencies, 0.99) if latencies else None,
        "late_share": len([late for late in lateness if late > 0.01]) / max(1, total),
        "late_max_ms": 1000 * max(lateness, default=0.0),
    }))
    return 0


# -- measurements under load -----------------------------------------------------------------------------------


def wait_screen(condition, what: str, timeout: float = 20.0) -> list[str]:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = screen()
        if condition(lines):
            return lines
        time.sleep(0.01)
    raise TimeoutError(f"{what}; the screen:\n" + "\n".join(screen()))


def key_samples(count: int, per_field: int = 16) -> list[float]:
    """Milliseconds from `send-keys` of one character to its appearance in the Chats search field."""
    alphabet = "abcdefghijklmnop"
    typed = wait_screen(lambda lines: field_text(lines) is not None, "the Chats search field is not on screen")
    current = field_text(typed) or ""
    if current and not current.startswith("Search"):
        tmux("send-keys", "-t", "app", *["BSpace"] * (len(current) + 2))
        wait_screen(lambda lines: (field_text(lines) or "").startswith("Search"), "the field did not clear")
    samples: list[float] = []
    text = ""
    while len(samples) < count:
        if len(text) == per_field:
            tmux("send-keys", "-t", "app", *["BSpace"] * per_field)
            wait_screen(lambda lines: (field_text(lines) or "").startswith("Search"), "the field did not clear")
            text = ""
            time.sleep(0.2)
        char = alphabet[len(text)]
        text += char
        sent = time.perf_counter()
        tmux("send-keys", "-t", "app", "-l", char)
        deadline = sent + 10.0
        while field_text(screen()) != text:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"{text!r} not in the field after 10 s")
        samples.append(1000 * (time.perf_counter() - sent))
        time.sleep(random.uniform(0.08, 0.16))
    return samples


ECHO = """
import os, tty
tty.setraw(0)
os.write(1, b"ready\\r\\n")
while (key := os.read(0, 64)):
    os.write(1, key.replace(b"\\r", b"\\r\\n"))
"""


def floor_samples(count: int, scratch: Path) -> list[float]:
    """The same measurement against a program that echoes each key itself in raw mode, as the app reads keys, in a
    pane of the same size under the same load: what tmux, the pty and the polling cost alone."""
    script = scratch / "echo.py"
    script.write_text(ECHO)
    subprocess.run(["tmux", "-L", SOCKET, "-f", "/dev/null", "new-session", "-d", "-s", "floor", "-x", str(WIDTH),
                    "-y", str(HEIGHT), f"{sys.executable} {script}"], check=True, timeout=30)
    samples: list[float] = []
    try:
        deadline = time.monotonic() + 20
        while "ready" not in tmux("capture-pane", "-p", "-t", "floor"):
            if time.monotonic() > deadline:
                raise TimeoutError("the echo program did not start in its pane")
            time.sleep(0.05)
        text = ""
        while len(samples) < count:
            if len(text) == 16:
                tmux("send-keys", "-t", "floor", "Enter")
                text = ""
            char = "abcdefghijklmnop"[len(text)]
            text += char
            sent = time.perf_counter()
            tmux("send-keys", "-t", "floor", "-l", char)
            deadline = sent + 10.0
            while not any(line.rstrip() == text for line in tmux("capture-pane", "-p", "-t", "floor").splitlines()):
                if time.perf_counter() > deadline:
                    raise TimeoutError(f"{text!r} not echoed after 10 s; the pane:\n"
                                       + tmux("capture-pane", "-p", "-t", "floor"))
            samples.append(1000 * (time.perf_counter() - sent))
            time.sleep(random.uniform(0.08, 0.16))
    finally:
        tmux("kill-session", "-t", "floor")
    return samples


def board_rows(lines: list[str]) -> tuple[str, ...] | None:
    titles = next((n for n, line in enumerate(lines) if "Name" in line and "Ev/min" in line), None)
    if titles is None:
        return None
    rows = []
    for line in lines[titles + 1:]:
        if line.startswith("─") or not line.strip():
            break
        rows.append(line)
    return tuple(rows)


def board_refreshes(seconds: float) -> dict[str, float]:
    tmux("send-keys", "-t", "app", "M-9")
    wait_screen(lambda lines: bool(board_rows(lines)), "the Fleet board did not show")
    changes: list[float] = []
    previous = None
    started = time.perf_counter()
    while (now := time.perf_counter()) - started < seconds:
        rows = board_rows(screen())
        if rows and rows != previous:
            if previous is not None:
                changes.append(now)
            previous = rows
        time.sleep(0.05)
    gaps = [b - a for a, b in zip(changes, changes[1:], strict=False)]
    return {"refreshes": len(changes), "per_s": len(changes) / seconds,
            "max_gap_s": max(gaps, default=float("inf")), "median_gap_s": statistics.median(gaps) if gaps else 0.0}


def stored_by_account(db: Path, timeout: float = 60.0) -> dict[str, int]:
    """Rows per account, once the total stopped growing for a second (bounded by `timeout`)."""
    deadline = time.monotonic() + timeout
    last = -1
    counts: dict[str, int] = {}
    while time.monotonic() < deadline:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)) as connection:
            counts = {str(account): int(count) for account, count in
                      connection.execute("SELECT account, count(*) FROM events WHERE path LIKE '/a/%' GROUP BY account")}
        total = sum(counts.values())
        if total == last:
            break
        last = total
        time.sleep(1.0)
    return counts


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# -- set-up ------------------------------------------------------------------------------------------------------


def sandbox(accounts: int, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([str(APP), "sandbox", "--accounts", str(accounts), "--port", "0",
                                "--session-dialect", "wuzapi"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.search(r"listening on (http://\S+)", line)
    if found is None:
        process.kill()
        raise SystemExit(f"the sandbox did not start: {line!r}")
    return process, found.group(1)


async def bulk_import_child(args: argparse.Namespace) -> int:
    """`fleet import --session-url URL --insecure-storage --listener-port P`, its profiles and secrets written once
    at the end: the command saves each profile by reading and writing the whole profiles file and the 0600 file
    again (and looks every earlier profile's token up in it), which at 1,000 accounts ran past 25 minutes on this
    machine. The product's own import does the rest (each user's HMAC key and webhook set at the sandbox)."""
    sys.path.insert(0, str(REPO))
    from tui.api.gateway_http import GatewayHttp
    from tui.core.accounts import fleet_import as importing
    from tui.gateways.fleets import fleet_source
    from tui.local import config
    from tui.local.secrets import InsecureFileSecrets, MemorySecrets, keyring_username

    memory = MemorySecrets()
    saved: list[config.Profile] = []
    values: dict[str, str] = {}

    def keep(profile: config.Profile, store: object, secrets: dict) -> None:  # type: ignore[type-arg]
        for name, value in secrets.items():
            memory.set(profile.name, name, value)
            values[keyring_username(profile.name, name)] = value
        saved.append(profile)

    importing.store_then_save = keep  # type: ignore[assignment]
    async with GatewayHttp(deadline=60) as http:
        report = await importing.import_fleet(fleet_source("wuzapi"), http, args.url,
                                              os.environ["GATEWAY_TUI_ADMIN_TOKEN"], memory,
                                              place=importing.ListenerPlace("127.0.0.1", args.port),
                                              secrets_file=True)
    problems = [account for account in report.accounts if account.problems]
    config._write(saved)
    file = InsecureFileSecrets().path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.touch(mode=0o600)
    file.write_text(json.dumps(values))
    print(json.dumps({"profiles": len(saved), "problems": len(problems)}))
    return 0


def bulk_import(url: str, port: int, env: dict[str, str]) -> float:
    started = time.perf_counter()
    result = subprocess.run([sys.executable, __file__, "--bulk-import-child", "--url", url, "--port", str(port)],
                            env=env, capture_output=True, text=True, timeout=1800, check=False)
    if result.returncode != 0:
        raise SystemExit(f"the bulk import failed ({result.returncode}): {result.stderr[-1000:]}")
    print(f"  bulk import: {result.stdout.strip()}", flush=True)
    return time.perf_counter() - started


def fleet_import(url: str, port: int, env: dict[str, str], insecure: bool) -> float:
    command = [str(APP), *(["--insecure-storage"] if insecure else []), "fleet", "import", "--session-url", url,
               "--listener-port", str(port)]
    started = time.perf_counter()
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800, check=False)
    if result.returncode != 0:
        raise SystemExit(f"fleet import failed ({result.returncode}): {result.stderr[-1000:]}")
    return time.perf_counter() - started


def keyring_session(scratch: Path) -> tuple[subprocess.Popen[str], dict[str, str]] | None:
    """A private D-Bus session with gnome-keyring unlocked (the password on stdin); its variables."""
    if shutil.which("dbus-run-session") is None or shutil.which("gnome-keyring-daemon") is None:
        return None
    home = scratch / "keyring-home"
    home.mkdir()
    script = ("eval \"$(printf 'throwaway\\n' | gnome-keyring-daemon --unlock --components=secrets)\"; "
              "echo \"DBUS_SESSION_BUS_ADDRESS=$DBUS_SESSION_BUS_ADDRESS\"; exec sleep 900")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DBUS_", "PYTHON_KEYRING"))}
    env.update(HOME=str(home), XDG_RUNTIME_DIR=str(home))
    process = subprocess.Popen(["dbus-run-session", "--", "sh", "-c", script], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if not line.startswith("DBUS_SESSION_BUS_ADDRESS=") or line.endswith("="):
        end(process)
        return None
    return process, {"HOME": str(home), "XDG_RUNTIME_DIR": str(home), "DBUS_SESSION_BUS_ADDRESS": line.split("=", 1)[1]}


def end(process: subprocess.Popen[str] | None) -> None:
    """Its whole process group (each was started in a session of its own), TERM then KILL."""
    if process is None or process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)


def dirs_of(base: Path) -> dict[str, str]:
    return {"XDG_DATA_HOME": str(base / "xdg-data"), "XDG_CONFIG_HOME": str(base / "xdg-config"),
            "XDG_STATE_HOME": str(base / "xdg-state"), "GATEWAY_TUI_CONFIG_DIR": str(base / "config"),
            "GATEWAY_TUI_DATA_DIR": str(base / "data")}


def starts(variants: dict[str, dict[str, str]], count: int) -> dict[str, list[dict[str, float]]]:
    """`count` timed starts of each variant (label → the app's environment), alternating."""
    figures: dict[str, list[dict[str, float]]] = {label: [] for label in variants}
    for _ in range(count):
        for label, env in variants.items():
            before = load()
            try:
                figures[label].append(time_start(env))
            finally:
                stop_app()
            print(f"  {label}: first frame {figures[label][-1]['first_frame'] * 1000:.0f} ms, interactive "
                  f"{figures[label][-1]['interactive'] * 1000:.0f} ms  (load {before})", flush=True)
    return figures


def one_profile(source: dict[str, str], target: dict[str, str], profile: str) -> None:
    """A config of `profile` alone, from the imported one (its section of profiles.toml, its secrets)."""
    config = Path(source["GATEWAY_TUI_CONFIG_DIR"])
    mine = Path(target["GATEWAY_TUI_CONFIG_DIR"])
    mine.mkdir(parents=True)
    sections = (config / "profiles.toml").read_text().split("\n[")
    [section] = [part for part in sections if part.lstrip("[").startswith(f"profiles.{profile}]")]
    (mine / "profiles.toml").write_text("[" + section.lstrip("[") + "\n")
    secrets = json.loads((config / "secrets-insecure.json").read_text())
    file = mine / "secrets-insecure.json"
    file.touch(mode=0o600)
    file.write_text(json.dumps({key: value for key, value in secrets.items() if key.startswith(profile + ":")}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--accounts", type=int, default=100)
    parser.add_argument("--rate", type=float, default=500.0, help="events a second, in total")
    parser.add_argument("--samples", type=int, default=200, help="keys typed and timed")
    parser.add_argument("--board-seconds", type=float, default=12.0)
    parser.add_argument("--starts", type=int, default=3, help="timed starts (secrets from the 0600 file)")
    parser.add_argument("--keyring", action="store_true", help="also time starts with the secrets in gnome-keyring")
    parser.add_argument("--floor-samples", type=int, default=50, help="keys timed against an echo program first (the floor)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--load-seconds", type=float, default=0.0,
                        help="how long the load runs (default: long enough for the keys and the board, at most 120)")
    parser.add_argument("--spare-current", action="store_true",
                        help="no events to the current account (the first profile): what its own events cost the keys")
    parser.add_argument("--hide-panel", action="store_true",
                        help="hide the events panel (F9) before the keys: what its redraws cost them")
    parser.add_argument("--modes", default="in-process",
                        help="in-process (the app's own listener), attached (`listen --all` in its own process, the "
                             "app attached to it), or both comma-separated: alternated, round by round")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each mode")
    parser.add_argument("--event-samples", type=int, default=40,
                        help="events timed from the listener's 200 to their row on screen")
    parser.add_argument("--kill-listen", action="store_true",
                        help="attached: kill -9 `listen` at the end of each run, time what the app says, restart it")
    parser.add_argument("--bulk-import", action="store_true",
                        help="write the imported profiles at once (fleet import saves them one by one: quadratic)")
    parser.add_argument("--bulk-import-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--load-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--profiles", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load_child:
        return asyncio.run(load_child(args))
    if args.bulk_import_child:
        return asyncio.run(bulk_import_child(args))
    if shutil.which("tmux") is None:
        raise SystemExit("the bench needs tmux")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"SQLite {sqlite3.sqlite_version}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"load average {load()}", flush=True)
    load_seconds = min(120.0, args.load_seconds or (8 + (args.samples + args.floor_samples) * 0.2
                                                    + args.event_samples * 0.4 + args.board_seconds + 5))
    processes: list[subprocess.Popen[str]] = []
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as scratch_name:
        scratch = Path(scratch_name)
        try:
            return run(args, scratch, processes, load_seconds)
        finally:
            stop_app()
            for process in processes:
                end(process)
            # tmux leaves its socket file behind after kill-server
            (Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}" / SOCKET).unlink(missing_ok=True)


def listen_all(port: int, env: dict[str, str]) -> subprocess.Popen[str]:
    """`gateway-tui listen --all` in its own process on `port`, once it says where it listens."""
    process = subprocess.Popen([str(APP), "listen", "--all", "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert process.stderr is not None
    line = process.stderr.readline()
    if "listening on" not in line:
        end(process)
        raise SystemExit(f"listen --all did not start: {line!r}")
    # Its further lines (the accounts' URLs, health) are read away so a full pipe never stops it.
    import threading

    threading.Thread(target=process.stderr.read, daemon=True).start()
    return process


def hmac_key_of(config: Path, profile: str) -> str:
    return str(json.loads((config / "secrets-insecure.json").read_text())[f"{profile}:hmac-key"])


def event_samples(count: int, port: int, profile: str, key: str, timeout: float = 10.0) -> list[float]:
    """Milliseconds from the listener's 200 to the row on screen: `count` signed events to the current account (the
    one the screen shows), each with a text of its own, at a human pace, each waited for on screen in turn."""
    import http.client

    from_sig = "x-hmac-signature"
    with contextlib.suppress(Exception):
        sys.path.insert(0, str(REPO))
        from tui.api.signing import SIGNATURE_HEADER

        from_sig = SIGNATURE_HEADER
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    samples: list[float] = []
    tag = os.urandom(2).hex()
    try:
        for number in range(count):
            text = f"probe{tag}{number:03d}"
            body = message(profile, 900_000_000 + random.randrange(10**8), number, profile)
            body = body.replace(b"fleet bench message", text.encode(), 1)
            signature = hmac.new(key.encode(), body, hashlib.sha256).hexdigest()
            connection.request("POST", f"/a/{profile}/session", body=body,
                               headers={"Content-Type": "application/json", from_sig: signature})
            answer = connection.getresponse()
            answer.read()
            answered = time.perf_counter()
            if answer.status != 200:
                raise RuntimeError(f"the probe was answered {answer.status}")
            while not any(text in line for line in screen()):
                if time.perf_counter() - answered > timeout:
                    raise TimeoutError(f"{text} not on screen {timeout:.0f} s after its 200; the screen:\n"
                                       + "\n".join(screen()))
            samples.append(1000 * (time.perf_counter() - answered))
            time.sleep(random.uniform(0.15, 0.3))
    finally:
        connection.close()
    return samples


def wait_header(words: str, timeout: float) -> float:
    """Seconds until the header (the screen's first line) says `words`."""
    started = time.perf_counter()
    while words not in (screen() or [""])[0]:
        if time.perf_counter() - started > timeout:
            raise TimeoutError(f"the header did not say {words!r} within {timeout:.0f} s: {(screen() or [''])[0]!r}")
        time.sleep(0.01)
    return time.perf_counter() - started


def run(args: argparse.Namespace, scratch: Path, processes: list[subprocess.Popen[str]], load_seconds: float) -> int:
    base_env = {key: value for key, value in os.environ.items() if not key.startswith("GATEWAY_TUI_")}
    file_dirs = dirs_of(scratch / "file")
    env = base_env | file_dirs | {"GATEWAY_TUI_ADMIN_TOKEN": os.urandom(16).hex()}
    box, url = sandbox(args.accounts, env)
    processes.append(box)
    port = free_port()
    took = bulk_import(url, port, env) if args.bulk_import else fleet_import(url, port, env, insecure=True)
    print(f"sandbox of {args.accounts} accounts at {url}; {'bulk' if args.bulk_import else 'fleet'} import into the "
          f"0600 file: {took:.1f} s", flush=True)
    profiles = sorted(line.split(".", 1)[1].rstrip("]") for line in
                      (Path(file_dirs["GATEWAY_TUI_CONFIG_DIR"]) / "profiles.toml").read_text().splitlines()
                      if line.startswith("[profiles."))
    one_dirs = dirs_of(scratch / "one")
    one_profile(file_dirs, one_dirs, profiles[0])
    global PYCACHE, OPEN_AT_MOST
    PYCACHE = str(scratch / "pycache")
    OPEN_AT_MOST = max(100, args.accounts)
    starts({"warm-up (fills the bytecode cache)": one_dirs}, 1)
    keyring: list[dict[str, float]] = []
    if args.keyring:
        session = keyring_session(scratch)
        if session is None:
            print("keyring: cannot run here (no dbus-run-session/gnome-keyring, or the keyring did not unlock)")
        else:
            process, keyring_env = session
            processes.append(process)
            ring_dirs = dirs_of(scratch / "keyring")
            took = fleet_import(url, free_port(), env | ring_dirs | keyring_env, insecure=False)
            print(f"start to interactive, secrets in gnome-keyring (import {took:.1f} s), the app's own listener:",
                  flush=True)
            keyring = starts({"keyring": ring_dirs | keyring_env}, args.starts)["keyring"]
    modes = args.modes.split(",")
    runs: list[dict[str, object]] = []
    for round_number in range(args.rounds):
        for mode in modes:
            print(f"\n== round {round_number + 1}, {mode} ==", flush=True)
            runs.append(one_run(args, scratch / f"run-{round_number}-{mode}", mode, base_env, file_dirs, one_dirs,
                                profiles, port, load_seconds, processes))
    report(args, runs, keyring)
    print(f"load average after: {load()}")
    return 0


def one_run(args: argparse.Namespace, where: Path, mode: str, base_env: dict[str, str], file_dirs: dict[str, str],
            one_dirs: dict[str, str], profiles: list[str], port: int, load_seconds: float,
            processes: list[subprocess.Popen[str]]) -> dict[str, object]:
    """One run of `mode` on a fresh data dir: the starts, then the load and what it measures."""
    data = {"GATEWAY_TUI_DATA_DIR": str(where / "data")}
    app_env = file_dirs | data
    # Attached, the one-account config shares the data dir, so it too finds `listen --all` (an app of its own would
    # find the port taken); in process it keeps its own.
    one_env = one_dirs | data if mode == "attached" else one_dirs | {"GATEWAY_TUI_DATA_DIR": str(where / "one-data")}
    figures: dict[str, object] = {"mode": mode, "load_before": load()}
    listen: subprocess.Popen[str] | None = None
    if mode == "attached":
        listen = listen_all(port, base_env | app_env)
        processes.append(listen)
    print(f"start to interactive ({mode}), secrets from the 0600 file, {len(profiles)} accounts and the first "
          "alone, alternating:", flush=True)
    figures.update(starts({"file": app_env, "one account": one_env}, args.starts))
    time_start(app_env)
    pid = pane_pid()
    assert pid is not None
    loaded = profiles[1:] if args.spare_current else profiles
    sender = subprocess.Popen([sys.executable, __file__, "--load-child", "--profiles", ",".join(loaded),
                               "--port", str(port), "--rate", str(args.rate), "--seconds", str(load_seconds),
                               "--connections", str(args.connections)],
                              env=base_env | app_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)
    processes.append(sender)
    assert sender.stderr is not None
    sender.stderr.readline()  # "ready": the bodies are made
    print(f"load: {args.rate:.0f} events/s over {len(loaded)} accounts for {load_seconds:.0f} s "
          f"(load average {load()})", flush=True)
    time.sleep(3.0)
    floor = floor_samples(args.floor_samples, where) if args.floor_samples else []
    if args.hide_panel:
        tmux("send-keys", "-t", "app", "F9")
        wait_screen(lambda lines: not any(line.startswith(" Events (") for line in lines), "the panel did not hide")
    keys = key_samples(args.samples)
    figures["load_keys"] = load()
    key = hmac_key_of(Path(file_dirs["GATEWAY_TUI_CONFIG_DIR"]), profiles[0])
    shown = event_samples(args.event_samples, port, profiles[0], key)
    figures["load_events"] = load()
    board = board_refreshes(args.board_seconds)
    figures["load_board"] = load()
    if sender.poll() is not None:
        print("warning: the load ended before the board's measurement did", flush=True)
    stdout, stderr = sender.communicate(timeout=load_seconds + 120)
    try:
        sent = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise SystemExit(f"the sender's report is missing: {stdout[-500:]!r} {stderr[-1000:]!r}") from None
    store = Path(data["GATEWAY_TUI_DATA_DIR"]) / "fleet-events.sqlite3"
    stored = stored_by_account(store)
    answered: dict[str, int] = sent["answered"]
    answered[profiles[0]] = answered.get(profiles[0], 0) + len(shown)  # the probes, each answered 200
    lost = {name: (answered.get(name, 0), stored.get(name, 0)) for name in profiles
            if answered.get(name, 0) != stored.get(name, 0)}
    figures.update(keys=keys, floor=floor, shown=shown, board=board, sent=sent, lost=lost,
                   answered_total=sum(answered.values()), stored_total=sum(stored.values()),
                   app_rss=peak_rss_mb(pid), listen_rss=peak_rss_mb(listen.pid) if listen is not None else None)
    if listen is not None and args.kill_listen:
        figures.update(kill_and_restart(listen, port, base_env | app_env, processes, profiles[0], key, store))
    stop_app()
    end(listen)
    print_run(args, figures)
    return figures


def kill_and_restart(listen: subprocess.Popen[str], port: int, env: dict[str, str],
                     processes: list[subprocess.Popen[str]], profile: str, key: str, store: Path) -> dict[str, object]:
    """Issue 32's acceptance: kill -9 of `listen` while the app is attached; the seconds until the header says that
    nothing listens; `listen` started again: the seconds until the header names it, an event to it on screen, and
    every event answered before the kill still in the store."""
    with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=10)) as connection:
        before = int(connection.execute("SELECT count(*) FROM events WHERE path LIKE '/a/%'").fetchone()[0])
    os.killpg(listen.pid, signal.SIGKILL)
    killed = time.perf_counter()
    listen.wait(timeout=15)
    wait_header("nothing listens", 30.0)
    said = time.perf_counter() - killed
    again = listen_all(port, env)  # from its first line on, it serves
    processes.append(again)
    follows = wait_header(f"listen :{port}", 30.0)
    after_restart = event_samples(3, port, profile, key)
    with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=10)) as connection:
        kept = int(connection.execute("SELECT count(*) FROM events WHERE path LIKE '/a/%'").fetchone()[0])
    end(again)
    return {"kill_said_s": said, "restart_followed_s": follows, "after_restart_ms": after_restart,
            "kept_after_restart": kept - len(after_restart), "stored_before_kill": before}


def print_run(args: argparse.Namespace, figures: dict[str, object]) -> None:
    keys, floor, shown = figures["keys"], figures["floor"], figures["shown"]
    sent, board = figures["sent"], figures["board"]
    assert isinstance(keys, list) and isinstance(floor, list) and isinstance(shown, list)
    assert isinstance(sent, dict) and isinstance(board, dict)
    for label in ("file", "one account"):
        starts_of = figures.get(label)
        if isinstance(starts_of, list) and starts_of:
            values = [figure["interactive"] * 1000 for figure in starts_of]
            print(f"  start to interactive ({label}): {', '.join(f'{value:.0f}' for value in values)} ms")
    print(f"  load: sent {sent['sent']} in {sent['elapsed']:.1f} s ({sent['sent'] / sent['elapsed']:.0f}/s), answers "
          f"{sent['statuses']}, sender p50 {sent['p50_ms']:.1f} ms p99 {sent['p99_ms']:.1f} ms, "
          f"{sent['late_share'] * 100:.1f} % sent > 10 ms late (max {sent['late_max_ms']:.0f} ms)"
          + (f", errors {sent['errors']}" if sent["errors"] else ""))
    lost = figures["lost"]
    assert isinstance(lost, dict)
    print(f"  stored under their account: {figures['stored_total']} of {figures['answered_total']} answered 200; "
          f"accounts differing: {len(lost)}" + (f" e.g. {dict(list(lost.items())[:5])}" if lost else ""))
    print(f"  key to screen ({len(keys)} keys): median {statistics.median(keys):.1f} ms, p99 "
          f"{percentile(keys, 0.99):.1f} ms, max {max(keys):.1f} ms  (load after {figures['load_keys']})")
    if floor:
        print(f"  the floor, an echo program ({len(floor)} keys): median {statistics.median(floor):.1f} ms, p99 "
              f"{percentile(floor, 0.99):.1f} ms")
    print(f"  event to screen ({len(shown)} events, the listener's 200 to the row): median "
          f"{statistics.median(shown):.0f} ms, p99 {percentile(shown, 0.99):.0f} ms, max {max(shown):.0f} ms  "
          f"(load after {figures['load_events']})")
    print(f"  Fleet board: {board['per_s']:.2f} refreshes/s, gap max {board['max_gap_s']:.2f} s  "
          f"(load after {figures['load_board']})")
    listen_rss = figures["listen_rss"]
    print(f"  peak RSS: app {figures['app_rss']:.0f} MB" + (f", listen {listen_rss:.0f} MB" if listen_rss else ""))
    if "kill_said_s" in figures:
        after = figures["after_restart_ms"]
        assert isinstance(after, list)
        print(f"  kill -9 of listen: the header said 'nothing listens' after {figures['kill_said_s']:.2f} s; listen "
              f"again: followed after {figures['restart_followed_s']:.2f} s, events to it on screen in "
              f"{', '.join(f'{value:.0f}' for value in after)} ms; stored before the kill "
              f"{figures['stored_before_kill']}, after the restart {figures['kept_after_restart']}")


def report(args: argparse.Namespace, runs: list[dict[str, object]], keyring: list[dict[str, float]]) -> None:
    """Side by side: each mode's runs, one value per run (in run order)."""
    print(f"\nresults: {args.accounts} accounts, {args.rate:.0f} events/s; one value per run, in order")

    def each(mode: str, value) -> str:  # type: ignore[no-untyped-def]
        return ", ".join(value(run) for run in runs if run["mode"] == mode)

    rows = {
        "start→interactive, all accounts (ms, each start)": lambda run: "/".join(
            f"{figure['interactive'] * 1000:.0f}" for figure in run["file"]),
        "key→screen p99 (ms)": lambda run: f"{percentile(run['keys'], 0.99):.1f}",
        "key→screen median (ms)": lambda run: f"{statistics.median(run['keys']):.1f}",
        "event→screen p50 (ms)": lambda run: f"{statistics.median(run['shown']):.0f}",
        "event→screen p99 (ms)": lambda run: f"{percentile(run['shown'], 0.99):.0f}",
        "board refreshes/s": lambda run: f"{run['board']['per_s']:.2f}",
        "peak RSS app (MB)": lambda run: f"{run['app_rss']:.0f}",
        "peak RSS listen (MB)": lambda run: f"{run['listen_rss']:.0f}" if run["listen_rss"] else "-",
        "lost (answered 200, not stored)": lambda run: str(int(run["answered_total"]) - int(run["stored_total"])),
        "load average before": lambda run: str(run["load_before"]).split()[0],
        "load average after the keys": lambda run: str(run["load_keys"]).split()[0],
    }
    modes = list(dict.fromkeys(str(run["mode"]) for run in runs))
    for label, value in rows.items():
        print(f"  {label}: " + " | ".join(f"{mode} {each(mode, value)}" for mode in modes))
    killed = [run for run in runs if "kill_said_s" in run]
    if killed:
        print("  kill -9 of listen → header says nothing listens (s): "
              + ", ".join(f"{run['kill_said_s']:.2f}" for run in killed)
              + "; restarted → followed (s): " + ", ".join(f"{run['restart_followed_s']:.2f}" for run in killed))
    if keyring:
        print("  start→interactive, secrets in gnome-keyring (ms): "
              + ", ".join(f"{figure['interactive'] * 1000:.0f}" for figure in keyring))


if __name__ == "__main__":
    sys.exit(main())
