"""What the passkey tests share: the software authenticator's ceremonies through a roster.Client, and TOTP codes
from Debian's oathtool (never from the daemon's own code)."""
from __future__ import annotations

import subprocess
from typing import Any, cast

import roster
from soft_authenticator import SoftAuthenticator


def plain(value: object) -> dict[str, Any]:
    """A TypedDict answer (the options) as the plain JSON object the authenticator and the browser take."""
    return cast(dict[str, Any], value)


def oathtool(secret: str, at: float) -> str:
    """The TOTP code for `secret` at Unix time `at`, from Debian's oathtool."""
    return subprocess.run(["/usr/bin/oathtool", "--totp", "-b", secret, "-N", f"@{int(at)}"], check=True,
                          capture_output=True, text=True).stdout.strip()


def account(client: roster.Client, username: str, password: str = "secret1") -> None:
    """Registers `username` and logs this connection in as it."""
    client.users_register(username=username, password=password)
    client.auth_login(username=username, password=password)


def add_passkey(client: roster.Client, authenticator: SoftAuthenticator, *, password: str = "secret1",
                name: str | None = None, **knobs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """passkey.register_begin, the authenticator's create() with `knobs`, passkey.register_finish: the finish's
    answer ({id, name}) and the RegistrationResponseJSON sent."""
    options = plain(client.passkey_register_begin(password=password)["options"])
    credential = authenticator.create(options, **knobs)
    return plain(client.passkey_register_finish(credential=credential, name=name)), credential


def assertion(client: roster.Client, authenticator: SoftAuthenticator, *, username: str | None = None,
              **knobs: Any) -> dict[str, Any]:
    """auth.passkey_begin and the authenticator's get() with `knobs`: the AuthenticationResponseJSON to finish with."""
    options = plain(client.auth_passkey_begin(username=username)["options"])
    return authenticator.get(options, **knobs)


def passkey_log_in(client: roster.Client, authenticator: SoftAuthenticator, *, username: str | None = None,
                   **knobs: Any) -> dict[str, Any]:
    """A whole passkey log-in on `client`: begin, get, finish; the finish's answer ({username, token})."""
    return plain(client.auth_passkey_finish(credential=assertion(client, authenticator, username=username, **knobs)))


def enable_totp(client: roster.Client, password: str = "secret1", *, at: float) -> str:
    """Turns two-step log-in on for the logged-in account with a code of `at`'s step; returns the secret."""
    secret = client.account_totp_enroll(password=password)["secret"]
    client.account_totp_confirm(code=oathtool(secret, at))
    return secret
