"""The sandbox process imports aiohttp with the CA bundle's reading held back (tui.sandbox.ca_bundle): a context
made meanwhile trusts no certificate until the bundle is read into it, and then trusts what any other does."""

from __future__ import annotations

import ssl

import certifi

from tui.sandbox.ca_bundle import ca_bundle_held_back, read_held_ca_bundles


def test_a_context_made_while_held_back_trusts_nothing_until_the_bundle_is_read(monkeypatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())  # a bundle file, read whole (a directory is read lazily)
    reference = ssl.create_default_context().cert_store_stats()
    assert reference["x509_ca"] > 100
    with ca_bundle_held_back():
        context = ssl.create_default_context()
        plain = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        plain.set_default_verify_paths()
    assert context.cert_store_stats()["x509_ca"] == 0 and plain.cert_store_stats()["x509_ca"] == 0
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname  # fails closed meanwhile
    assert read_held_ca_bundles() == 2
    assert context.cert_store_stats() == reference and plain.cert_store_stats() == reference
    assert read_held_ca_bundles() == 0
    after = ssl.create_default_context()  # the method is ssl's own again
    assert after.cert_store_stats() == reference
