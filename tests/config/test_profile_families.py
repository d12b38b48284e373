"""Issue 22: a profile has one family or both. A real account is one gateway: Z-API (the instance family) or WuzAPI
(the session family); either alone is a complete profile, and files written before (both families) load as they
were."""

from __future__ import annotations

import pytest

from tui import config
from tui.api.dialects import Family, InstanceDialect, SessionDialect
from tui.config import ConfigError, InstanceFamily, MissingFamily, Profile, SessionFamily

# A profiles file as gateway-tui wrote it before profiles could have one family: every key, both families.
OLD_FILE = """\
[profiles.work]
base_url = "https://api.example.com"
instance_id = "3C01A1B2C3D4E5F6"
session_url = "https://wuzapi.example.com"
listener_host = "127.0.0.1"
listener_port = 8787
public_url = ""
theme = "textual-dark"
max_body = 157286400
require_signatures = false
instance_dialect = "zapi"
session_dialect = "wuzapi"
"""

SESSION_ONLY_FILE = """\
[profiles.wuz]
session_url = "https://wuzapi.example.com"
session_dialect = "wuzapi"
"""

INSTANCE_ONLY_FILE = """\
[profiles.z]
base_url = "https://api.z-api.io"
instance_id = "3C01"
instance_dialect = "zapi"
"""


def write(text: str) -> None:
    path = config.profiles_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_an_old_file_with_both_families_loads_unchanged_and_is_written_back_the_same():
    write(OLD_FILE)
    [work] = config.load_profiles()
    assert work.families == (Family.INSTANCE, Family.SESSION)
    assert work.instance == InstanceFamily("https://api.example.com", "3C01A1B2C3D4E5F6", InstanceDialect.ZAPI)
    assert work.session == SessionFamily("https://wuzapi.example.com", SessionDialect.WUZAPI)
    config.save_profile(work)  # saving it again writes exactly what was there
    assert config.profiles_path().read_text(encoding="utf-8") == OLD_FILE


def test_a_session_only_file_is_a_whole_profile():
    write(SESSION_ONLY_FILE)
    [wuz] = config.load_profiles()
    assert wuz.families == (Family.SESSION,)
    assert wuz.instance is None and wuz.session == SessionFamily("https://wuzapi.example.com", SessionDialect.WUZAPI)
    assert not wuz.has(Family.INSTANCE) and wuz.has(Family.SESSION)


def test_an_instance_only_file_is_a_whole_profile():
    write(INSTANCE_ONLY_FILE)
    [z] = config.load_profiles()
    assert z.families == (Family.INSTANCE,)
    assert z.session is None and z.instance == InstanceFamily("https://api.z-api.io", "3C01", InstanceDialect.ZAPI)


@pytest.mark.parametrize(
    "fields, absent",
    [
        ({"session_url": "https://wuzapi.example.com"}, ["base_url", "instance_id", "instance_dialect"]),
        ({"base_url": "https://api.z-api.io", "instance_id": "3C01"}, ["session_url", "session_dialect"]),
    ],
)
def test_a_one_family_profile_writes_nothing_of_the_other(fields, absent):
    profile = Profile(name="one", **fields)
    config.save_profile(profile)
    written = config.profiles_path().read_text(encoding="utf-8")
    assert not any(f"{key} =" in written for key in absent), written
    assert config.load_profiles() == [profile]


def test_a_dialect_chosen_for_an_absent_family_is_kept():
    profile = Profile(name="one", session_url="https://wuzapi.example.com", instance_dialect="zapi")
    config.save_profile(profile)
    assert config.load_profiles() == [profile]


@pytest.mark.parametrize("blank", [{}, {"base_url": "", "instance_id": " ", "session_url": ""}])
def test_no_family_at_all_is_refused_in_the_products_words(blank):
    with pytest.raises(ValueError) as caught:
        Profile(name="none", **blank)
    text = config.describe_profile_error(caught.value)
    assert "no gateway" in text and "Z-API" in text and "WuzAPI" in text


@pytest.mark.parametrize(
    "fields, missing",
    [
        ({"base_url": "https://api.z-api.io"}, "instance_id"),
        ({"instance_id": "3C01", "session_url": "https://wuzapi.example.com"}, "base_url"),
    ],
)
def test_half_a_family_names_the_missing_field(fields, missing):
    with pytest.raises(ValueError) as caught:
        Profile(name="half", **fields)
    text = config.describe_profile_error(caught.value)
    assert text.startswith(f"{missing}: required for the instance family (Z-API)"), text


def test_half_a_family_in_the_file_is_reported_with_its_table_and_left_alone():
    write('[profiles.half]\ninstance_id = "3C01"\n')
    with pytest.raises(ConfigError) as caught:
        config.load_profiles()
    message = str(caught.value)
    assert "line 1 ([profiles.half])" in message and "base_url: required for the instance family (Z-API)" in message
    assert config.profiles_path().read_text(encoding="utf-8") == '[profiles.half]\ninstance_id = "3C01"\n'


def test_requiring_a_missing_family_names_it_and_its_gateway():
    profile = Profile(name="z", base_url="https://api.z-api.io", instance_id="3C01")
    profile.require(Family.INSTANCE)
    with pytest.raises(MissingFamily) as caught:
        profile.require(Family.SESSION)
    assert str(caught.value) == "profile 'z' has no session family (WuzAPI); this operation needs it"
