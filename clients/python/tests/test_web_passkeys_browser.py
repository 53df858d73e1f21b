"""Passkeys in a real browser: Debian's headless chromium with a WebDriver virtual authenticator (CTAP2, internal,
resident keys, user verification), the real gateway at http://localhost:PORT (Chromium honours the RP ID
localhost only on a localhost origin) and the real rosterd as the relying party for that origin. Marked
`browser` (make web-test); skipped, saying so, against a rosterd without its side of passkeys."""
from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import Credential, VirtualAuthenticatorOptions
from selenium.webdriver.remote.webdriver import WebDriver

import roster
from conftest import Daemon, Gateway
from passkey_support import enable_totp, oathtool
from test_web_browser import _clean, browser, fill, screenshot, script, wait_code, wait_for

pytestmark = pytest.mark.browser
__all__ = ["browser"]  # the module's browser fixture, from test_web_browser


def authenticator(verifying: bool = True) -> VirtualAuthenticatorOptions:
    return VirtualAuthenticatorOptions(protocol="ctap2", transport="internal", has_resident_key=True,
                                       has_user_verification=verifying, is_user_verified=verifying)


def fresh_authenticator(driver: WebDriver, verifying: bool = True) -> None:
    """An empty virtual authenticator in place of any other."""
    try:
        driver.remove_virtual_authenticator()
    except ValueError:
        pass  # none yet
    driver.add_virtual_authenticator(authenticator(verifying))


@pytest.fixture
def passkey_page(browser: WebDriver, passkey_gateway: Gateway) -> Iterator[WebDriver]:
    """The browser, with no cookies and a fresh virtual authenticator, for the passkey gateway."""
    fresh_authenticator(browser)
    yield browser
    try:
        browser.remove_virtual_authenticator()
    except ValueError:
        pass
    _clean(browser)


def base(gateway: Gateway) -> str:
    return f"http://localhost:{gateway.host.rsplit(':', 1)[1]}"


def ready(driver: WebDriver) -> bool:
    return driver.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true"


def open_at(driver: WebDriver, gateway: Gateway, path: str) -> None:
    driver.get(base(gateway) + path)
    wait_for(driver, ready)


def register_at(driver: WebDriver, gateway: Gateway, username: str, password: str = "secret1") -> None:
    open_at(driver, gateway, "/register")
    fill(driver, {"username": username})
    wait_code(driver, "username", "available")
    fill(driver, {"password": password})
    wait_code(driver, "password", "valid")
    fill(driver, {"confirm": password})
    submit = driver.find_element(By.ID, "submit")
    wait_for(driver, lambda _: submit.is_enabled())
    submit.click()
    wait_for(driver, lambda d: d.current_url.endswith("/contacts") and ready(d))


def passkey_status(driver: WebDriver) -> tuple[str | None, str | None, str]:
    element = driver.find_element(By.ID, "passkey-status")
    return element.get_attribute("data-reason"), element.get_attribute("data-why"), element.text


def wait_status(driver: WebDriver, reason: str) -> str:
    """The passkey status line's text once it says `reason` ("" for done)."""
    wait_for(driver, lambda d: passkey_status(d)[0] == reason and passkey_status(d)[2] != "", timeout=15)
    return passkey_status(driver)[2]


def passkey_rows(driver: WebDriver) -> Any:
    return script(driver, """return [...document.querySelectorAll('#passkeys tbody tr')]
        .map(row => [...row.cells].slice(0, 3).map(cell => cell.textContent));""")


def add_passkey_in_page(driver: WebDriver, password: str, name: str | None) -> None:
    fill(driver, {"passkey-password": password})
    if name is not None:
        fill(driver, {"passkey-name": name})
    driver.find_element(By.ID, "passkey-add").click()


def log_out(driver: WebDriver) -> None:
    driver.find_element(By.ID, "logout").click()


def session_cookie(driver: WebDriver) -> str | None:
    found = driver.get_cookie("roster_session")
    return None if found is None else str(found["value"])


def test_add_a_passkey_log_in_with_it_without_a_username_then_remove_it(
        passkey_page: WebDriver, passkey_web_daemon: tuple[Daemon, int], passkey_gateway: Gateway) -> None:
    page, gateway = passkey_page, passkey_gateway
    register_at(page, gateway, "passk1")
    open_at(page, gateway, "/account")
    assert page.find_element(By.ID, "no-passkeys").is_displayed()
    assert page.find_element(By.ID, "passkeys").is_displayed() is False
    # The password comes first: a wrong one is the daemon's refusal, in the page's language.
    add_passkey_in_page(page, "wrong12", None)
    assert wait_status(page, "wrong_password") == "Wrong password"
    page.find_element(By.ID, "passkey-password").clear()
    add_passkey_in_page(page, "secret1", "Laptop")
    assert wait_status(page, "") == "Added the passkey Laptop."
    rows = passkey_rows(page)
    assert [(row[0], row[2]) for row in rows] == [("Laptop", "never")]
    stored = page.get_credentials()
    assert len(stored) == 1 and stored[0].is_resident_credential and stored[0].rp_id == "localhost"
    # The same authenticator again: the options exclude its credential, and the browser says so.
    add_passkey_in_page(page, "secret1", None)
    assert wait_status(page, "InvalidStateError") == "This authenticator holds a passkey for this account already."
    assert len(passkey_rows(page)) == 1
    screenshot(page, "account-passkeys")

    # Log out with an empty authenticator in the browser, so that the log-in page's conditional request (the
    # virtual authenticator answers one at once) finds nothing and the page stays quiet.
    credential: Credential = stored[0]
    fresh_authenticator(page)
    log_out(page)
    wait_for(page, lambda d: d.current_url.endswith("/login") and ready(d))
    assert session_cookie(page) is None
    assert page.find_element(By.ID, "username").get_attribute("autocomplete") == "username webauthn"
    button = page.find_element(By.ID, "passkey-login")
    assert button.is_displayed()
    time.sleep(0.5)
    assert passkey_status(page)[2] == ""
    screenshot(page, "login-passkey")
    # Now the authenticator holds the passkey. The page's own encoders are used, as in a browser without
    # parseRequestOptionsFromJSON and toJSON().
    page.add_credential(credential)
    script(page, "delete PublicKeyCredential.parseRequestOptionsFromJSON; delete PublicKeyCredential.prototype.toJSON;")
    assert script(page, "return [typeof PublicKeyCredential.parseRequestOptionsFromJSON, "
                        "typeof PublicKeyCredential.prototype.toJSON]") == ["undefined", "undefined"]
    assert page.find_element(By.ID, "username").get_attribute("value") == ""
    button.click()
    wait_for(page, lambda d: d.current_url.endswith("/contacts") and ready(d), timeout=15)
    assert page.find_element(By.TAG_NAME, "body").get_attribute("data-user") == "passk1"
    assert session_cookie(page) is not None and script(page, "return document.cookie") == ""

    open_at(page, gateway, "/account")
    [(name, _, last_used)] = passkey_rows(page)
    assert name == "Laptop" and last_used != "never"

    # Conditional mediation: with the passkey in the authenticator, the log-in page's autofill request is answered
    # (the virtual authenticator picks it at once) and logs in with no click and no name.
    before = session_cookie(page)
    log_out(page)
    wait_for(page, lambda d: session_cookie(d) not in (None, before) and d.current_url.endswith("/contacts")
             and ready(d), timeout=15)
    assert page.find_element(By.TAG_NAME, "body").get_attribute("data-user") == "passk1"

    # Remove it: the password is asked, and a wrong one refused.
    open_at(page, gateway, "/account")
    remove = page.find_element(By.CSS_SELECTOR, "#passkeys tbody tr button")
    assert remove.get_attribute("aria-label") == "Remove the passkey Laptop"
    remove.click()
    form = page.find_element(By.ID, "passkey-remove-form")
    wait_for(page, lambda _: form.is_displayed())
    assert page.find_element(By.ID, "passkey-remove-label").text == "Your password, to remove the passkey Laptop"
    assert page.switch_to.active_element.get_attribute("id") == "passkey-remove-password"
    page.switch_to.active_element.send_keys("wrong12\n")
    assert wait_status(page, "wrong_password") == "Wrong password"
    assert len(passkey_rows(page)) == 1
    field = page.find_element(By.ID, "passkey-remove-password")
    field.clear()
    field.send_keys("secret1\n")
    assert wait_status(page, "") == "Removed the passkey Laptop."
    assert passkey_rows(page) == [] and page.find_element(By.ID, "no-passkeys").is_displayed()
    assert form.is_displayed() is False

    # The authenticator still holds it, the daemon no longer: the autofill's attempt and the button's both fail,
    # and the page says why, in its language.
    log_out(page)
    wait_for(page, lambda d: d.current_url.endswith("/login") and ready(d))
    open_at(page, gateway, "/login?lang=ko")
    said = wait_status(page, "invalid_credentials")
    assert any("\uac00" <= character <= "\ud7a3" for character in said), said
    page.find_element(By.ID, "passkey-login").click()
    wait_for(page, lambda d: passkey_status(d)[0] == "invalid_credentials", timeout=15)
    assert page.current_url.endswith("/login?lang=ko") and session_cookie(page) is None


def test_a_passkey_without_user_verification_asks_for_the_code(
        passkey_page: WebDriver, passkey_web_daemon: tuple[Daemon, int], passkey_gateway: Gateway) -> None:
    """An authenticator that only tests presence, on an account with two-step log-in: the name typed asks for its
    passkeys by id (Chromium has no discoverable log-in without user verification), the daemon answers
    code_required, and the code completes the log-in on the same connection; a wrong code means the passkey
    again."""
    page, gateway = passkey_page, passkey_gateway
    daemon, _ = passkey_web_daemon
    fresh_authenticator(page, verifying=False)
    register_at(page, gateway, "passk2")
    open_at(page, gateway, "/account")
    add_passkey_in_page(page, "secret1", None)
    assert wait_status(page, "") == "Added the passkey Passkey 1."
    with roster.Client(daemon.socket_path, timeout=10) as client:
        client.auth_login(username="passk2", password="secret1")
        secret = enable_totp(client, at=time.time())
    log_out(page)
    wait_for(page, lambda d: d.current_url.endswith("/login") and ready(d))
    fill(page, {"username": "passk2"})
    page.find_element(By.ID, "passkey-login").click()
    assert wait_status(page, "code_required") == (
        "Your passkey was accepted. Enter the 6-digit code from your authenticator app to finish.")
    assert page.find_element(By.ID, "passkey-code-form").is_displayed()
    assert page.switch_to.active_element.get_attribute("id") == "passkey-code"
    submit = page.find_element(By.ID, "passkey-code-submit")
    assert submit.is_enabled() is False
    wrong = "000000" if oathtool(secret, time.time() + 30) != "000000" else "111111"
    page.switch_to.active_element.send_keys(wrong)
    wait_for(page, lambda _: submit.is_enabled())
    submit.click()
    # The daemon keeps the verified passkey for one code: a wrong one sends the person back to the passkey.
    assert wait_status(page, "invalid_code") == ("The code is wrong, used already or expired "
                                                 "Log in with the passkey again to try another code.")
    assert page.find_element(By.ID, "passkey-code-form").is_displayed() is False
    assert page.switch_to.active_element.get_attribute("id") == "passkey-login"
    page.switch_to.active_element.click()
    wait_status(page, "code_required")
    page.find_element(By.ID, "passkey-code").send_keys(oathtool(secret, time.time() + 30))
    wait_for(page, lambda _: submit.is_enabled())
    submit.click()
    wait_for(page, lambda d: d.current_url.endswith("/contacts") and ready(d), timeout=15)
    assert page.find_element(By.TAG_NAME, "body").get_attribute("data-user") == "passk2"
