"""The Python client's email methods against the real rosterd, mailing through msmtp to a throwaway SMTP server.
Each test needs the daemon's side of email; against a daemon without it, each is skipped with that said."""
from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

import roster
from conftest import Daemon, connect, require_mail_methods, started_daemon
from mail_support import FROM, MailSystem


@pytest.fixture
def mail_client(mail_daemon: Daemon) -> Iterator[roster.Client]:
    with connect(mail_daemon) as connected:
        yield connected


def test_registering_with_an_email_mails_a_code_that_verifies_it(mail_client: roster.Client,
                                                                mail_system: MailSystem) -> None:
    mail_client.users_register(username="alice1", password="secret1", email="alice@example.com")
    mail_client.auth_login(username="alice1", password="secret1")
    assert mail_client.account_show()["email_verified"] is False
    mail = mail_system.next_to("alice@example.com")
    assert mail.message["From"].addresses[0].addr_spec == FROM
    assert mail.message["Message-ID"]
    with pytest.raises(roster.RosterError) as wrong:
        mail_client.account_email_verify(code="000000" if mail.code != "000000" else "111111")
    assert wrong.value.reason == "invalid_code"
    assert mail_client.account_email_verify(code=mail.code) == {"email_verified": True}
    assert mail_client.account_show()["email_verified"] is True
    # Used up: the same code again is a wrong one.
    with pytest.raises(roster.RosterError) as used:
        mail_client.account_email_verify(code=mail.code)
    assert used.value.reason == "invalid_code"


def test_a_new_code_is_limited_to_one_a_minute_and_needs_an_email(mail_client: roster.Client,
                                                                 mail_system: MailSystem) -> None:
    mail_client.users_register(username="bobby1", password="secret1", email="bob@example.com")
    mail_client.auth_login(username="bobby1", password="secret1")
    mail_system.next_to("bob@example.com")
    # Registration mailed one just now.
    with pytest.raises(roster.RosterError) as limited:
        mail_client.account_email_verify_send()
    assert limited.value.reason == "rate_limited" and limited.value.data["retry_after_ms"] > 0
    mail_client.users_register(username="carol1", password="secret1")
    mail_client.auth_login(username="carol1", password="secret1")
    with pytest.raises(roster.RosterError) as none:
        mail_client.account_email_verify_send()
    assert none.value.reason == "no_email"


def test_without_sendmail_a_code_cannot_be_sent() -> None:
    with started_daemon() as daemon:
        require_mail_methods(daemon)
        with connect(daemon) as client:
            client.users_register(username="dave01", password="secret1", email="dave@example.com")
            client.auth_login(username="dave01", password="secret1")
            with pytest.raises(roster.RosterError) as off:
                client.account_email_verify_send()
            assert off.value.reason == "mail_unavailable"


def test_recovery_by_mail_answers_the_same_for_everyone_and_its_code_sets_the_password(
        mail_client: roster.Client, mail_system: MailSystem) -> None:
    mail_client.users_register(username="erin01", password="secret1", email="erin@example.com")
    mail_client.auth_login(username="erin01", password="secret1")
    mail_client.account_email_verify(code=mail_system.next_to("erin@example.com").code)
    mail_client.users_register(username="frank1", password="secret1", email="frank@example.com")
    mail_system.next_to("frank@example.com")
    for name in ("nobody9", "frank1", "erin01"):
        assert mail_client.auth_recover_start(username=name) == {}
    mail = mail_system.next_to("erin@example.com", containing="/recover?")
    assert mail.link == f"{mail_system.base_url}/recover?user=erin01&code={mail.code}"
    answer = mail_client.auth_recover(username="erin01", code=mail.code, new_password="better22")
    assert answer["username"] == "erin01" and answer["token"]
    with pytest.raises(roster.RosterError) as again:
        mail_client.auth_recover(username="erin01", code=mail.code, new_password="better33")
    assert again.value.reason == "invalid_code"
    # Only the account with a verified email was mailed: frank1's is unverified, nobody9 does not exist.
    listed = mail_client.admin_mail_list()["items"]
    assert sorted((item["recipient"], item["kind"]) for item in listed) == [
        ("erin@example.com", "password_changed"), ("erin@example.com", "recovery"),
        ("erin@example.com", "verification"), ("frank@example.com", "verification")]


def test_the_outbox_is_listed_without_codes_and_counted(mail_client: roster.Client, mail_system: MailSystem) -> None:
    mail_client.users_register(username="grace1", password="secret1", email="grace@example.com")
    code = mail_system.next_to("grace@example.com").code
    # The SMTP server has it; the daemon marks it sent once msmtp has exited.
    deadline = time.monotonic() + 10
    while not (sent := mail_client.admin_mail_list(status="sent", limit=10)["items"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [(item["kind"], item["recipient"], item["status"]) for item in sent] == [
        ("verification", "grace@example.com", "sent")]
    assert sent[0]["attempts"] == 1 and sent[0]["last_error"] is None and sent[0]["sent_at"]
    assert code not in repr(mail_client.admin_mail_list())
    assert mail_client.admin_mail_list(status="queued")["items"] == []
    assert mail_client.admin_mail_list(status="failed")["items"] == []
    assert mail_client.admin_stats()["mail"] == {"queued": 0, "failed": 0, "sent": 1}
