"""Passkeys (CONTRACT.md §13) through the Python client against the real rosterd, with the software authenticator of
soft_authenticator.py playing the browser: registration, log-in with and without user verification and TOTP, every
`passkey_rejected` why the wire names, the limiter, lock, removal, export and the cap. Each test needs the daemon's
side of passkeys; against a daemon without it, each is skipped with that said (the first tests need no daemon)."""
from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime
from collections.abc import Iterator
from typing import Any, cast

import pytest

import roster
from conftest import Daemon, connect, require_passkey_methods, started_daemon, webauthn_config
from passkey_support import account, add_passkey, assertion, enable_totp, oathtool, passkey_log_in, plain
from soft_authenticator import EDDSA, ES256, SoftAuthenticator, b64u, unb64u

ORIGIN = "http://localhost:8080"


# --- the client's side alone -----------------------------------------------------------------------------------

def test_passkey_rejected_is_a_roster_error_that_says_why() -> None:
    error = roster.errors.error_from({"code": 1019, "message": "The passkey's signature is not valid",
                                      "data": {"reason": "passkey_rejected", "why": "signature"}})
    assert isinstance(error, roster.PasskeyRejected) and isinstance(error, roster.RosterError)
    assert (error.reason, error.code, error.why) == ("passkey_rejected", 1019, "signature")
    assert "signature" in str(error)
    other = roster.errors.error_from({"code": 1012, "message": "Wrong password", "data": {"reason": "wrong_password"}})
    assert type(other) is roster.RosterError
    # A daemon that names no why (or a newer one's) still gives a PasskeyRejected.
    bare = roster.errors.error_from({"code": 1019, "message": "", "data": {"reason": "passkey_rejected"}})
    assert isinstance(bare, roster.PasskeyRejected) and bare.why == ""
    assert set(roster.PASSKEY_REJECTIONS) == {"challenge", "origin", "rp_id", "type", "user_present", "signature",
                                              "format", "duplicate", "counter"}


def test_both_clients_have_the_six_methods_with_their_params() -> None:
    assert {name: roster.METHODS[name] for name in roster.METHODS if "passkey" in name} == {
        "passkey.register_begin": ("password",), "passkey.register_finish": ("credential", "name?"),
        "passkey.list": (), "passkey.remove": ("id", "password"),
        "auth.passkey_begin": ("username?",), "auth.passkey_finish": ("credential?", "code?")}
    for client_class in (roster.Client, roster.AsyncClient):
        for name in ("passkey_register_begin", "passkey_register_finish", "passkey_list", "passkey_remove",
                     "auth_passkey_begin", "auth_passkey_finish"):
            assert callable(getattr(client_class, name)), (client_class, name)


# --- against rosterd -------------------------------------------------------------------------------------------

@pytest.fixture
def client(passkey_daemon: Daemon) -> Iterator[roster.Client]:
    with connect(passkey_daemon) as connected:
        yield connected


def rejected(call: Any, *arguments: Any, **keywords: Any) -> roster.PasskeyRejected:
    with pytest.raises(roster.PasskeyRejected) as refused:
        call(*arguments, **keywords)
    assert refused.value.code == 1019 and refused.value.reason == "passkey_rejected"
    assert refused.value.message, "the daemon's message, in the session's language"
    return refused.value


def refused(reason: str, call: Any, *arguments: Any, **keywords: Any) -> roster.RosterError:
    with pytest.raises(roster.RosterError) as error:
        call(*arguments, **keywords)
    assert error.value.reason == reason, error.value
    return error.value


def audit(client: roster.Client, username: str, **query: Any) -> list[dict[str, Any]]:
    return [cast(dict[str, Any], entry) for entry in client.admin_audit(username=username, limit=200, **query)["items"]]


def test_register_then_log_in_with_user_verification_needs_no_totp_code(passkey_daemon: Daemon,
                                                                      client: roster.Client) -> None:
    account(client, "alice1")
    options = plain(client.passkey_register_begin(password="secret1")["options"])
    assert options["rp"] == {"id": "localhost", "name": "Roster"}
    assert options["user"]["name"] == "alice1" and options["user"]["displayName"]
    assert unb64u(options["user"]["id"]) != b"alice1" and "alice1" not in options["user"]["id"]
    assert len(unb64u(options["challenge"])) == 32 and "=" not in options["challenge"]
    assert [(param["type"], param["alg"]) for param in options["pubKeyCredParams"]] == [
        ("public-key", ES256), ("public-key", EDDSA)]
    assert options["timeout"] == 300000
    assert options["excludeCredentials"] == []
    assert options["authenticatorSelection"] == {"residentKey": "preferred", "userVerification": "preferred"}
    assert options["attestation"] == "none"
    authenticator = SoftAuthenticator(origin=ORIGIN)
    credential = authenticator.create(options)
    first = client.passkey_register_finish(credential=credential)
    assert first["name"] == "Passkey 1" and first["id"]
    # Two-step log-in on: a user-verifying passkey is two factors already, so it asks for no code.
    enable_totp(client, at=time.time())
    with connect(passkey_daemon) as other:
        answer = passkey_log_in(other, authenticator)
        assert answer["username"] == "alice1" and answer["token"]
        session = other.next_event(5, lambda event: isinstance(event, roster.SessionEvent))
        assert session == roster.SessionEvent(user="alice1")
        assert other.session_whoami()["user"] == {"username": "alice1"}
        assert other.account_show()["username"] == "alice1"
    with connect(passkey_daemon) as third:
        assert third.session_resume(token=answer["token"]) == {"username": "alice1"}
    # The second passkey of the account: its name as given, the first one excluded.
    again = plain(client.passkey_register_begin(password="secret1")["options"])
    assert [entry["id"] for entry in again["excludeCredentials"]] == [credential["id"]]
    assert all(entry["type"] == "public-key" for entry in again["excludeCredentials"])
    assert again["challenge"] != options["challenge"] and again["user"]["id"] == options["user"]["id"]
    second = client.passkey_register_finish(credential=SoftAuthenticator(origin=ORIGIN).create(again), name="Laptop")
    assert second["name"] == "Laptop" and second["id"] != first["id"]
    events = [entry["event"] for entry in audit(client, "alice1")]
    assert events.count("passkey_added") == 2
    logins = [entry for entry in audit(client, "alice1", event="login") if entry["outcome"] == "succeeded"]
    assert [entry.get("method") for entry in logins] == ["passkey", "password"]


def test_a_discoverable_passkey_finds_its_user_without_a_username(passkey_daemon: Daemon,
                                                                 client: roster.Client) -> None:
    account(client, "bobby1")
    authenticator = SoftAuthenticator(origin=ORIGIN)
    add_passkey(client, authenticator)
    with connect(passkey_daemon) as other:
        options = plain(other.auth_passkey_begin()["options"])
        assert options["allowCredentials"] == [] and options["rpId"] == "localhost"
        assert options["timeout"] == 300000 and options["userVerification"] == "preferred"
        assert len(unb64u(options["challenge"])) == 32
        response = authenticator.get(options)
        assert response["response"]["userHandle"]
        assert other.auth_passkey_finish(credential=response)["username"] == "bobby1"


def test_with_a_username_the_options_allow_its_credentials_and_a_non_resident_one_logs_in(
        passkey_daemon: Daemon, client: roster.Client) -> None:
    account(client, "carol1")
    _, resident = add_passkey(client, SoftAuthenticator(origin=ORIGIN))
    # A second authenticator (one holds one passkey per account: the options exclude the first), whose passkey is
    # not discoverable: only a username finds it.
    security_key = SoftAuthenticator(origin=ORIGIN)
    _, server_side = add_passkey(client, security_key, resident=False, algorithm=EDDSA)
    with connect(passkey_daemon) as other:
        options = plain(other.auth_passkey_begin(username="carol1")["options"])
        assert sorted(entry["id"] for entry in options["allowCredentials"]) == sorted(
            [resident["id"], server_side["id"]])
        assert all(entry["type"] == "public-key" for entry in options["allowCredentials"])
        response = security_key.get(options)
        assert "userHandle" not in response["response"]
        assert other.auth_passkey_finish(credential=response)["username"] == "carol1"


def test_a_replayed_response_or_challenge_is_rejected_why_challenge(passkey_daemon: Daemon,
                                                                   client: roster.Client) -> None:
    account(client, "dave01")
    authenticator = SoftAuthenticator(origin=ORIGIN)
    add_passkey(client, authenticator)
    with connect(passkey_daemon) as other:
        options = plain(other.auth_passkey_begin()["options"])
        used = authenticator.get(options)
        assert other.auth_passkey_finish(credential=used)["username"] == "dave01"
        # The same response again on the same connection, with no challenge outstanding, then after a new begin.
        assert rejected(other.auth_passkey_finish, credential=used).why == "challenge"
        other.auth_passkey_begin()
        assert rejected(other.auth_passkey_finish, credential=used).why == "challenge"
    with connect(passkey_daemon) as third:
        third.auth_passkey_begin()
        assert rejected(third.auth_passkey_finish, credential=used).why == "challenge"
        # A fresh signature over the old challenge.
        fresh = assertion(third, authenticator, challenge=options["challenge"])
        assert rejected(third.auth_passkey_finish, credential=fresh).why == "challenge"
        # A registration's old challenge too: each begin's challenge is good for one finish.
    begin = plain(client.passkey_register_begin(password="secret1")["options"])
    created = SoftAuthenticator(origin=ORIGIN).create(begin)
    client.passkey_register_finish(credential=created)
    client.passkey_register_begin(password="secret1")
    twice = SoftAuthenticator(origin=ORIGIN).create(begin)
    assert rejected(client.passkey_register_finish, credential=twice).why == "challenge"


@pytest.mark.parametrize(("knobs", "why"), [
    ({"origin": "http://evil.example:8080"}, "origin"),
    ({"origin": "https://localhost:8080"}, "origin"),
    ({"rp_id": "example.com"}, "rp_id"),
    ({"client_data_type": "webauthn.get"}, "type"),
    ({"user_present": False}, "user_present"),
    ({"fmt": "packed", "tamper_signature": True}, "signature"),
    ({"fmt": "fido-u2f"}, "format"),
    ({"challenge": b"\x00" * 32}, "challenge"),
], ids=lambda value: value if isinstance(value, str) else "-".join(map(str, value)))
def test_a_bad_registration_is_rejected_with_its_why(client: roster.Client, knobs: dict[str, Any], why: str) -> None:
    account(client, "erin01")
    assert rejected(add_passkey, client, SoftAuthenticator(origin=ORIGIN), **knobs).why == why
    assert client.passkey_list()["items"] == []
    entries = audit(client, "erin01", event="passkey_rejected")
    assert [(entry["outcome"], entry["reason"]) for entry in entries] == [("failed", why)], entries


def test_packed_self_attestation_and_eddsa_register(client: roster.Client) -> None:
    account(client, "erin02")
    add_passkey(client, SoftAuthenticator(origin=ORIGIN), fmt="packed", algorithm=ES256)
    add_passkey(client, SoftAuthenticator(origin=ORIGIN), algorithm=EDDSA)
    assert len(client.passkey_list()["items"]) == 2


@pytest.mark.parametrize(("knobs", "why"), [
    ({"origin": "http://evil.example:8080"}, "origin"),
    ({"rp_id": "example.com"}, "rp_id"),
    ({"client_data_type": "webauthn.create"}, "type"),
    ({"user_present": False}, "user_present"),
    ({"tamper_signature": True}, "signature"),
], ids=lambda value: value if isinstance(value, str) else "-".join(map(str, value)))
def test_a_bad_assertion_is_rejected_with_its_why_and_logs_nobody_in(passkey_daemon: Daemon, client: roster.Client,
                                                                   knobs: dict[str, Any], why: str) -> None:
    account(client, "frank1")
    authenticator = SoftAuthenticator(origin=ORIGIN)
    add_passkey(client, authenticator)
    with connect(passkey_daemon) as other:
        assert rejected(passkey_log_in, other, authenticator, **knobs).why == why
        assert other.session_whoami()["user"] is None
        # The challenge is spent on the failure: nothing to retry against but a new begin, which works.
        assert passkey_log_in(other, authenticator)["username"] == "frank1"


def test_the_server_accepts_the_origins_of_its_config_only() -> None:
    require_passkey_methods()
    with started_daemon(webauthn_config(origins=("http://localhost:9123",))) as daemon, connect(daemon) as client:
        account(client, "gina01")
        assert rejected(add_passkey, client, SoftAuthenticator(origin=ORIGIN)).why == "origin"
        authenticator = SoftAuthenticator(origin="http://localhost:9123")
        add_passkey(client, authenticator)
        assert rejected(passkey_log_in, client, authenticator, origin=ORIGIN).why == "origin"
        assert passkey_log_in(client, authenticator)["username"] == "gina01"


def test_a_counter_that_goes_back_is_rejected_and_audited(passkey_daemon: Daemon, client: roster.Client) -> None:
    account(client, "hank01")
    authenticator = SoftAuthenticator(origin=ORIGIN, counter_step=1)
    add_passkey(client, authenticator)
    with connect(passkey_daemon) as other:
        passkey_log_in(other, authenticator)
        passkey_log_in(other, authenticator)
        assert authenticator.credentials[0].sign_count == 2
        other.session_logout()
        assert rejected(passkey_log_in, other, authenticator, sign_count=1).why == "counter"
        assert other.session_whoami()["user"] is None
    # A refused passkey log-in is a failed login entry whose reason is the why.
    failed = [entry for entry in audit(client, "hank01", event="login") if entry["outcome"] == "failed"]
    assert [entry["reason"] for entry in failed] == ["counter"], failed


def test_a_counter_that_stays_zero_is_fine(passkey_daemon: Daemon, client: roster.Client) -> None:
    account(client, "ivan01")
    authenticator = SoftAuthenticator(origin=ORIGIN, counter_step=0)
    add_passkey(client, authenticator, algorithm=EDDSA)
    with connect(passkey_daemon) as other:
        for _ in range(3):
            assert passkey_log_in(other, authenticator)["username"] == "ivan01"
    assert authenticator.credentials[0].sign_count == 0


def test_the_same_credential_twice_is_a_duplicate(client: roster.Client) -> None:
    account(client, "jack01")
    authenticator = SoftAuthenticator(origin=ORIGIN)
    _, credential = add_passkey(client, authenticator)
    again = plain(client.passkey_register_begin(password="secret1")["options"])
    assert [entry["id"] for entry in again["excludeCredentials"]] == [credential["id"]]
    duplicate = authenticator.create(again, credential_id=unb64u(credential["id"]), ignore_exclude=True)
    assert rejected(client.passkey_register_finish, credential=duplicate).why == "duplicate"
    assert len(client.passkey_list()["items"]) == 1


def test_without_user_verification_a_totp_account_needs_the_code_next(passkey_daemon: Daemon,
                                                                      client: roster.Client) -> None:
    account(client, "kate01")
    authenticator = SoftAuthenticator(origin=ORIGIN, user_verifying=False)
    add_passkey(client, authenticator)
    # Without TOTP, user presence alone logs in.
    with connect(passkey_daemon) as other:
        assert passkey_log_in(other, authenticator)["username"] == "kate01"
    secret = enable_totp(client, at=time.time())
    with connect(passkey_daemon) as other:
        error = refused("code_required", passkey_log_in, other, authenticator)
        assert error.code == 1015
        # Worded for what was proved: the passkey, not a password nobody typed.
        assert "passkey is right" in str(error) and "password" not in str(error)
        assert other.session_whoami()["user"] is None
        # The connection keeps the verified assertion: the code alone completes it (the step after the
        # enrolment's, since each step's code is good once).
        answer = other.auth_passkey_finish(code=oathtool(secret, time.time() + 30))
        assert answer["username"] == "kate01" and answer["token"]
        assert other.next_event(5, lambda event: isinstance(event, roster.SessionEvent)) == \
            roster.SessionEvent(user="kate01")
    logins = [entry for entry in audit(client, "kate01", event="login") if entry["outcome"] == "succeeded"]
    assert logins[0].get("method") == "passkey"


def test_a_wrong_code_after_code_required_is_invalid_code(passkey_daemon: Daemon, client: roster.Client) -> None:
    account(client, "liam01")
    authenticator = SoftAuthenticator(origin=ORIGIN, user_verifying=False)
    add_passkey(client, authenticator)
    secret = enable_totp(client, at=time.time())
    right = oathtool(secret, time.time() + 30)
    # A code with no verified passkey waiting for it logs nobody in.
    with connect(passkey_daemon) as fresh:
        assert refused("no_pending_passkey", fresh.auth_passkey_finish, code=right).data["param"] == "code"
        assert fresh.session_whoami()["user"] is None
    with connect(passkey_daemon) as other:
        refused("code_required", passkey_log_in, other, authenticator)
        wrong = "000000" if right != "000000" else "111111"
        assert refused("invalid_code", other.auth_passkey_finish, code=wrong).code == 1016
        assert other.session_whoami()["user"] is None
        # The verified assertion was good for one code: a guess more needs the passkey again.
        assert refused("no_pending_passkey", other.auth_passkey_finish, code=right).code == -32602
        refused("code_required", passkey_log_in, other, authenticator)
        assert other.auth_passkey_finish(code=right)["username"] == "liam01"
    failed = [entry for entry in audit(client, "liam01", event="login") if entry["outcome"] == "failed"]
    assert "invalid_code" in [entry["reason"] for entry in failed]


def test_a_locked_account_cannot_log_in_with_its_passkey(passkey_daemon: Daemon, client: roster.Client) -> None:
    account(client, "mona01")
    authenticator = SoftAuthenticator(origin=ORIGIN)
    add_passkey(client, authenticator)
    client.admin_users_lock(username="mona01", reason="test")
    with connect(passkey_daemon) as other:
        assert refused("locked", passkey_log_in, other, authenticator).code == 1014
        assert other.session_whoami()["user"] is None
    client.admin_users_unlock(username="mona01")
    with connect(passkey_daemon) as other:
        assert passkey_log_in(other, authenticator)["username"] == "mona01"


def test_failed_finishes_count_in_the_limiter() -> None:
    require_passkey_methods()
    config = webauthn_config(extra="[Login]\nRateLimitBurst=3\n")
    with started_daemon(config) as daemon, connect(daemon) as client:
        account(client, "nina01")
        authenticator = SoftAuthenticator(origin=ORIGIN)
        add_passkey(client, authenticator)
        with connect(daemon) as other:
            for _ in range(3):
                assert rejected(passkey_log_in, other, authenticator, tamper_signature=True).why == "signature"
            # The burst is used up: even a good assertion is refused until the failures age out.
            limited = refused("rate_limited", passkey_log_in, other, authenticator)
            assert limited.code == 1023 and limited.data["retry_after_ms"] > 0
            assert other.session_whoami()["user"] is None
        client.admin_users_reset_failures(username="nina01")
        with connect(daemon) as other:
            assert passkey_log_in(other, authenticator)["username"] == "nina01"


def test_list_and_remove_and_a_removed_passkey_logs_nobody_in(passkey_daemon: Daemon, client: roster.Client) -> None:
    account(client, "olga01")
    keep, gone = SoftAuthenticator(origin=ORIGIN), SoftAuthenticator(origin=ORIGIN)
    kept, _ = add_passkey(client, keep, name="Phone")
    removed, _ = add_passkey(client, gone)
    listed = client.passkey_list()["items"]
    # Oldest first; an unnamed one is "Passkey N", one past the highest such name the account holds.
    assert [(item["id"], item["name"]) for item in listed] == [(kept["id"], "Phone"), (removed["id"], "Passkey 1")]
    items = {item["id"]: item for item in listed}
    for item in listed:
        created = datetime.fromisoformat(item["created_at"].replace("Z", "+00:00"))
        assert abs(created.timestamp() - time.time()) < 60 and created.tzinfo is not None
    assert all(item["last_used_at"] is None for item in listed)
    with connect(passkey_daemon) as other:
        passkey_log_in(other, keep)
    used = {item["id"]: item["last_used_at"] for item in client.passkey_list()["items"]}
    last_used = used[kept["id"]]
    assert last_used is not None and last_used >= items[kept["id"]]["created_at"]  # RFC 3339 UTC: sorts as time
    assert used[removed["id"]] is None
    assert refused("wrong_password", client.passkey_remove, id=removed["id"], password="wrong12").code == 1012
    assert refused("not_found", client.passkey_remove, id=b64u(b"no such passkey"), password="secret1").code == 1011
    assert client.passkey_remove(id=removed["id"], password="secret1") == {}
    assert [item["id"] for item in client.passkey_list()["items"]] == [kept["id"]]
    assert "passkey_removed" in [entry["event"] for entry in audit(client, "olga01")]
    with connect(passkey_daemon) as other:
        unknown = refused("invalid_credentials", passkey_log_in, other, gone)
        assert unknown.code == 1013 and "passkey belongs to no account" in str(unknown)
        assert other.session_whoami()["user"] is None
        assert passkey_log_in(other, keep)["username"] == "olga01"


def test_the_passkey_methods_need_a_session_and_the_password(passkey_daemon: Daemon, client: roster.Client) -> None:
    refused("unauthenticated", client.passkey_register_begin, password="secret1")
    refused("unauthenticated", client.passkey_list)
    account(client, "pete01")
    assert refused("wrong_password", client.passkey_register_begin, password="wrong12").code == 1012
    client.passkey_register_begin(password="secret1")
    # Not a RegistrationResponseJSON at all: invalid params, not a passkey verdict.
    with pytest.raises(roster.RosterError) as shapeless:
        client.passkey_register_finish(credential={"id": "AAAA"})
    assert shapeless.value.code == -32602 and not isinstance(shapeless.value, roster.PasskeyRejected)


def test_the_export_lists_passkeys_without_their_keys(client: roster.Client) -> None:
    account(client, "quinn1")
    authenticator = SoftAuthenticator(origin=ORIGIN)
    _, credential = add_passkey(client, authenticator, name="Work laptop")
    export = cast(dict[str, Any], client.account_export())
    listed = export.get("passkeys", export["account"].get("passkeys"))
    assert [(item["id"], item["name"]) for item in listed] == [
        (item["id"], item["name"]) for item in client.passkey_list()["items"]]
    assert listed[0]["name"] == "Work laptop"
    text = json.dumps(export)
    assert credential["response"]["publicKey"] not in text and credential["response"]["authenticatorData"] not in text
    assert credential["response"]["attestationObject"] not in text
    stored = authenticator.credentials[0].public_key_der()
    assert b64u(stored) not in text and stored.hex() not in text


def test_an_account_holds_at_most_twenty_passkeys(client: roster.Client) -> None:
    account(client, "rosa01")
    for _ in range(20):
        add_passkey(client, SoftAuthenticator(origin=ORIGIN), algorithm=EDDSA)
    assert len(client.passkey_list()["items"]) == 20
    with pytest.raises(roster.RosterError) as full:
        add_passkey(client, SoftAuthenticator(origin=ORIGIN), algorithm=EDDSA)
    assert (full.value.reason, full.value.code) == ("too_many_passkeys", -32602), full.value
    assert len(client.passkey_list()["items"]) == 20


def test_the_async_client_registers_and_logs_in(passkey_daemon: Daemon) -> None:
    async def run() -> None:
        authenticator = SoftAuthenticator(origin=ORIGIN)
        async with await roster.AsyncClient.connect(passkey_daemon.socket_path, timeout=10) as client:
            await client.users_register(username="sara01", password="secret1")
            await client.auth_login(username="sara01", password="secret1")
            options = plain((await client.passkey_register_begin(password="secret1"))["options"])
            added = await client.passkey_register_finish(credential=authenticator.create(options), name="Async")
            assert [item["name"] for item in (await client.passkey_list())["items"]] == ["Async"]
            assert added["name"] == "Async"
        async with await roster.AsyncClient.connect(passkey_daemon.socket_path, timeout=10) as other:
            request = plain((await other.auth_passkey_begin())["options"])
            with pytest.raises(roster.PasskeyRejected) as bad:
                await other.auth_passkey_finish(credential=authenticator.get(request, tamper_signature=True))
            assert bad.value.why == "signature"
            request = plain((await other.auth_passkey_begin(username="sara01"))["options"])
            answer = await other.auth_passkey_finish(credential=authenticator.get(request))
            assert answer["username"] == "sara01"
            async with await roster.AsyncClient.connect(passkey_daemon.socket_path, timeout=10) as owner:
                await owner.session_resume(token=answer["token"])
                assert (await owner.passkey_remove(id=added["id"], password="secret1")) == {}
    asyncio.run(run())


def test_without_revealing_unknown_users_a_name_without_passkeys_is_offered_the_same_decoy() -> None:
    """`[Login] RevealUnknownUsers=no`: an unknown name and an account without passkeys are each offered one
    credential that is the same on every ask, so the options do not tell who has an account."""
    require_passkey_methods()
    with started_daemon(webauthn_config(extra="[Login]\nRevealUnknownUsers=no\n")) as hidden:
        with connect(hidden) as client:
            account(client, "paula1")
            with connect(hidden) as other:
                def offered(username: str) -> list[dict[str, Any]]:
                    options = plain(other.auth_passkey_begin(username=username)["options"])
                    return cast(list[dict[str, Any]], options["allowCredentials"])
                unknown, nobody_yet = offered("nobody1"), offered("paula1")
                assert len(unknown) == 1 and len(nobody_yet) == 1 and unknown != nobody_yet
                assert offered("nobody1") == unknown and offered("NOBODY1") == unknown
                assert len(unb64u(unknown[0]["id"])) == 32 and unknown[0]["type"] == "public-key"
                _, real = add_passkey(client, SoftAuthenticator(origin=ORIGIN))
                assert [entry["id"] for entry in offered("paula1")] == [real["id"]]
