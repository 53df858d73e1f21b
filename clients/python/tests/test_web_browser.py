"""roster-web in a real browser: Debian's chromium, driven by selenium through /usr/bin/chromedriver (nothing is
downloaded), against the real rosterd and the real gateway. `make web-test` runs these (`-m browser`)."""
from __future__ import annotations

import asyncio
import http.server
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.wait import WebDriverWait

import roster
from conftest import REPOSITORY, Daemon, Gateway
from mail_support import MailSystem

pytestmark = pytest.mark.browser

CHROMEDRIVER = "/usr/bin/chromedriver"
# The daemon's own debounce (500 ms, nothing overridden): what a person typing gets.
DEBOUNCE_MS = 500
SCREENSHOTS = Path(os.environ.get("ROSTER_SCREENSHOTS") or REPOSITORY / ".build" / "web-screenshots")

# Records every change of a field's status line with the page's clock, and the field's last keystroke, so that
# timing is judged from what the page saw, not from when this process got round to looking.
RECORDER = """
const [field] = arguments;
const input = document.getElementById(field);
const status = document.getElementById(field + "-status");
window.seen = window.seen || {};
window.seen[field] = {changes: [], lastInput: null};
input.addEventListener("input", () => { window.seen[field].lastInput = performance.now(); });
new MutationObserver(() => window.seen[field].changes.push(
    {at: performance.now(), state: status.dataset.state, code: status.dataset.code, text: status.textContent}))
  .observe(status, {attributes: true, childList: true, characterData: true, subtree: true});
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    if not os.access(CHROMEDRIVER, os.X_OK):
        pytest.fail(f"{CHROMEDRIVER} is missing: apt-get install chromium chromium-driver (make test-deps)")
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    arguments = ["--headless", "--disable-gpu", "--window-size=1000,860", "--disable-dev-shm-usage",
                 "--no-first-run", "--disable-extensions"]
    if os.geteuid() == 0:
        arguments.append("--no-sandbox")
    for argument in arguments:
        options.add_argument(argument)  # type: ignore[no-untyped-call]  # untyped in selenium 4.8
    options.add_experimental_option("prefs", {"intl.accept_languages": "en-US,en"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def page(browser: WebDriver, gateway: Gateway) -> Iterator[WebDriver]:
    """The browser with one window and no cookies, for a fresh gateway."""
    yield browser
    _clean(browser)


@pytest.fixture
def mail_page(browser: WebDriver, mail_gateway: Gateway) -> Iterator[WebDriver]:
    """`page`, for the gateway of a daemon that mails (see conftest.mail_gateway)."""
    yield browser
    _clean(browser)


def _clean(browser: WebDriver) -> None:
    for handle in browser.window_handles[1:]:
        browser.switch_to.window(handle)
        browser.close()
    browser.switch_to.window(browser.window_handles[0])
    browser.delete_all_cookies()
    browser.get("about:blank")


def script(driver: WebDriver, source: str, *arguments: Any) -> Any:
    """Runs JavaScript in the page (selenium 4.8 leaves execute_script untyped)."""
    return driver.execute_script(source, *arguments)  # type: ignore[no-untyped-call]


def wait_for(driver: WebDriver, condition: Callable[[WebDriver], Any], timeout: float = 10) -> Any:
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition)


def open_page(driver: WebDriver, gateway: Gateway, path: str) -> None:
    driver.get(f"{gateway.url}{path}")
    wait_for(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")


def status(driver: WebDriver, field: str) -> WebElement:
    return driver.find_element(By.ID, f"{field}-status")


def wait_code(driver: WebDriver, field: str, code: str) -> None:
    try:
        wait_for(driver, lambda d: status(d, field).get_attribute("data-code") == code)
    except TimeoutException:
        pytest.fail(f"{field} never showed {code}; it shows {status(driver, field).get_attribute('data-code')}: "
                    f"{status(driver, field).text}")


def screenshot(driver: WebDriver, name: str) -> None:
    """The whole page, however long: the window is made as tall as the page for the picture."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    size = driver.get_window_size()
    height = script(driver, "return document.documentElement.scrollHeight")
    driver.set_window_size(size["width"], max(size["height"], int(height) + 100))
    driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))
    driver.set_window_size(size["width"], size["height"])


def fill(driver: WebDriver, values: dict[str, str]) -> None:
    """Types each value into its field once the daemon has enabled it."""
    for field, value in values.items():
        element = driver.find_element(By.ID, field)
        wait_for(driver, lambda _: element.is_enabled())
        element.send_keys(value)


def register_in_page(driver: WebDriver, gateway: Gateway, username: str, password: str = "secret1",
                     email: str | None = None) -> None:
    """Registers through the page; with an email the gateway sends the browser to the verify page."""
    open_page(driver, gateway, "/register")
    fill(driver, {"username": username})
    wait_code(driver, "username", "available")
    fill(driver, {"password": password})
    wait_code(driver, "password", "valid")
    fill(driver, {"confirm": password})
    if email is not None:
        fill(driver, {"email": email})
        wait_code(driver, "email", "valid")
    submit = driver.find_element(By.ID, "submit")
    wait_for(driver, lambda _: submit.is_enabled())
    submit.click()
    wait_for(driver, lambda d: d.current_url.endswith("/verify" if email is not None else "/contacts"))
    wait_for(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")


def test_a_short_name_shows_nothing_until_the_debounce_ends_then_too_short(page: WebDriver, gateway: Gateway) -> None:
    open_page(page, gateway, "/register?lang=zh-Hans")
    script(page, RECORDER, "username")
    assert status(page, "username").get_attribute("data-code") == "empty"
    page.find_element(By.ID, "username").send_keys("abc")
    wait_code(page, "username", "too_short")
    assert status(page, "username").text == "用户名长度至少为6位"
    seen = script(page, "return window.seen.username")
    # The first change after the keystrokes is the verdict itself, and it came no sooner than the debounce.
    assert [change["code"] for change in seen["changes"]][:1] == ["too_short"], seen
    assert seen["changes"][0]["at"] - seen["lastInput"] >= DEBOUNCE_MS - 20, seen
    assert page.find_element(By.ID, "submit").is_enabled() is False
    assert page.find_element(By.ID, "password").is_enabled() is False
    screenshot(page, "register-zh-Hans")


def test_a_taken_name_shows_validating_then_taken(page: WebDriver, daemon: Daemon, gateway: Gateway) -> None:
    with roster.Client(daemon.socket_path) as client:
        client.users_register(username="alice1", password="secret1")
    open_page(page, gateway, "/register")
    script(page, RECORDER, "username")
    page.find_element(By.ID, "username").send_keys("alice1")
    wait_code(page, "username", "taken")
    states = [change["state"] for change in script(page, "return window.seen.username.changes")]
    assert states[0] == "validating" and states[-1] == "invalid", states
    assert "validating" not in states[states.index("invalid"):]
    assert status(page, "username").text == "This username is already taken"
    screenshot(page, "register")


def test_a_name_registered_in_one_window_shows_taken_live_in_the_other(page: WebDriver, gateway: Gateway) -> None:
    open_page(page, gateway, "/register")
    watcher = page.current_window_handle
    fill(page, {"username": "bobby1"})
    wait_code(page, "username", "available")
    page.switch_to.new_window("window")
    register_in_page(page, gateway, "bobby1")
    page.switch_to.window(watcher)
    wait_code(page, "username", "taken")
    assert page.find_element(By.ID, "password").is_enabled() is False
    assert page.find_element(By.ID, "submit").is_enabled() is False


def search(driver: WebDriver, query: str) -> None:
    box = driver.find_element(By.ID, "query")
    box.clear()
    box.send_keys(query)
    wait_results_for(driver, query)


def wait_results_for(driver: WebDriver, query: str) -> None:
    """Waits until the list shows the results of `query`. The daemon throttles the search (300 ms): a keystroke
    after a quiet moment gets its results at once and the rest come at the window's end, so "z" of "zs" may be
    shown first, with the count "zs" has too ("1 of 4") but other marks. The list says which query it shows."""
    wait_for(driver, lambda d: d.find_element(By.ID, "results").get_attribute("data-query") == query)


def results(driver: WebDriver) -> Any:
    """The contacts shown, each with its highlighted pieces, read in one go (the list is redrawn as results come)."""
    return script(driver, """return [...document.querySelectorAll('#results li:not(.empty)')].map(item => ({
        name: item.querySelector('.name').textContent,
        marks: [...item.querySelectorAll('mark')].map(mark => mark.textContent)}));""")


def test_register_add_contacts_and_search_by_pinyin_initials(page: WebDriver, gateway: Gateway) -> None:
    register_in_page(page, gateway, "carol1")
    assert page.find_element(By.TAG_NAME, "body").get_attribute("data-user") == "carol1"
    for contact in ({"contact-name": "张三", "contact-phone": "138 0013 8000"},
                    {"contact-name": "김수현", "contact-email": "soohyun@example.kr"},
                    {"contact-name": "Nguyễn Văn Ánh", "contact-note": "Hà Nội"},
                    {"contact-name": "Alice Smith", "contact-phone": "+1 (555) 010-9999"}):
        fill(page, contact)
        page.find_element(By.ID, "add").click()
        wait_for(page, lambda d: d.find_element(By.ID, "form-status").text == f"Added {contact['contact-name']}.")
    wait_for(page, lambda d: d.find_element(By.ID, "count").text == "4 contacts")
    search(page, "555010")
    assert results(page) == [{"name": "Alice Smith", "marks": ["555) 010"]}]
    search(page, "nva")
    assert results(page) == [{"name": "Nguyễn Văn Ánh", "marks": ["N", "V", "Á"]}]
    search(page, "a")
    assert page.find_element(By.ID, "count").text == "2 of 4 contacts"
    # "z" alone first: its results, with the count "zs" will have too, are not those of "zs".
    search(page, "z")
    assert results(page) == [{"name": "张三", "marks": ["张"]}]
    assert page.find_element(By.ID, "count").text == "1 of 4 contacts"
    page.find_element(By.ID, "query").send_keys("s")
    wait_results_for(page, "zs")
    assert results(page) == [{"name": "张三", "marks": ["张三"]}]
    assert page.find_element(By.ID, "count").text == "1 of 4 contacts"
    screenshot(page, "contacts")


def test_the_page_marks_the_characters_the_daemon_says_matched(page: WebDriver, daemon: Daemon,
                                                              gateway: Gateway) -> None:
    """The daemon's `match` decides the marks: a page folding names itself marked all of 张三 for "zhang" and all
    of 单田芳 for "shan", where only the first character's syllable matched."""
    register_in_page(page, gateway, "heidi1")
    with roster.Client(daemon.socket_path, timeout=10) as client:
        client.auth_login(username="heidi1", password="secret1")
        for name, phone in (("张三", None), ("单田芳", None), ("김수현", None), ("Đặng Thu Thảo", "+84 (24) 3826-1234")):
            client.contacts_add(name=name, phone=phone)
    wait_for(page, lambda d: d.find_element(By.ID, "count").text == "4 contacts")
    for query, expected in [("zs", [{"name": "张三", "marks": ["张三"]}]),
                            ("zhang", [{"name": "张三", "marks": ["张"]}]),
                            ("shan", [{"name": "单田芳", "marks": ["单"]}]),
                            ("ㄱㅅ", [{"name": "김수현", "marks": ["김수"]}]),
                            ("dang", [{"name": "Đặng Thu Thảo", "marks": ["Đặng"]}]),
                            ("3826", [{"name": "Đặng Thu Thảo", "marks": ["3826"]}])]:
        search(page, query)
        assert results(page) == expected, query


def test_a_logged_in_page_shows_account_and_log_out_not_register_and_log_in(page: WebDriver,
                                                                           gateway: Gateway) -> None:
    def links() -> list[str]:
        return list(script(page, """return [...document.querySelectorAll('nav li')]
            .filter(item => !item.hidden && item.offsetParent !== null).map(item => item.textContent.trim())"""))
    open_page(page, gateway, "/login")
    assert links() == ["Register", "Log in"]
    register_in_page(page, gateway, "ivan01")
    assert links() == ["Account", "Contacts", "Log out"]
    open_page(page, gateway, "/account")
    assert links() == ["Account", "Contacts", "Log out"]
    page.find_element(By.ID, "logout").click()
    wait_for(page, lambda d: d.current_url.endswith("/login"))
    wait_for(page, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    assert links() == ["Register", "Log in"]


def test_log_out_deletes_the_cookie_and_the_old_cookie_logs_nobody_in(page: WebDriver, gateway: Gateway) -> None:
    register_in_page(page, gateway, "dave01")
    found = page.get_cookie("roster_session")
    assert found is not None
    cookie: dict[str, Any] = found
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    assert script(page, "return document.cookie") == ""
    open_page(page, gateway, "/account")
    assert page.find_element(By.ID, "account-username").text == "dave01"
    wait_for(page, lambda d: script(d, 
        "return [...document.querySelectorAll('#sessions tbody tr td:first-child')].map(c => c.textContent)")
        == ["roster-web (this session)"])
    # The password form validates as the daemon says: the current password again is refused as the new one.
    fill(page, {"current": "secret1", "new": "secret1"})
    wait_code(page, "new", "same_as_current")
    screenshot(page, "account")
    page.find_element(By.ID, "new").clear()
    fill(page, {"new": "better22"})
    wait_code(page, "new", "valid")
    fill(page, {"confirm": "better22"})
    wait_for(page, lambda d: d.find_element(By.ID, "submit").is_enabled())
    page.find_element(By.ID, "submit").click()
    wait_for(page, lambda d: d.find_element(By.ID, "form-status").text == "Password changed; 0 other sessions ended.")
    page.find_element(By.ID, "logout").click()
    wait_for(page, lambda d: d.current_url.endswith("/login"))
    assert page.get_cookie("roster_session") is None
    # The old cookie put back into the browser: the page's WebSocket is not logged in, so it is sent away.
    page.add_cookie({"name": "roster_session", "value": cookie["value"], "path": "/", "httpOnly": True,
                     "sameSite": "Strict"})
    page.get(f"{gateway.url}/contacts")
    wait_for(page, lambda d: d.current_url.endswith("/login"))

    async def replay() -> None:
        jar = aiohttp.CookieJar(unsafe=True)
        async with aiohttp.ClientSession(cookie_jar=jar, cookies={"roster_session": cookie["value"]}) as session:
            ws = await session.ws_connect(f"{gateway.url}/ws", headers={"Origin": gateway.url})
            ready = await ws.receive_json(timeout=10)
            assert ready["params"]["type"] == "ready" and ready["params"]["user"] is None
            await ws.send_json({"id": 1, "method": "contacts.list"})
            assert (await ws.receive_json(timeout=10))["error"]["data"]["reason"] == "unauthenticated"
            await ws.close()
    asyncio.run(replay())


class OtherSite:
    """A page on another origin (another port of 127.0.0.1) that tries to open the gateway's WebSocket."""

    def __init__(self, directory: Path, gateway: Gateway) -> None:
        (directory / "evil.html").write_text(
            "<!doctype html><title>waiting</title><script>\n"
            f"const socket = new WebSocket('ws://{gateway.host}/ws');\n"
            "socket.onopen = () => { document.title = 'open'; };\n"
            "socket.onmessage = (m) => { document.title = 'message ' + m.data; };\n"
            "socket.onclose = (e) => { if (document.title === 'waiting') document.title = 'closed ' + e.code; };\n"
            "</script>")

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, directory=str(directory), **kwargs)

            def log_message(self, *_: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_cross_origin_websocket_and_a_rebound_host_are_refused(page: WebDriver, daemon: Daemon,
                                                                 gateway: Gateway) -> None:
    register_in_page(page, gateway, "erin01")
    other = OtherSite(daemon.directory, gateway)
    try:
        page.get(f"{other.url}/evil.html")
        wait_for(page, lambda d: d.title != "waiting")
        assert page.title == "closed 1006"
    finally:
        other.stop()
    assert "refused a WebSocket from Origin 'http://127.0.0.1:" in gateway.log()
    # DNS rebinding: chromium resolves every *.localhost name to the loopback address, as a rebound name would.
    port = gateway.host.rsplit(":", 1)[1]
    page.get(f"http://rebound.localhost:{port}/register")
    assert "does not serve that host name" in page.find_element(By.TAG_NAME, "body").text
    assert "refused a request for Host 'rebound.localhost:" in gateway.log()


def test_the_pages_work_from_the_keyboard(page: WebDriver, daemon: Daemon, gateway: Gateway) -> None:
    """Labels name every field, and Tab and Enter alone log a person in."""
    with roster.Client(daemon.socket_path) as client:
        client.users_register(username="frank1", password="secret1")
    for path in ("/register", "/forgot", "/recover", "/login"):
        open_page(page, gateway, path)
        # Every field has a label, and its state line is announced (aria-live) and tied to it (aria-describedby).
        unlabelled = script(page, """return [...document.querySelectorAll('input:not([hidden])')].filter(input =>
            !document.querySelector(`label[for="${input.id}"]`)?.textContent.trim()
            || (input.dataset.field && document.getElementById(input.getAttribute('aria-describedby'))
                  ?.getAttribute('aria-live') !== 'polite')).map(input => input.id)""")
        assert unlabelled == [], path
    page.find_element(By.ID, "username").click()
    active = page.switch_to.active_element
    active.send_keys("frank1")
    active.send_keys("\t")
    page.switch_to.active_element.send_keys("secret1")
    wait_for(page, lambda d: d.find_element(By.ID, "submit").is_enabled())
    wait_code(page, "username", "available")
    screenshot(page, "login")
    started = time.monotonic()
    page.switch_to.active_element.send_keys("\n")
    wait_for(page, lambda d: d.current_url.endswith("/contacts"))
    assert time.monotonic() - started < 10


def oathtool(secret: str, at: float) -> str:
    """The TOTP code for `secret` at Unix time `at`, from Debian's oathtool, not from the daemon's own code."""
    return subprocess.run(["/usr/bin/oathtool", "--totp", "-b", secret, "-N", f"@{int(at)}"], check=True,
                          capture_output=True, text=True).stdout.strip()


def test_log_in_with_two_step_log_in_asks_for_the_code(page: WebDriver, daemon: Daemon, gateway: Gateway) -> None:
    with roster.Client(daemon.socket_path) as client:
        client.users_register(username="grace1", password="secret1")
        client.auth_login(username="grace1", password="secret1")
        secret = client.account_totp_enroll(password="secret1")["secret"]
        client.account_totp_confirm(code=oathtool(secret, time.time()))
    open_page(page, gateway, "/login")
    assert page.find_element(By.ID, "code-field").is_displayed() is False
    fill(page, {"username": "grace1", "password": "secret1"})
    submit = page.find_element(By.ID, "submit")
    wait_for(page, lambda _: submit.is_enabled())
    submit.click()
    # The password was right: the gateway answers code_required, and the page asks for the code.
    wait_for(page, lambda d: d.find_element(By.ID, "form-status").get_attribute("data-reason") == "code_required")
    assert page.find_element(By.ID, "code-field").is_displayed()
    assert page.switch_to.active_element.get_attribute("id") == "code"
    assert submit.is_enabled() is False
    # The step after the one the enrolment used: each step's code is good once.
    page.switch_to.active_element.send_keys(oathtool(secret, time.time() + 30))
    wait_for(page, lambda _: submit.is_enabled())
    submit.click()
    wait_for(page, lambda d: d.current_url.endswith("/contacts"))


def recover_in_page(driver: WebDriver, username: str, code: str, new_password: str) -> None:
    """On the /recover page a link opened: the fields hold the link's name and code (and the address bar no longer
    holds them), the new password gets the register page's rules live, and submitting logs in."""
    wait_for(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    assert driver.find_element(By.ID, "username").get_attribute("value") == username
    assert driver.find_element(By.ID, "code").get_attribute("value") == code
    assert driver.current_url.endswith("/recover"), driver.current_url
    assert script(driver, "return document.referrer") == ""
    fill(driver, {"password": "ab"})
    wait_code(driver, "password", "too_short")
    assert driver.find_element(By.ID, "confirm").is_enabled() is False
    driver.find_element(By.ID, "password").clear()
    fill(driver, {"password": new_password})
    wait_code(driver, "password", "valid")
    fill(driver, {"confirm": new_password[:-1]})
    wait_code(driver, "confirm", "mismatch")
    submit = driver.find_element(By.ID, "submit")
    assert submit.is_enabled() is False
    driver.find_element(By.ID, "confirm").send_keys(new_password[-1])
    wait_code(driver, "confirm", "valid")
    wait_for(driver, lambda _: submit.is_enabled())
    screenshot(driver, "recover")
    submit.click()
    wait_for(driver, lambda d: d.current_url.endswith("/contacts"))
    wait_for(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    assert driver.find_element(By.TAG_NAME, "body").get_attribute("data-user") == username


def test_the_recover_page_takes_a_code_from_its_link_and_logs_in_with_the_new_password(
        page: WebDriver, daemon: Daemon, gateway: Gateway) -> None:
    """A recovery code in the link's place (auth.recover takes both kinds alike); a wrong code is said clearly."""
    with roster.Client(daemon.socket_path, timeout=10) as client:
        client.users_register(username="leon01", password="secret1")
        client.auth_login(username="leon01", password="secret1")
        code = client.account_recovery_codes(password="secret1")["codes"][0]
    open_page(page, gateway, "/recover?user=leon01&code=aaaa-bbbb-cccc-dddd")
    fill(page, {"password": "better22"})
    wait_code(page, "password", "valid")
    fill(page, {"confirm": "better22"})
    submit = page.find_element(By.ID, "submit")
    wait_for(page, lambda _: submit.is_enabled())
    submit.click()
    wait_for(page, lambda d: d.find_element(By.ID, "form-status").get_attribute("data-reason") == "invalid_code")
    assert page.find_element(By.ID, "form-status").text == "The code is wrong, used already or expired"
    page.get(f"{gateway.url}/recover?user=leon01&code={code}")
    recover_in_page(page, "leon01", code, "better22")
    with roster.Client(daemon.socket_path, timeout=10) as client:
        assert client.auth_login(username="leon01", password="better22")["username"] == "leon01"


def test_register_with_an_email_verify_it_then_forgot_password_and_the_mailed_link(
        mail_page: WebDriver, mail_daemon: Daemon, mail_gateway: Gateway, mail_system: MailSystem) -> None:
    page = mail_page
    register_in_page(page, mail_gateway, "mike01", email="mike@example.com")
    state = page.find_element(By.ID, "verify-state")
    assert state.text == "Not verified yet" and state.get_attribute("data-verified") == "false"
    code = mail_system.next_to("mike@example.com").code
    fill(page, {"code": code})
    submit = page.find_element(By.ID, "submit")
    wait_for(page, lambda _: submit.is_enabled())
    submit.click()
    wait_for(page, lambda d: d.find_element(By.ID, "verify-state").get_attribute("data-verified") == "true")
    assert page.find_element(By.ID, "verify-state").text == "Verified"
    assert page.find_element(By.ID, "verify-status").text == "Your email is verified."
    assert page.find_element(By.ID, "verify-form").is_displayed() is False
    screenshot(page, "verify")
    open_page(page, mail_gateway, "/account")
    assert page.find_element(By.ID, "account-email-state").text == "Verified"
    page.find_element(By.ID, "logout").click()
    wait_for(page, lambda d: d.current_url.endswith("/login"))
    wait_for(page, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    page.find_element(By.ID, "forgot-link").click()
    wait_for(page, lambda d: d.current_url.endswith("/forgot"))
    wait_for(page, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    fill(page, {"username": "mike01"})
    page.find_element(By.ID, "submit").click()
    said = "If the account has a verified email, a code is on its way to it."
    wait_for(page, lambda d: d.find_element(By.ID, "forgot-status").text == said)
    screenshot(page, "forgot")
    # A name nobody has gets the very same words.
    page.find_element(By.ID, "username").clear()
    fill(page, {"username": "nobody9"})
    page.find_element(By.ID, "submit").click()
    wait_for(page, lambda d: d.find_element(By.ID, "forgot-status").text == said)
    link = mail_system.next_to("mike@example.com", containing="/recover?").link
    assert link.startswith(f"{mail_gateway.url}/recover?user=mike01&code=")
    page.get(link)
    recover_in_page(page, "mike01", link.rsplit("=", 1)[1], "better22")
    with roster.Client(mail_daemon.socket_path, timeout=10) as client:
        with pytest.raises(roster.RosterError) as old:
            client.auth_login(username="mike01", password="secret1")
        assert old.value.reason == "wrong_password"
