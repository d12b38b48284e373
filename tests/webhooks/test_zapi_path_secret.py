"""Z-API signs nothing (it has no HMAC option): a Z-API profile's callbacks point at a capability URL,
`/delivery/secret/<secret>`, and the listener believes a callback on it with the profile's secret (`path-secret-ok`,
trusted), refuses another secret there like a bad signature, and keeps the plain `/delivery` as it was (`unsigned`,
never believed when a key is set). The secret is masked in everything kept, shown and logged.

The body is literal JSON from Z-API's docs (webhooks, "Ao receber": ReceivedCallback), posted unsigned as Z-API
posts it."""

from __future__ import annotations

import logging

import aiohttp

from tests.webhooks.conftest import KEY
from tests.webhooks.test_evolution_deliveries import every_stored_byte
from tui.api.signing import TRUSTED_VERDICTS, Verdict
from tui.cli.main import main
from tui.webhooks.families import AccountSigning

SECRET = "Zq3v0cT9yJwK1mB7sXnL4pA8rD2eF6hG"  # as secrets.token_urlsafe(24) makes them
RECEIVED = (b'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999",'
            b'"waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244",'
            b'"messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632228638000,'
            b'"status":"RECEIVED","chatName":"name","senderPhoto":null,"senderName":"name","participantPhone":null,'
            b'"photo":"https://","broadcast":false,"type":"ReceivedCallback","text":{"message":"teste"}}')
ZAPI = AccountSigning(instance_family=True)


async def post(http: aiohttp.ClientSession, url: str, body: bytes = RECEIVED) -> tuple[int, dict]:
    async with http.post(url, data=body, headers={"Content-Type": "application/json"}) as response:
        return response.status, await response.json()


async def zapi_listener(start_listener, **options: object):
    listener = await start_listener(account="work", signing={"work": ZAPI}, hmac_key=KEY, **options)
    listener.set_account_path_secret("work", SECRET)
    return listener


async def test_the_right_secret_is_trusted_and_kept_masked(start_listener, http, store):
    listener = await zapi_listener(start_listener)
    status, answer = await post(http, f"{listener.url}/delivery/secret/{SECRET}")
    assert status == 200
    event = store.get(answer["id"])
    assert event.verdict is Verdict.PATH_SECRET_OK and event.verdict in TRUSTED_VERDICTS
    assert not event.rejected and not event.authentic  # believed, never shown as a signature
    assert event.path == "/delivery/secret/***"
    assert event.kind == "ReceivedCallback"


async def test_a_wrong_secret_is_refused_like_a_bad_signature(start_listener, http, store):
    listener = await zapi_listener(start_listener)
    for wrong in (SECRET[:-1] + "x", "", SECRET + "x", "é" * 4):
        status, answer = await post(http, f"{listener.url}/delivery/secret/{wrong}")
        assert status == 401 and answer["error"] == "path secret wrong", wrong
        event = store.get(answer["id"])
        assert event.rejected and event.verdict is Verdict.PATH_SECRET_WRONG
    assert listener.rejected == 4 and listener.received == 4


async def test_without_a_secret_known_any_secret_is_wrong(start_listener, http):
    listener = await start_listener(account="work", signing={"work": ZAPI}, hmac_key=KEY)
    status, _ = await post(http, f"{listener.url}/delivery/secret/{SECRET}")
    assert status == 401


async def test_the_plain_delivery_path_stays_unsigned_and_untrusted(start_listener, http, store):
    listener = await zapi_listener(start_listener)
    status, answer = await post(http, f"{listener.url}/delivery")
    assert status == 200
    event = store.get(answer["id"])
    assert event.verdict is Verdict.UNSIGNED and event.verdict not in TRUSTED_VERDICTS


async def test_the_plain_delivery_path_is_refused_where_signatures_are_required(start_listener, http):
    listener = await zapi_listener(start_listener, require_signatures=True)
    assert (await post(http, f"{listener.url}/delivery"))[0] == 401
    assert (await post(http, f"{listener.url}/delivery/secret/{SECRET}"))[0] == 200


async def test_each_account_on_its_own_path_with_its_own_secret(start_listener, http, store):
    listener = await start_listener(accounts={"work": KEY, "home": KEY}, old_paths=False,
                                    signing={"work": ZAPI, "home": ZAPI})
    listener.set_account_path_secret("work", SECRET)
    listener.set_account_path_secret("home", "other-" + SECRET)
    status, answer = await post(http, f"{listener.url}/a/work/delivery/secret/{SECRET}")
    assert status == 200
    event = store.get(answer["id"])
    assert (event.verdict, event.account, event.path) == (Verdict.PATH_SECRET_OK, "work", "/a/work/delivery/secret/***")
    assert (await post(http, f"{listener.url}/a/home/delivery/secret/{SECRET}"))[0] == 401  # work's secret: not home's


def test_the_secret_is_compared_in_constant_time(monkeypatch):
    import hmac

    from tui.webhooks import listener as listener_module

    compared = []
    real = hmac.compare_digest

    def spy(a, b):
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(listener_module.hmac, "compare_digest", spy)
    route = listener_module._Route("work", KEY, "/delivery/secret/***", path_secret=SECRET, offered=SECRET)
    assert listener_module._with_path_secret(Verdict.UNSIGNED, route) is Verdict.PATH_SECRET_OK
    assert compared == [(SECRET.encode(), SECRET.encode())]


async def test_the_secret_is_in_no_stored_row_show_or_log(start_listener, http, store, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    listener = await zapi_listener(start_listener)
    ids = []
    for url in (f"{listener.url}/delivery/secret/{SECRET}", f"{listener.url}/delivery/secret/{SECRET}?x=1",
                f"{listener.url}/delivery/secret/{SECRET}x"):
        ids.append((await post(http, url))[1]["id"])
    await listener.stop()
    assert SECRET.encode() not in every_stored_byte(store.path)
    store.close()
    for event_id in ids:
        for argv in (["events", "show", str(event_id), "--db", str(store.path)],
                     ["events", "show", str(event_id), "--db", str(store.path), "--json"]):
            assert main(argv) == 0
            out, err = capsys.readouterr()
            assert "/delivery/secret/***" in out and SECRET not in out + err
    for argv in (["events", "export", "--db", str(store.path)], ["events", "list", "--db", str(store.path), "--json"]):
        assert main(argv) == 0
        out, err = capsys.readouterr()
        assert SECRET not in out + err
    assert SECRET not in caplog.text


async def test_listen_all_serves_a_zapi_profile_on_its_secret_url_and_never_prints_the_secret(monkeypatch):
    """A real `listen --all`: the Z-API profile's secret is made at start and kept in its 0600 file, its start line
    shows the secret URL masked, and only that profile's own secret URL is believed."""
    from tests.webhooks.headless import start_headless
    from tests.webhooks.test_listen_profile_key import PROFILE_KEY, stop
    from tests.webhooks.test_listen_profile_signing import WUZ, ZAPI as ZAPI_FLAGS, add
    from tui.local.paths import fleet_events_path
    from tui.local.secrets import InsecureFileSecrets, ListenerSecret
    from tui.webhooks.store import EventStore

    add(monkeypatch, "zw", *ZAPI_FLAGS, "--instance-dialect", "zapi", *WUZ)
    add(monkeypatch, "wuz", *WUZ)
    process, url = await start_headless(None, "--all", before=("--insecure-storage",))
    secret = InsecureFileSecrets().get("zw", ListenerSecret.DELIVERY_PATH)
    assert secret and InsecureFileSecrets().get("wuz", ListenerSecret.DELIVERY_PATH) is None  # Z-API's alone
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        statuses = [(await post(http, url + path))[0] for path in (
            f"/a/zw/delivery/secret/{secret}", "/a/zw/delivery/secret/guessed", "/a/zw/delivery",
            f"/a/wuz/delivery/secret/{secret}")]
    stderr = process.first_line + await stop(process)
    assert statuses == [200, 401, 200, 401], stderr
    assert f"{url}/a/zw/delivery/secret/***" in stderr and secret not in stderr
    with EventStore(fleet_events_path()) as store:
        verdicts = [(event.account, event.verdict) for event in reversed(store.newest(10))]
    assert verdicts[:3] == [("zw", Verdict.PATH_SECRET_OK), ("zw", Verdict.PATH_SECRET_WRONG), ("zw", Verdict.UNSIGNED)]
    assert PROFILE_KEY not in stderr
