"""A software WebAuthn authenticator and client for the passkey tests (CONTRACT.md §13): it answers rosterd's
PublicKeyCredentialCreationOptionsJSON and PublicKeyCredentialRequestOptionsJSON with RegistrationResponseJSON and
AuthenticationResponseJSON dicts, as a browser would send them, every binary field base64url without padding.

The keys and signatures are the `cryptography` library's (ES256: P-256 with DER ECDSA signatures over SHA-256;
EdDSA: Ed25519); only CBOR is written here, and only what an authenticator emits: unsigned and negative
integers, byte and text strings, arrays and maps, in CTAP2's canonical form (shortest heads, map keys sorted by
their encoding, shorter first).

Each call takes knobs that make a bad input on purpose, one per `why` of passkey_rejected: `origin`, `rp_id`
(the rpIdHash of another RP ID), `client_data_type`, `user_present=False`, `tamper_signature`, `fmt` (an
unknown attestation format), `sign_count` (an explicit count, to make it go backwards), `challenge` (an earlier
one, replayed), `ignore_exclude` (a duplicate); and `user_verified`, `resident`, `user_handle` for the flags and
the discoverable log-in.

Run as a program it writes the soft vectors of Tests/RosterWebAuthnTests/Fixtures (same shape as the recorded
chromium-*.json, see tools/record-webauthn-vectors.py), from fixed keys and challenges:
    .build/python/bin/python clients/python/tests/soft_authenticator.py --write-fixtures Tests/RosterWebAuthnTests/Fixtures
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import secrets
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

ES256 = -7
EDDSA = -8
ALGORITHMS = (ES256, EDDSA)

FLAG_UP = 0x01
FLAG_UV = 0x04
FLAG_AT = 0x40

AAGUID_NONE = bytes(16)
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
DEFAULT_ORIGIN = "http://localhost:8080"
DEFAULT_RP_ID = "localhost"

PrivateKey = Union[ec.EllipticCurvePrivateKey, ed25519.Ed25519PrivateKey]
CBOR = Union[int, bytes, str, list["CBOR"], dict["CBOR", "CBOR"]]


# --- base64url -------------------------------------------------------------------------------------------------

def b64u(data: bytes) -> str:
    """base64url without padding, as every binary field of the WebAuthn JSON."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64u(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# --- CBOR (RFC 8949), the canonical subset CTAP2 uses ---------------------------------------------------------

def _head(major: int, value: int) -> bytes:
    if value < 24:
        return bytes([major << 5 | value])
    for extra, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if value < 1 << (8 * size):
            return bytes([major << 5 | extra]) + value.to_bytes(size, "big")
    raise ValueError(f"{value} does not fit a CBOR head")


def cbor_encode(value: CBOR) -> bytes:
    """`value` in canonical CBOR: ints, bytes, str, lists and dicts only (a bool is refused, not taken as an int)."""
    if isinstance(value, bool):
        raise TypeError("CBOR booleans are not needed here")
    if isinstance(value, int):
        return _head(0, value) if value >= 0 else _head(1, -1 - value)
    if isinstance(value, bytes):
        return _head(2, len(value)) + value
    if isinstance(value, str):
        encoded = value.encode("utf-8")
        return _head(3, len(encoded)) + encoded
    if isinstance(value, list):
        return _head(4, len(value)) + b"".join(cbor_encode(item) for item in value)
    if isinstance(value, dict):
        # CTAP2 canonical order: the shorter encoded key first, bytewise within one length
        entries = sorted(((cbor_encode(key), cbor_encode(item)) for key, item in value.items()),
                         key=lambda entry: (len(entry[0]), entry[0]))
        return _head(5, len(entries)) + b"".join(key + item for key, item in entries)
    raise TypeError(f"no CBOR encoding for {type(value).__name__}")


# --- keys ------------------------------------------------------------------------------------------------------

def new_private_key(algorithm: int) -> PrivateKey:
    if algorithm == ES256:
        return ec.generate_private_key(ec.SECP256R1())
    if algorithm == EDDSA:
        return ed25519.Ed25519PrivateKey.generate()
    raise ValueError(f"algorithm {algorithm} is neither ES256 (-7) nor EdDSA (-8)")


def private_key_from_seed(algorithm: int, seed: bytes) -> PrivateKey:
    """A fixed key for reproducible vectors: `seed` (32 bytes) is the Ed25519 seed, or the P-256 scalar."""
    if algorithm == ES256:
        return ec.derive_private_key(int.from_bytes(seed, "big") % (P256_ORDER - 1) + 1, ec.SECP256R1())
    if algorithm == EDDSA:
        return ed25519.Ed25519PrivateKey.from_private_bytes(seed)
    raise ValueError(f"algorithm {algorithm} is neither ES256 (-7) nor EdDSA (-8)")


def cose_key(private_key: PrivateKey) -> dict[CBOR, CBOR]:
    """The credential public key as COSE_Key: EC2 {1:2, 3:-7, -1:1, -2:x, -3:y} or OKP {1:1, 3:-8, -1:6, -2:x}."""
    if isinstance(private_key, ec.EllipticCurvePrivateKey):
        numbers = private_key.public_key().public_numbers()
        return {1: 2, 3: ES256, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}
    raw = private_key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return {1: 1, 3: EDDSA, -1: 6, -2: raw}


def algorithm_of(private_key: PrivateKey) -> int:
    return ES256 if isinstance(private_key, ec.EllipticCurvePrivateKey) else EDDSA


def sign(private_key: PrivateKey, data: bytes) -> bytes:
    """A DER ECDSA-SHA256 signature, or a 64-byte Ed25519 one."""
    if isinstance(private_key, ec.EllipticCurvePrivateKey):
        return private_key.sign(data, ec.ECDSA(hashes.SHA256()))
    return private_key.sign(data)


def tampered(signature: bytes) -> bytes:
    """`signature` with one bit of its last byte flipped: still well-formed DER (it is inside s), no longer valid."""
    return signature[:-1] + bytes([signature[-1] ^ 0x01])


# --- the authenticator -----------------------------------------------------------------------------------------

class _Stored:
    """The default of `user_handle`: the credential's own handle when it is resident, none otherwise."""


STORED = _Stored()


class NoCredential(Exception):
    """get() found no credential of this authenticator that the request allows (NotAllowedError in a browser)."""


class ExcludedCredential(Exception):
    """create() holds a credential that excludeCredentials names (InvalidStateError in a browser)."""


@dataclass
class SoftCredential:
    credential_id: bytes
    private_key: PrivateKey
    rp_id: str
    user_handle: bytes
    resident: bool
    sign_count: int = 0

    @property
    def algorithm(self) -> int:
        return algorithm_of(self.private_key)

    def public_key_der(self) -> bytes:
        """SubjectPublicKeyInfo, what getPublicKey() gives in a browser."""
        return self.private_key.public_key().public_bytes(serialization.Encoding.DER,
                                                          serialization.PublicFormat.SubjectPublicKeyInfo)


def client_data(type_: str, challenge: bytes, origin: str) -> bytes:
    """clientDataJSON as browsers write it: these four members, in this order, no spaces."""
    return json.dumps({"type": type_, "challenge": b64u(challenge), "origin": origin, "crossOrigin": False},
                      separators=(",", ":")).encode()


def authenticator_data(rp_id: str, flags: int, sign_count: int, attested: bytes = b"") -> bytes:
    return hashlib.sha256(rp_id.encode()).digest() + bytes([flags]) + sign_count.to_bytes(4, "big") + attested


def _challenge(options: dict[str, Any], override: bytes | str | None) -> bytes:
    if override is None:
        return unb64u(options["challenge"])
    return unb64u(override) if isinstance(override, str) else override


@dataclass
class SoftAuthenticator:
    """A platform authenticator with its client: `create` and `get` play navigator.credentials.create/get.

    `user_verifying`: whether it verifies users (flag UV) unless a call says otherwise. `counter_step`: how much
    each signature adds to a credential's sign count (0: it never counts, like many passkey providers);
    a registration reports the count before the first step, 0."""

    origin: str = DEFAULT_ORIGIN
    user_verifying: bool = True
    counter_step: int = 1
    credentials: list[SoftCredential] = field(default_factory=list)

    def create(self, options: dict[str, Any], *, algorithm: int | None = None, fmt: str = "none",
               resident: bool | None = None, private_key: PrivateKey | None = None,
               credential_id: bytes | None = None, origin: str | None = None, rp_id: str | None = None,
               client_data_type: str = "webauthn.create", challenge: bytes | str | None = None,
               user_present: bool = True, user_verified: bool | None = None, sign_count: int | None = None,
               tamper_signature: bool = False, ignore_exclude: bool = False) -> dict[str, Any]:
        """A RegistrationResponseJSON for PublicKeyCredentialCreationOptionsJSON `options`.

        `algorithm`: the first of pubKeyCredParams it knows unless given. `fmt`: "none" (empty attStmt), "packed"
        (self attestation, attStmt {alg, sig} over authData || SHA-256(clientDataJSON)), or any other name
        (an empty attStmt under it, for an unknown format). `resident`: unless residentKey is "discouraged".
        `rp_id`: another RP ID to hash into authData (the credential is kept under the options' rp.id).
        `tamper_signature`: spoils the packed attestation's signature. `sign_count`: the count to report (0)."""
        rp = options.get("rp", {})
        credential_rp_id = rp.get("id") or DEFAULT_RP_ID
        excluded = {unb64u(entry["id"]) for entry in options.get("excludeCredentials", [])}
        if not ignore_exclude and any(c.credential_id in excluded and c.rp_id == credential_rp_id
                                      for c in self.credentials):
            raise ExcludedCredential("a credential of this authenticator is in excludeCredentials")
        if algorithm is None:
            offered = [entry["alg"] for entry in options.get("pubKeyCredParams", [])]
            algorithm = next((alg for alg in offered if alg in ALGORITHMS), None)
            if algorithm is None:
                raise ValueError(f"none of pubKeyCredParams {offered} is ES256 or EdDSA")
        selection = options.get("authenticatorSelection", {})
        if resident is None:  # residentKey wins over the older requireResidentKey, as in a browser
            requirement = selection.get("residentKey") or ("required" if selection.get("requireResidentKey")
                                                           else "discouraged")
            resident = requirement != "discouraged"
        key = private_key or new_private_key(algorithm)
        if algorithm_of(key) != algorithm:
            raise ValueError("private_key is not of `algorithm`")
        credential = SoftCredential(credential_id=credential_id or secrets.token_bytes(32), private_key=key,
                                    rp_id=credential_rp_id, user_handle=unb64u(options["user"]["id"]),
                                    resident=resident)
        count = credential.sign_count if sign_count is None else sign_count
        credential.sign_count = count
        flags = self._flags(user_present, user_verified, selection.get("userVerification", "preferred")) | FLAG_AT
        attested = (AAGUID_NONE + len(credential.credential_id).to_bytes(2, "big") + credential.credential_id
                    + cbor_encode(cose_key(key)))
        auth_data = authenticator_data(rp_id or credential_rp_id, flags, count, attested)
        client_data_json = client_data(client_data_type, _challenge(options, challenge), origin or self.origin)
        statement: dict[CBOR, CBOR] = {}
        if fmt == "packed":
            signature = sign(key, auth_data + hashlib.sha256(client_data_json).digest())
            statement = {"alg": algorithm, "sig": tampered(signature) if tamper_signature else signature}
        attestation_object = cbor_encode({"fmt": fmt, "attStmt": statement, "authData": auth_data})
        self.credentials.append(credential)
        return {
            "id": b64u(credential.credential_id),
            "rawId": b64u(credential.credential_id),
            "type": "public-key",
            "response": {
                "clientDataJSON": b64u(client_data_json),
                "attestationObject": b64u(attestation_object),
                "authenticatorData": b64u(auth_data),
                "publicKey": b64u(credential.public_key_der()),
                "publicKeyAlgorithm": algorithm,
                "transports": ["internal"],
            },
            "authenticatorAttachment": "platform",
            "clientExtensionResults": {},
        }

    def get(self, options: dict[str, Any], *, credential_id: bytes | str | None = None, origin: str | None = None,
            rp_id: str | None = None, client_data_type: str = "webauthn.get", challenge: bytes | str | None = None,
            user_present: bool = True, user_verified: bool | None = None, sign_count: int | None = None,
            tamper_signature: bool = False, user_handle: bytes | None | _Stored = STORED) -> dict[str, Any]:
        """An AuthenticationResponseJSON for PublicKeyCredentialRequestOptionsJSON `options`.

        With allowCredentials empty it is a discoverable log-in: the newest resident credential for the RP ID
        (or `credential_id`'s). `sign_count`: the count to report (and keep), else the stored one plus
        counter_step. `user_handle`: the credential's handle if resident (the default), or these bytes, or None
        for none. `rp_id`: another RP ID to hash into authData (the credential is still looked up by rpId)."""
        request_rp_id = options.get("rpId") or DEFAULT_RP_ID
        credential = self._find(request_rp_id, [unb64u(entry["id"]) for entry in options.get("allowCredentials", [])],
                                unb64u(credential_id) if isinstance(credential_id, str) else credential_id)
        if sign_count is None:
            credential.sign_count += self.counter_step
        else:
            credential.sign_count = sign_count
        flags = self._flags(user_present, user_verified, options.get("userVerification", "preferred"))
        auth_data = authenticator_data(rp_id or credential.rp_id, flags, credential.sign_count)
        client_data_json = client_data(client_data_type, _challenge(options, challenge), origin or self.origin)
        signature = sign(credential.private_key, auth_data + hashlib.sha256(client_data_json).digest())
        if isinstance(user_handle, _Stored):
            user_handle = credential.user_handle if credential.resident else None
        response: dict[str, Any] = {
            "clientDataJSON": b64u(client_data_json),
            "authenticatorData": b64u(auth_data),
            "signature": b64u(tampered(signature) if tamper_signature else signature),
        }
        if user_handle is not None:
            response["userHandle"] = b64u(user_handle)
        return {
            "id": b64u(credential.credential_id),
            "rawId": b64u(credential.credential_id),
            "type": "public-key",
            "response": response,
            "authenticatorAttachment": "platform",
            "clientExtensionResults": {},
        }

    def _flags(self, user_present: bool, user_verified: bool | None, requirement: str) -> int:
        if user_verified is None:
            user_verified = self.user_verifying and requirement != "discouraged"
        return (FLAG_UP if user_present else 0) | (FLAG_UV if user_verified else 0)

    def _find(self, rp_id: str, allowed: list[bytes], wanted: bytes | None) -> SoftCredential:
        candidates = [c for c in self.credentials if c.rp_id == rp_id
                      and (c.credential_id in allowed if allowed else c.resident)
                      and (wanted is None or c.credential_id == wanted)]
        if not candidates:
            raise NoCredential(f"no credential for {rp_id!r} among {len(self.credentials)}")
        return candidates[-1]


# --- the committed soft vectors --------------------------------------------------------------------------------

def _fixed(label: str) -> bytes:
    return hashlib.sha256(f"roster soft vector: {label}".encode()).digest()


def vector(name: str, algorithm: int, fmt: str, counter_step: int) -> dict[str, Any]:
    """One registration and one discoverable assertion, in the fixtures' shape, from keys, handles and challenges
    derived from `name` (an EdDSA vector comes out the same byte for byte each time; ECDSA signs at random)."""
    authenticator = SoftAuthenticator(origin=DEFAULT_ORIGIN, user_verifying=True, counter_step=counter_step)
    user_id, registration_challenge, assertion_challenge = (_fixed(f"{name} {what}") for what in
                                                            ("user id", "registration challenge", "assertion challenge"))
    creation = {
        "rp": {"id": DEFAULT_RP_ID, "name": "Roster"},
        "user": {"id": b64u(user_id), "name": "alice", "displayName": "alice"},
        "challenge": b64u(registration_challenge),
        "pubKeyCredParams": [{"type": "public-key", "alg": algorithm}],
        "excludeCredentials": [],
        "authenticatorSelection": {"residentKey": "preferred", "userVerification": "preferred"},
        "attestation": "none",
    }
    registration = authenticator.create(creation, fmt=fmt, private_key=private_key_from_seed(algorithm, _fixed(f"{name} key")),
                                        credential_id=_fixed(f"{name} credential id"))
    request = {"challenge": b64u(assertion_challenge), "rpId": DEFAULT_RP_ID, "allowCredentials": [],
               "userVerification": "preferred"}
    assertion = authenticator.get(request)
    return {
        "rp_id": DEFAULT_RP_ID,
        "origin": DEFAULT_ORIGIN,
        "registration": {"challenge": b64u(registration_challenge), "user_id": b64u(user_id), "credential": registration},
        "assertion": {"challenge": b64u(assertion_challenge), "allow_credentials": [], "credential": assertion},
    }


# name, algorithm, attestation format, counter step (the registration reports 0, the assertion the step)
SOFT_VECTORS = [("soft-eddsa", EDDSA, "none", 0), ("soft-es256-packed", ES256, "packed", 1)]


def main() -> int:
    parser = argparse.ArgumentParser(description="Writes the soft WebAuthn vectors (soft-*.json).")
    parser.add_argument("--write-fixtures", type=Path, required=True, metavar="DIRECTORY")
    arguments = parser.parse_args()
    arguments.write_fixtures.mkdir(parents=True, exist_ok=True)
    for name, algorithm, fmt, step in SOFT_VECTORS:
        (arguments.write_fixtures / f"{name}.json").write_text(json.dumps(vector(name, algorithm, fmt, step), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
