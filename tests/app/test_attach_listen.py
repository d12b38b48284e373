"""Always on (issue 32): `gateway-tui listen` runs on its own and the app attaches to it. Real `listen` processes
(ports 0, loopback), the app on the same profile: it does not bind, it follows the listener's store live, names
the listener in its header and Settings, and keeps working when the listener dies and comes back. A port taken by
something that is not ours never stops the app: it says why there are no events."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import sys

import httpx
import pytest

from tests.harness import SIZE, screen_text, show_section, wait_ready, wait_until
from tests.webhooks import headless
from tests.webhooks.headless import start_headless
from tui.api.signing import sign
from tui.core.runtime import Runtime
from tui.gateways.sandbox import SandboxGateway
from tui.local import config
from tui.local.secrets import InsecureFileSecrets, SecretName
from tui.ui.app import build_app
from tui.ui.textual_compat import notifications_of
from tui.ui.widgets.forms import set_cursor_blink
from tui.ui.widgets.header import GatewayHeader

pytestmark = pytest.mark.slow

TOKENS = {
    SecretName.INSTANCE_TOKEN: "box-instance-token-SECRET",
    SecretName.CLIENT_TOKEN: "box-client-token-SECRET",
    SecretName.SESSION_TOKEN: "box-session-token-SECRET",
}
KEY = "box-hmac-key-0123456789abcdefghijklmn"
# A WuzAPI Message as its webhook posts it (JSON mode), literal.
MESSAGE = (b'{"type":"Message","event":{"Info":{"ID":"3EB0ATT0001","Chat":"5511999990000@s.whatsapp.net",'
           b'"Sender":"5511999990000@s.whatsapp.net","IsFromMe":false,"PushName":"Ana"},'
           b'"Message":{"conversation":"pizza tonight"}}}')


@pytest.fixture(autouse=True)
def no_listen_left_running():
    yield
    while headless.started:
        process = headless.started.pop()
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(process.pid, signal.SIGKILL)
                os.waitpid(process.pid, 0)


@contextlib.asynccontextmanager
async def sandbox():
    gateway = SandboxGateway(instance_id="boxinst", instance_token=TOKENS[SecretName.INSTANCE_TOKEN],
                             client_token=TOKENS[SecretName.CLIENT_TOKEN],
                             session_token=TOKENS[SecretName.SESSION_TOKEN], delivery_delay=0.0)
    await gateway.start()
    try:
        yield gateway
    finally:
        await gateway.stop()


def save_profile(name: str, gateway: SandboxGateway, *, listener_port: int = 0) -> None:
    """A profile on the sandbox whose secrets are in the 0600 file: `listen` (another process) reads them too."""
    base = gateway.url.rstrip("/")
    config.save_profile(config.Profile(name=name, base_url=base, instance_id="boxinst", session_url=base,
                                       listener_port=listener_port, secrets_file=True))
    secrets = InsecureFileSecrets()
    for secret, value in TOKENS.items():
        secrets.set(name, secret, value)
    secrets.set(name, SecretName.HMAC_KEY, KEY)


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


async def post_signed(url: str, body: bytes = MESSAGE) -> httpx.Response:
    async with httpx.AsyncClient(trust_env=False) as client:
        return await client.post(url, content=body, headers={"Content-Type": "application/json",
                                                             "x-hmac-signature": sign(KEY, body)})


def shown(app) -> str:
    return " ".join(screen_text(app).split())


async def stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), timeout=20)


async def test_the_app_attaches_to_a_running_listen_instead_of_binding():
    async with sandbox() as gateway:
        save_profile("box", gateway)
        process, url = await start_headless(None, "--profile", "box")
        port = port_of(url)
        save_profile("box", gateway, listener_port=port)  # the profile's port is the one `listen` holds
        set_cursor_blink(False)
        app = build_app(profile="box")
        try:
            async with app.run_test(size=SIZE, notifications=True) as pilot:
                await wait_ready(pilot)
                assert not any("Could not start" in str(note.message) for note in notifications_of(app))
                assert app.runtime.listener is None  # it did not bind
                header = app.screen.query_one(GatewayHeader)
                await wait_until(pilot, lambda: header.connection == "connected", timeout=20, what="connected")
                await wait_until(pilot, lambda: f"listen :{port}" in shown(app), what="the header naming listen")

                answer = await post_signed(f"{url}/session")
                assert answer.status_code == 200
                await wait_until(pilot, lambda: "pizza tonight" in shown(app), timeout=20,
                                 what="the event in the panel")
                await show_section(pilot, "chats")
                await wait_until(pilot, lambda: "Ana" in shown(app) and "pizza tonight" in shown(app), timeout=20,
                                 what="the chat in the inbox")

                await show_section(pilot, "settings")
                who = app.screen.query_one("#listener-who")
                await wait_until(pilot, lambda: f"`listen`, pid {process.pid}, on :{port}" in str(who.render()),
                                 what="Settings naming who listens")
                assert who.region.height > 0  # on screen
        finally:
            await stop(process)


async def test_a_port_taken_by_something_else_leaves_the_app_working():
    blocker = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    blocker.bind(("127.0.0.1", 0))
    blocker.listen(1)
    port = blocker.getsockname()[1]
    try:
        async with sandbox() as gateway:
            save_profile("box", gateway, listener_port=port)
            set_cursor_blink(False)
            app = build_app(profile="box")
            async with app.run_test(size=SIZE, notifications=True) as pilot:
                await wait_ready(pilot)
                header = app.screen.query_one(GatewayHeader)
                await wait_until(pilot, lambda: header.connection == "connected", timeout=20, what="connected")
                notes = [str(note.message) for note in notifications_of(app)]
                assert [note for note in notes if f"{port}" in note and "taken" in note], notes
                await wait_until(pilot, lambda: "no listener" in shown(app) and "Settings" in shown(app),
                                 what="the panel saying why there are no events")
                from tui.api.models import SendText

                sent = await app.runtime.current.instance_client().send_text(
                    SendText(phone="5511999990000", message="hello"))
                assert sent.message_id
    finally:
        blocker.close()


async def viewer(name: str) -> Runtime:
    runtime = Runtime(profile=name)
    await runtime.start()
    return runtime


async def test_two_viewers_of_one_listen_all_see_every_event_and_each_others_sends():
    async with sandbox() as gateway:
        save_profile("box", gateway)
        save_profile("shop", gateway)
        process, url = await start_headless(None, "--all")
        first, second = await viewer("box"), await viewer("shop")
        try:
            for runtime in (first, second):
                assert runtime.listener is None
                assert runtime.feed.attached is not None and runtime.feed.attached.all_profiles
            seen: dict[str, list[int]] = {"first": [], "second": []}
            from tui.core.feed.bus import EventStored, InboxChanged

            first.bus.subscribe(EventStored, lambda stored: seen["first"].append(stored.event.id))
            second.bus.subscribe(EventStored, lambda stored: seen["second"].append(stored.event.id))
            answer = await post_signed(f"{url}/a/box/session")
            assert answer.status_code == 200, answer.text
            event_id = answer.json()["id"]
            await headless_until(lambda: event_id in seen["first"] and event_id in seen["second"], "both see it")

            # Marking the chat read in one shows in the other.
            inbox_of_box = first.current.inbox
            (conversation,) = await asyncio.to_thread(inbox_of_box.conversations)
            assert conversation.unread == 1
            marked = Runtime(profile="box")  # a second viewer of box, attached too
            await marked.start()
            try:
                first_changed: list[str] = []
                first.bus.subscribe(InboxChanged, lambda change: first_changed.append(change.chat_id))
                await asyncio.to_thread(marked.current.inbox.mark_seen, conversation.chat_id)
                # Told, and what it reads then is read: the condition waits for a word after the mark.
                await headless_until(lambda: bool(first_changed) and inbox_of_box.conversations()[0].unread == 0,
                                     "the first told of the mark read")
            finally:
                await marked.stop()

            # A send recorded by the first shows in the second's store and wakes its inbox.
            changed: list[str] = []
            second.bus.subscribe(InboxChanged, lambda change: changed.append(change.chat_id))
            from tui.api.models import SendText

            request = SendText(phone="5511999990000", message="from the first")
            result = await first.current.instance_client().send_text(request)
            chat = await first.inbox_service.record_sent("send-text", request, result)
            assert chat is not None
            await headless_until(lambda: bool(changed), "the second told of the send")
            # The second reads the first's inbox (box) from the same store: the message, with its tick.
            from tui.webhooks.conversations import Inbox

            box = Inbox(second.store, "box")
            thread = await asyncio.to_thread(box.thread, chat, 10)
            assert [row.body for row in thread if row.outgoing] == ["from the first"]
            steps = await asyncio.to_thread(box.statuses, [result.message_id])
            assert result.message_id in steps
        finally:
            await first.stop()
            await second.stop()
            await stop(process)


async def headless_until(condition, what: str, timeout: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def test_kill_9_of_listen_then_a_restart_the_app_follows_again():
    async with sandbox() as gateway:
        save_profile("box", gateway)
        process, url = await start_headless(None, "--profile", "box")
        runtime = await viewer("box")
        try:
            from tui.core.feed.bus import EventStored

            seen: list[int] = []
            runtime.bus.subscribe(EventStored, lambda stored: seen.append(stored.event.id))
            assert runtime.display.listener_address() == f"listen :{port_of(url)}"
            first = (await post_signed(f"{url}/session")).json()["id"]
            await headless_until(lambda: first in seen, "the first event")
            # The doctor examines the listener the gateway must reach: that `listen`, running.
            inputs = await runtime.webhooks.doctor_inputs()
            assert (inputs.listener_base, inputs.listener_running) == (url, True)

            process.kill()
            await process.wait()
            await headless_until(lambda: runtime.display.listener_address() == "nothing listens", "nothing listens")
            assert not (await runtime.webhooks.doctor_inputs()).listener_running

            again, url = await start_headless(None, "--profile", "box")
            await headless_until(lambda: runtime.display.listener_address() == f"listen :{port_of(url)}",
                                 "following the new listen")
            second = (await post_signed(f"{url}/session", MESSAGE.replace(b"ATT0001", b"ATT0002"))).json()["id"]
            await headless_until(lambda: second in seen, "the event after the restart")
            assert seen == [first, second]  # nothing missing, nothing twice
            await stop(again)
        finally:
            await runtime.stop()
            await stop(process)


async def test_listen_says_who_listens_and_exits_1_on_the_apps_port():
    async with sandbox() as gateway:
        save_profile("box", gateway)
        app = await viewer("box")  # no listen running: the app listens itself
        try:
            port = app.listener.port
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "tui", "listen", "--profile", "box", "--port", str(port),
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, cwd=headless.REPO)
            _out, err = await asyncio.wait_for(process.communicate(), timeout=60)
            assert process.returncode == 1
            line = err.decode()
            assert f"the app already listens for profile 'box' (pid {os.getpid()}, on http://127.0.0.1:{port})" in line
            assert "--port" in line
        finally:
            await app.stop()


async def test_the_app_that_listened_quits_and_the_attached_one_says_nothing_listens():
    async with sandbox() as gateway:
        save_profile("box", gateway)
        owner = await viewer("box")
        follower = await viewer("box")
        try:
            assert follower.listener is None
            assert follower.display.listener_address() == f"app :{owner.listener.port}"
            from tui.core.feed.bus import EventStored

            seen: list[int] = []
            follower.bus.subscribe(EventStored, lambda stored: seen.append(stored.event.id))
            event_id = (await post_signed(f"{owner.listener.url}/session")).json()["id"]
            await headless_until(lambda: event_id in seen, "the event in the attached app")
            await owner.stop()
            await headless_until(lambda: follower.display.listener_address() == "nothing listens", "nothing listens")
            assert "nothing listens now" in (follower.feed.intake_problem() or "")
            assert [event.id for event in await asyncio.to_thread(follower.store.newest, 5)] == [event_id]
        finally:
            await owner.stop()
            await follower.stop()


async def test_an_attached_app_shows_the_listeners_forwarding_and_leaves_it_to_the_listener():
    async with sandbox() as gateway:
        save_profile("box", gateway)
        process, _url = await start_headless(None, "--profile", "box", "--forward-to",
                                             "http://127.0.0.1:9/hook?token=s3cret")
        runtime = await viewer("box")
        try:
            said = runtime.feed.intake_description() or ""
            assert f"`listen`, pid {process.pid}" in said
            assert "forwarding to http://127.0.0.1:9/hook" in said and "s3cret" not in said
            with pytest.raises(ValueError, match=f"pid {process.pid}"):
                await runtime.feed.set_forward_target("http://127.0.0.1:9/other")
            assert runtime.feed.forward_target is None
        finally:
            await runtime.stop()
            await stop(process)


async def test_a_send_from_another_viewer_shows_in_the_apps_thread_with_its_tick():
    async with sandbox() as gateway:
        save_profile("box", gateway)
        save_profile("shop", gateway)
        process, url = await start_headless(None, "--all")
        set_cursor_blink(False)
        app = build_app(profile="box")
        try:
            async with app.run_test(size=SIZE) as pilot:
                await wait_ready(pilot)
                assert app.runtime.listener is None
                assert (await post_signed(f"{url}/a/box/session")).status_code == 200
                await show_section(pilot, "chats")
                await wait_until(pilot, lambda: "Ana" in shown(app) and "pizza tonight" in shown(app), timeout=20,
                                 what="the chat in the app's inbox")
                other = await viewer("box")  # another app on the same profile, attached to the same listen
                try:
                    from tui.api.models import SendText

                    request = SendText(phone="5511999990000", message="on my way from the other app")
                    result = await other.current.instance_client().send_text(request)
                    await other.inbox_service.record_sent("send-text", request, result)
                finally:
                    await other.stop()
                await wait_until(pilot, lambda: "on my way from the other app" in shown(app)
                                 and re.search(r"You · \d\d:\d\d ✓", shown(app)) is not None, timeout=20,
                                 what="the other app's send in the thread, with its tick")
        finally:
            await stop(process)


async def test_listening_here_from_an_attached_app_leaves_listens_record():
    """Settings' "Restart listener here" in an app attached to `listen`: the app listens too, but `listen` still
    runs and still serves the profile, so its record (what the next app attaches to, what the doctor reads) stays
    listen's; the app quitting then leaves it in place."""
    async with sandbox() as gateway:
        save_profile("box", gateway)
        process, url = await start_headless(None, "--profile", "box")
        runtime = await viewer("box")
        try:
            from tui.local.listener_record import running

            await runtime.webhooks.restart_listener("127.0.0.1", 0)
            assert runtime.listener is not None  # it listens itself now
            record = running("box")
            assert record is not None and (record.pid, record.who) == (process.pid, "listen"), record
            await runtime.stop()
            record = running("box")
            assert record is not None and record.pid == process.pid, record
            again = await viewer("box")  # the next app still finds `listen`
            try:
                assert again.display.listener_address() == f"listen :{port_of(url)}"
            finally:
                await again.stop()
        finally:
            await runtime.stop()
            await stop(process)


async def test_several_accounts_and_a_port_taken_by_something_else_each_account_reads_its_own_inbox():
    """With several accounts open they share one store, each reading its own inbox in it (its name): a listener
    that could not bind must not leave them reading the single-account inbox ("")."""
    blocker = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    blocker.bind(("127.0.0.1", 0))
    blocker.listen(1)
    port = blocker.getsockname()[1]
    try:
        async with sandbox() as gateway:
            save_profile("box", gateway, listener_port=port)
            save_profile("shop", gateway, listener_port=port)
            runtime = Runtime(profile="box", all_profiles=True)
            await runtime.start()
            try:
                assert runtime.listener is None and runtime.feed.listener_problem is not None
                accounts = runtime.accounts
                assert sorted(account.name for account in accounts) == ["box", "shop"]
                assert {account.name: account.inbox_account for account in accounts} == {"box": "box", "shop": "shop"}
            finally:
                await runtime.stop()
    finally:
        blocker.close()


async def test_listen_started_again_on_another_store_is_followed_there(tmp_path):
    """`listen` stopped and started again with another --db: the attached app follows it to that store (the new
    listener's events reach it, its views read that store), as it follows a restart on the same store."""
    async with sandbox() as gateway:
        save_profile("box", gateway)
        process, url = await start_headless(tmp_path / "first.sqlite3", "--profile", "box")
        runtime = await viewer("box")
        try:
            from tui.core.feed.bus import EventStored

            seen: list[str] = []
            runtime.bus.subscribe(EventStored, lambda stored: seen.append(stored.event.summary))
            assert (await post_signed(f"{url}/session")).status_code == 200
            await headless_until(lambda: len(seen) == 1, "the first event")
            await stop(process)
            await headless_until(lambda: runtime.display.listener_address() == "nothing listens", "nothing listens")

            again, url = await start_headless(tmp_path / "second.sqlite3", "--profile", "box")
            await headless_until(lambda: runtime.display.listener_address() == f"listen :{port_of(url)}",
                                 "following listen on its new store")
            moved = MESSAGE.replace(b"ATT0001", b"ATT0002").replace(b"pizza tonight", b"on the new store")
            assert (await post_signed(f"{url}/session", moved)).status_code == 200
            await headless_until(lambda: any("on the new store" in summary for summary in seen),
                                 "the event stored in the new store")
            assert runtime.store is not None and runtime.store.path.name == "second.sqlite3"
            (conversation,) = await asyncio.to_thread(runtime.current.inbox.conversations)
            assert conversation.last_body == "on the new store"
            await stop(again)
        finally:
            await runtime.stop()
            await stop(process)


async def test_an_attached_app_points_zapi_at_the_secret_url_the_running_listen_compares():
    """Z-API signs nothing: `listen` made the profile's webhook URL secret (in its 0600 file) and compares it; the app
    that attaches to that listener points Z-API's callbacks at the same secret URL, and its doctor expects it."""
    from tui.api.dialects import Family, InstanceDialect, SessionDialect
    from tui.local.secrets import ListenerSecret

    gateway = SandboxGateway(instance_id="boxinst", instance_token=TOKENS[SecretName.INSTANCE_TOKEN],
                             client_token=TOKENS[SecretName.CLIENT_TOKEN],
                             session_token=TOKENS[SecretName.SESSION_TOKEN], delivery_delay=0.0,
                             instance_dialect="zapi", session_dialect="wuzapi")
    await gateway.start()
    try:
        def save(port: int) -> None:
            save_profile("box", gateway, listener_port=port)
            [profile] = [profile for profile in config.load_profiles() if profile.name == "box"]
            config.save_profile(profile.model_copy(update={"instance_dialect": InstanceDialect.ZAPI,
                                                           "session_dialect": SessionDialect.WUZAPI}))

        save(0)
        process, url = await start_headless(None, "--profile", "box")
        save(port_of(url))
        secret = InsecureFileSecrets().get("box", ListenerSecret.DELIVERY_PATH)
        assert secret
        runtime = Runtime(profile="box")
        try:
            await asyncio.wait_for(runtime.start(), timeout=60)
            assert runtime.listener is None  # attached, not bound
            wanted = f"{url}/delivery/secret/{secret}"
            assert runtime.webhooks.account_webhook_url("box", Family.INSTANCE) == wanted
            await runtime.webhooks.configure_webhooks(runtime.webhooks.listener_base())
            assert set(gateway.state.zapi_callback_urls.values()) == {wanted}
            assert (await runtime.webhooks.doctor_inputs()).path_secret == secret
        finally:
            await runtime.stop()
            await stop(process)
    finally:
        await gateway.stop()
