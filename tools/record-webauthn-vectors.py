#!/usr/bin/env python3
"""Records WebAuthn vectors from Chromium's WebDriver virtual authenticator, for the Swift verifier's tests
(protocol.md "Passkeys"): one registration and one discoverable assertion, as a browser really sends them.

It serves a one-page site on http://localhost:PORT (loopback only), starts Debian's headless chromium through
/usr/bin/chromedriver with a virtual authenticator (CTAP2, internal transport, resident keys), and on that page
calls navigator.credentials.create (rp {id: "localhost", name: "Roster"}, a 32-byte random challenge, a 32-byte
random user id, pubKeyCredParams [-7, -8], attestation "none", residentKey and userVerification "preferred")
and then navigator.credentials.get (a fresh challenge, allowCredentials empty, userVerification "preferred").
The responses are taken in the WebAuthn JSON shapes (RegistrationResponseJSON, AuthenticationResponseJSON) with
PublicKeyCredential.toJSON() where Chromium has it, else encoded by hand on the page; when toJSON exists the
hand encoding is made as well and must agree with it.

A fresh authenticator for each file:
  chromium-es256.json          hasUserVerification and isUserVerified true (flags UP|UV), pubKeyCredParams [-7, -8]
  chromium-es256-up-only.json  hasUserVerification and isUserVerified false (flags UP only), [-7, -8]
  chromium-eddsa.json          as chromium-es256.json but [-8, -7]: the virtual authenticator has EdDSA and takes
                               the first algorithm it knows, so rosterd's [-7, -8] always gets ES256 from it
each {rp_id, origin, registration: {challenge, user_id, credential}, assertion: {challenge, allow_credentials,
credential}}, with every binary field base64url without padding. `user_id` is the user.id the registration asked
for (the handle an assertion's userHandle must match) and `allow_credentials` the ids the assertion asked for
(empty: discoverable); the rest is the shape protocol.md "Passkeys" gives. Chromium refuses a discoverable get on the
authenticator without user verification, so that file's assertion names its credential in allowCredentials.

It also probes, without writing anything, what the virtual authenticator does with pubKeyCredParams [-8] alone
and [-8, -7] (whether it has EdDSA at all), and how its sign counter moves over a few assertions; it prints
what it found.

Usage, from the repository (the venv of `make python-env`, which sees Debian's python3-selenium):
    .build/python/bin/python tools/record-webauthn-vectors.py [--port 8080] [--out Tests/RosterWebAuthnTests/Fixtures]
Port 8080 makes the origin http://localhost:8080, one of rosterd's default [WebAuthn] Origins=.
"""
from __future__ import annotations

import argparse
import base64
import http.server
import json
import os
import secrets
import sys
import threading
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.virtual_authenticator import VirtualAuthenticatorOptions
from selenium.webdriver.remote.webdriver import WebDriver

CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM = "/usr/bin/chromium"
REPOSITORY = Path(__file__).resolve().parents[1]
RP_ID = "localhost"
# file, whether the authenticator verifies users, pubKeyCredParams (most preferred first)
VECTORS = [("chromium-es256.json", True, [-7, -8]), ("chromium-es256-up-only.json", False, [-7, -8]),
           ("chromium-eddsa.json", True, [-8, -7])]

PAGE = """<!doctype html>
<meta charset="utf-8">
<title>Roster WebAuthn vectors</title>
<p>Recording.</p>
<script>
"use strict";
const b64u = {
  encode(buffer) {
    const bytes = new Uint8Array(buffer instanceof ArrayBuffer ? buffer : buffer.buffer);
    let text = "";
    for (const byte of bytes) text += String.fromCharCode(byte);
    return btoa(text).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
  },
  decode(text) {
    const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
    return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  },
};
const optional = (value) => (value === null || value === undefined ? null : b64u.encode(value));

function handRegistration(credential) {
  const r = credential.response;
  return {
    id: credential.id,
    rawId: b64u.encode(credential.rawId),
    type: credential.type,
    response: {
      clientDataJSON: b64u.encode(r.clientDataJSON),
      attestationObject: b64u.encode(r.attestationObject),
      authenticatorData: b64u.encode(r.getAuthenticatorData()),
      publicKey: optional(r.getPublicKey()),
      publicKeyAlgorithm: r.getPublicKeyAlgorithm(),
      transports: r.getTransports(),
    },
    authenticatorAttachment: credential.authenticatorAttachment,
    clientExtensionResults: credential.getClientExtensionResults(),
  };
}

function handAssertion(credential) {
  const r = credential.response;
  return {
    id: credential.id,
    rawId: b64u.encode(credential.rawId),
    type: credential.type,
    response: {
      clientDataJSON: b64u.encode(r.clientDataJSON),
      authenticatorData: b64u.encode(r.authenticatorData),
      signature: b64u.encode(r.signature),
      userHandle: optional(r.userHandle),
    },
    authenticatorAttachment: credential.authenticatorAttachment,
    clientExtensionResults: credential.getClientExtensionResults(),
  };
}

function shaped(credential, byHand) {
  const hand = byHand(credential);
  const hasToJSON = typeof credential.toJSON === "function";
  return {hasToJSON, json: hasToJSON ? credential.toJSON() : hand, hand};
}

window.rosterCreate = async (o) => {
  const credential = await navigator.credentials.create({publicKey: {
    rp: o.rp,
    user: {id: b64u.decode(o.user.id), name: o.user.name, displayName: o.user.displayName},
    challenge: b64u.decode(o.challenge),
    pubKeyCredParams: o.pubKeyCredParams.map((alg) => ({type: "public-key", alg})),
    timeout: 60000,
    excludeCredentials: [],
    authenticatorSelection: o.authenticatorSelection,
    attestation: o.attestation,
  }});
  return shaped(credential, handRegistration);
};

window.rosterGet = async (o) => {
  const credential = await navigator.credentials.get({publicKey: {
    challenge: b64u.decode(o.challenge),
    rpId: o.rpId,
    timeout: 60000,
    allowCredentials: o.allowCredentials.map((id) => ({type: "public-key", id: b64u.decode(id)})),
    userVerification: o.userVerification,
  }});
  return shaped(credential, handAssertion);
};
</script>
"""

# Runs one of the page's async functions; a rejected promise comes back as {error} instead of a value.
CALL = """
const [name, argument, done] = arguments;
window[name](argument).then((value) => done({value}), (error) => done({error: String(error)}));
"""


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64u(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = PAGE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def start_browser() -> WebDriver:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    arguments = ["--headless", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions"]
    if os.geteuid() == 0:
        arguments.append("--no-sandbox")
    for argument in arguments:
        options.add_argument(argument)  # type: ignore[no-untyped-call]  # untyped in selenium 4.8
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_script_timeout(30)
    return driver


def call(driver: WebDriver, name: str, argument: dict[str, Any]) -> dict[str, Any]:
    """The page's `name`(argument): {hasToJSON, json, hand}; raises on a rejected promise."""
    answer = driver.execute_async_script(CALL, name, argument)
    if "error" in answer:
        raise RuntimeError(f"{name}: {answer['error']}")
    shaped: dict[str, Any] = answer["value"]
    if shaped["hasToJSON"] and canonical(shaped["json"]) != canonical(shaped["hand"]):
        raise RuntimeError(f"{name}: toJSON() and the hand encoding differ:\n{shaped['json']}\n{shaped['hand']}")
    return shaped


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def fresh_authenticator(driver: WebDriver, *, verifying: bool) -> None:
    try:
        driver.remove_virtual_authenticator()
    except ValueError:
        pass  # none yet
    driver.add_virtual_authenticator(VirtualAuthenticatorOptions(
        protocol="ctap2", transport="internal", has_resident_key=True,
        has_user_verification=verifying, is_user_verified=verifying))


def creation_options(challenge: bytes, user_id: bytes, algorithms: list[int]) -> dict[str, Any]:
    return {
        "rp": {"id": RP_ID, "name": "Roster"},
        "user": {"id": b64u(user_id), "name": "alice", "displayName": "alice"},
        "challenge": b64u(challenge),
        "pubKeyCredParams": algorithms,
        "authenticatorSelection": {"residentKey": "preferred", "userVerification": "preferred"},
        "attestation": "none",
    }


def request_options(challenge: bytes, allow: list[str] | None = None) -> dict[str, Any]:
    return {"challenge": b64u(challenge), "rpId": RP_ID, "allowCredentials": allow or [],
            "userVerification": "preferred"}


def flags_and_count(authenticator_data_b64u: str) -> tuple[int, int]:
    data = unb64u(authenticator_data_b64u)
    return data[32], int.from_bytes(data[33:37], "big")


def describe_flags(flags: int) -> str:
    names = [name for bit, name in [(0x01, "UP"), (0x04, "UV"), (0x08, "BE"), (0x10, "BS"), (0x40, "AT"),
                                    (0x80, "ED")] if flags & bit]
    return f"0x{flags:02x} ({'|'.join(names)})"


def record(driver: WebDriver, origin: str, *, verifying: bool, algorithms: list[int]) -> tuple[dict[str, Any], list[str]]:
    """One registration and one discoverable assertion on a fresh authenticator, and what was seen."""
    fresh_authenticator(driver, verifying=verifying)
    notes: list[str] = []
    registration_challenge, user_id = secrets.token_bytes(32), secrets.token_bytes(32)
    created = call(driver, "rosterCreate", creation_options(registration_challenge, user_id, algorithms))
    registration = created["json"]
    stored = driver.get_credentials()
    notes.append(f"toJSON(): {'yes' if created['hasToJSON'] else 'no, encoded by hand'}")
    notes.append(f"registration: alg {registration['response']['publicKeyAlgorithm']}, flags "
                 f"{describe_flags(flags_and_count(registration['response']['authenticatorData'])[0])}, "
                 f"sign count {flags_and_count(registration['response']['authenticatorData'])[1]}, "
                 f"resident {[c.is_resident_credential for c in stored]}, transports "
                 f"{registration['response']['transports']}, attachment {registration['authenticatorAttachment']}")
    assertion_challenge = secrets.token_bytes(32)
    allow: list[str] = []
    try:
        got = call(driver, "rosterGet", request_options(assertion_challenge))
    except RuntimeError as error:
        # Chromium 156 refuses a discoverable request (NotAllowedError) on an authenticator without user
        # verification, though it stored the credential as resident; asked for by id it signs (UP only).
        notes.append(f"discoverable assertion refused ({str(error)[:60]}...): asked again with allowCredentials "
                     "[the registered id] and the same challenge")
        allow = [registration["id"]]
        got = call(driver, "rosterGet", request_options(assertion_challenge, allow))
    assertion = got["json"]
    flags, count = flags_and_count(assertion["response"]["authenticatorData"])
    notes.append(f"assertion: flags {describe_flags(flags)}, sign count {count}, userHandle "
                 f"{'= user.id' if assertion['response']['userHandle'] == b64u(user_id) else assertion['response']['userHandle']}")
    vector = {
        "rp_id": RP_ID,
        "origin": origin,
        "registration": {"challenge": b64u(registration_challenge), "user_id": b64u(user_id),
                         "credential": registration},
        "assertion": {"challenge": b64u(assertion_challenge), "allow_credentials": allow, "credential": assertion},
    }
    return vector, notes


def probe(driver: WebDriver) -> list[str]:
    """What the virtual authenticator does with EdDSA, and its sign counter over more assertions."""
    notes = []
    for algorithms in ([-8], [-8, -7]):
        fresh_authenticator(driver, verifying=True)
        try:
            created = call(driver, "rosterCreate",
                           creation_options(secrets.token_bytes(32), secrets.token_bytes(32), algorithms))
            notes.append(f"pubKeyCredParams {algorithms}: alg {created['json']['response']['publicKeyAlgorithm']}")
        except RuntimeError as error:
            notes.append(f"pubKeyCredParams {algorithms}: refused: {error}")
    fresh_authenticator(driver, verifying=True)
    created = call(driver, "rosterCreate", creation_options(secrets.token_bytes(32), secrets.token_bytes(32), [-7]))
    counts = [flags_and_count(created["json"]["response"]["authenticatorData"])[1]]
    for _ in range(3):
        got = call(driver, "rosterGet", request_options(secrets.token_bytes(32)))
        counts.append(flags_and_count(got["json"]["response"]["authenticatorData"])[1])
    notes.append(f"sign counts, registration then three assertions: {counts}; "
                 f"the authenticator's stored count now {[c.sign_count for c in driver.get_credentials()]}")
    return notes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8080, help="loopback port of the page (origin http://localhost:PORT)")
    parser.add_argument("--out", type=Path, default=REPOSITORY / "Tests" / "RosterWebAuthnTests" / "Fixtures")
    arguments = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", arguments.port), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    origin = f"http://localhost:{arguments.port}"
    driver = start_browser()
    try:
        driver.get(origin + "/")
        print(driver.capabilities.get("browserVersion"), file=sys.stderr)
        arguments.out.mkdir(parents=True, exist_ok=True)
        for name, verifying, algorithms in VECTORS:
            vector, notes = record(driver, origin, verifying=verifying, algorithms=algorithms)
            (arguments.out / name).write_text(json.dumps(vector, indent=2) + "\n")
            print(f"{name}:", *notes, sep="\n  ")
        print("probe:", *probe(driver), sep="\n  ")
    finally:
        driver.quit()
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
