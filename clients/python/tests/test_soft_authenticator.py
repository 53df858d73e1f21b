"""The software authenticator on its own, no rosterd needed (these run in `pytest -m "not browser"`): its CBOR
decodes back with a small decoder written here, its signatures verify with `cryptography`, and each bad-input
knob fails the check it is meant for, in a small relying party written here after WebAuthn §7 (a cross-check,
not rosterd's verifier). The same relying party checks every vector in Tests/RosterWebAuthnTests/Fixtures,
the ones Chromium recorded too."""
from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

import soft_authenticator as soft
from soft_authenticator import EDDSA, ES256, SoftAuthenticator, b64u, cbor_encode, unb64u

FIXTURES = Path(__file__).resolve().parents[3] / "Tests" / "RosterWebAuthnTests" / "Fixtures"
ORIGINS = ("http://localhost:8080", "http://127.0.0.1:8080")
PublicKey = Union[ec.EllipticCurvePublicKey, ed25519.Ed25519PublicKey]


# --- a CBOR decoder for what the encoder writes ----------------------------------------------------------------

def cbor_decode(data: bytes) -> Any:
    value, end = _item(data, 0)
    if end != len(data):
        raise ValueError(f"{len(data) - end} bytes after the CBOR item")
    return value


def cbor_decode_prefix(data: bytes, offset: int) -> tuple[Any, int]:
    """The item at `offset` and where it ends (a COSE key inside authData is followed by nothing, or extensions)."""
    return _item(data, offset)


def _item(data: bytes, offset: int) -> tuple[Any, int]:
    major, info = data[offset] >> 5, data[offset] & 0x1F
    offset += 1
    if info < 24:
        argument = info
    elif info <= 27:
        size = 1 << (info - 24)
        argument = int.from_bytes(data[offset:offset + size], "big")
        if argument < (24 if size == 1 else 1 << (4 * size)):
            raise ValueError("a CBOR head longer than it needs to be")
        offset += size
    else:
        raise ValueError(f"CBOR additional information {info} is not used here")
    if major == 0:
        return argument, offset
    if major == 1:
        return -1 - argument, offset
    if major in (2, 3):
        raw = data[offset:offset + argument]
        if len(raw) != argument:
            raise ValueError("a CBOR string runs past the end")
        return (raw if major == 2 else raw.decode("utf-8")), offset + argument
    if major == 4:
        items = []
        for _ in range(argument):
            item, offset = _item(data, offset)
            items.append(item)
        return items, offset
    if major == 5:
        entries: dict[Any, Any] = {}
        keys = []
        for _ in range(argument):
            start = offset
            key, offset = _item(data, offset)
            keys.append(data[start:offset])
            entries[key], offset = _item(data, offset)
        if keys != sorted(keys, key=lambda key: (len(key), key)):
            raise ValueError("CBOR map keys are not in canonical order")
        return entries, offset
    raise ValueError(f"CBOR major type {major} is not used here")


@pytest.mark.parametrize(("value", "encoded"), [
    # RFC 8949 Appendix A
    (0, "00"), (23, "17"), (24, "1818"), (100, "1864"), (1000, "1903e8"), (1000000, "1a000f4240"),
    (1000000000000, "1b000000e8d4a51000"), (-1, "20"), (-10, "29"), (-100, "3863"), (-1000, "3903e7"),
    (b"", "40"), (b"\x01\x02\x03\x04", "4401020304"), ("", "60"), ("IETF", "6449455446"), ("\u00fc", "62c3bc"),
    ([], "80"), ([1, [2, 3], [4, 5]], "8301820203820405"), ({}, "a0"), ({1: 2, 3: 4}, "a201020304"),
    ({"a": 1, "b": [2, 3]}, "a26161016162820203"),
])
def test_cbor_encodes_rfc_8949_examples(value: Any, encoded: str) -> None:
    assert cbor_encode(value).hex() == encoded
    assert cbor_decode(bytes.fromhex(encoded)) == value


def test_cbor_sorts_map_keys_canonically_and_refuses_booleans() -> None:
    # shorter encodings first, then bytewise: 1, 3, -1, -2, -3 as in every COSE_Key; "fmt" before "attStmt"
    assert list(cbor_decode(cbor_encode({-3: 0, -1: 0, 3: 0, 1: 0, -2: 0}))) == [1, 3, -1, -2, -3]
    assert cbor_encode({"authData": 0, "attStmt": 0, "fmt": 0}).startswith(bytes.fromhex("a3") + cbor_encode("fmt"))
    assert cbor_encode({10: 0, 100: 0, -1: 0}).hex() == "a30a002000186400"
    with pytest.raises(TypeError):
        cbor_encode(True)


# --- a small relying party ------------------------------------------------------------------------------------

class Rejected(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@dataclass
class Stored:
    credential_id: bytes
    public_key: PublicKey
    algorithm: int
    sign_count: int
    flags: int
    fmt: str


def public_key_from_cose(key: dict[int, Any]) -> tuple[PublicKey, int]:
    if key == {1: 2, 3: ES256, -1: 1, -2: key.get(-2), -3: key.get(-3)}:
        x, y = int.from_bytes(key[-2], "big"), int.from_bytes(key[-3], "big")
        return ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key(), ES256
    if key == {1: 1, 3: EDDSA, -1: 6, -2: key.get(-2)}:
        return ed25519.Ed25519PublicKey.from_public_bytes(key[-2]), EDDSA
    raise Rejected("format")


def check_signature(public_key: PublicKey, signature: bytes, data: bytes) -> None:
    try:
        if isinstance(public_key, ec.EllipticCurvePublicKey):
            public_key.verify(signature, data, ec.ECDSA(hashes.SHA256()))
        else:
            public_key.verify(signature, data)
    except (InvalidSignature, ValueError):
        raise Rejected("signature") from None


def check_client_data(raw: bytes, type_: str, challenge: bytes, origins: tuple[str, ...]) -> None:
    data = json.loads(raw)
    if data.get("type") != type_:
        raise Rejected("type")
    if data.get("challenge") != b64u(challenge):
        raise Rejected("challenge")
    if data.get("origin") not in origins or data.get("crossOrigin", False):
        raise Rejected("origin")


def check_auth_data(auth_data: bytes, rp_id: str) -> int:
    if auth_data[:32] != hashlib.sha256(rp_id.encode()).digest():
        raise Rejected("rp_id")
    if not auth_data[32] & soft.FLAG_UP:
        raise Rejected("user_present")
    return auth_data[32]


def verify_registration(credential: dict[str, Any], *, challenge: bytes, rp_id: str = "localhost",
                        origins: tuple[str, ...] = ORIGINS) -> Stored:
    if credential["type"] != "public-key" or credential["id"] != credential["rawId"]:
        raise Rejected("format")
    response = credential["response"]
    client_data_json = unb64u(response["clientDataJSON"])
    check_client_data(client_data_json, "webauthn.create", challenge, origins)
    attestation = cbor_decode(unb64u(response["attestationObject"]))
    auth_data = attestation["authData"]
    if "authenticatorData" in response and unb64u(response["authenticatorData"]) != auth_data:
        raise Rejected("format")
    flags = check_auth_data(auth_data, rp_id)
    if not flags & soft.FLAG_AT:
        raise Rejected("format")
    length = int.from_bytes(auth_data[53:55], "big")
    credential_id = auth_data[55:55 + length]
    if credential_id != unb64u(credential["rawId"]):
        raise Rejected("format")
    cose, end = cbor_decode_prefix(auth_data, 55 + length)
    if end != len(auth_data):
        raise Rejected("format")  # neither authenticator here sends extensions
    public_key, algorithm = public_key_from_cose(cose)
    if response.get("publicKeyAlgorithm", algorithm) != algorithm:
        raise Rejected("format")
    if "publicKey" in response and unb64u(response["publicKey"]) != public_key.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo):
        raise Rejected("format")
    fmt, statement = attestation["fmt"], attestation["attStmt"]
    if fmt == "none":
        if statement != {}:
            raise Rejected("format")
    elif fmt == "packed" and set(statement) == {"alg", "sig"}:  # self attestation: no x5c
        if statement["alg"] != algorithm:
            raise Rejected("format")
        check_signature(public_key, statement["sig"], auth_data + hashlib.sha256(client_data_json).digest())
    else:
        raise Rejected("format")
    return Stored(credential_id, public_key, algorithm, int.from_bytes(auth_data[33:37], "big"), flags, fmt)


def verify_assertion(credential: dict[str, Any], stored: Stored, *, challenge: bytes, user_handle: bytes | None = None,
                     rp_id: str = "localhost", origins: tuple[str, ...] = ORIGINS) -> int:
    """The new sign count (kept in `stored`) after checking the assertion, else Rejected."""
    if credential["type"] != "public-key" or unb64u(credential["rawId"]) != stored.credential_id:
        raise Rejected("format")
    response = credential["response"]
    if user_handle is not None and response.get("userHandle") not in (None, b64u(user_handle)):
        raise Rejected("format")
    client_data_json = unb64u(response["clientDataJSON"])
    check_client_data(client_data_json, "webauthn.get", challenge, origins)
    auth_data = unb64u(response["authenticatorData"])
    check_auth_data(auth_data, rp_id)
    check_signature(stored.public_key, unb64u(response["signature"]),
                    auth_data + hashlib.sha256(client_data_json).digest())
    count = int.from_bytes(auth_data[33:37], "big")
    if (count != 0 or stored.sign_count != 0) and count <= stored.sign_count:
        raise Rejected("counter")
    stored.sign_count = count
    return count


# --- the authenticator against it -----------------------------------------------------------------------------

def creation_options(*, user_id: bytes | None = None, exclude: list[str] | None = None,
                     algorithms: tuple[int, ...] = (ES256, EDDSA), resident_key: str = "preferred",
                     user_verification: str = "preferred") -> dict[str, Any]:
    """Options in the shape of rosterd's passkey.register_begin."""
    return {
        "rp": {"id": "localhost", "name": "Roster"},
        "user": {"id": b64u(user_id or secrets.token_bytes(32)), "name": "alice", "displayName": "alice"},
        "challenge": b64u(secrets.token_bytes(32)),
        "pubKeyCredParams": [{"type": "public-key", "alg": alg} for alg in algorithms],
        "excludeCredentials": [{"type": "public-key", "id": id_} for id_ in exclude or []],
        "authenticatorSelection": {"residentKey": resident_key, "userVerification": user_verification},
        "attestation": "none",
    }


def request_options(allow: list[str] | None = None, user_verification: str = "preferred") -> dict[str, Any]:
    return {"challenge": b64u(secrets.token_bytes(32)), "rpId": "localhost",
            "allowCredentials": [{"type": "public-key", "id": id_} for id_ in allow or []],
            "userVerification": user_verification}


def registered(authenticator: SoftAuthenticator, **knobs: Any) -> tuple[dict[str, Any], Stored]:
    options = creation_options()
    credential = authenticator.create(options, **knobs)
    return options, verify_registration(credential, challenge=unb64u(options["challenge"]))


@pytest.mark.parametrize("algorithm", [ES256, EDDSA])
@pytest.mark.parametrize("fmt", ["none", "packed"])
def test_a_registration_and_its_log_ins_verify(algorithm: int, fmt: str) -> None:
    authenticator = SoftAuthenticator()
    options, stored = registered(authenticator, algorithm=algorithm, fmt=fmt)
    assert (stored.algorithm, stored.fmt, stored.sign_count) == (algorithm, fmt, 0)
    assert stored.flags == soft.FLAG_UP | soft.FLAG_UV | soft.FLAG_AT
    user_id = unb64u(options["user"]["id"])
    for expected in (1, 2, 3):
        request = request_options()
        assertion = authenticator.get(request)
        assert assertion["response"]["userHandle"] == options["user"]["id"]
        assert verify_assertion(assertion, stored, challenge=unb64u(request["challenge"]), user_handle=user_id) == expected
    signature = unb64u(assertion["response"]["signature"])
    if algorithm == EDDSA:
        assert len(signature) == 64
    else:
        assert signature[0] == 0x30 and signature[1] == len(signature) - 2  # DER SEQUENCE


def test_it_takes_the_first_algorithm_it_knows_and_the_selection() -> None:
    authenticator = SoftAuthenticator(user_verifying=False)
    options = creation_options(algorithms=(-257, EDDSA, ES256), resident_key="discouraged")
    stored = verify_registration(authenticator.create(options), challenge=unb64u(options["challenge"]))
    assert stored.algorithm == EDDSA and stored.flags == soft.FLAG_UP | soft.FLAG_AT
    assert not authenticator.credentials[0].resident
    with pytest.raises(soft.NoCredential):
        authenticator.get(request_options())  # not discoverable
    assertion = authenticator.get(request_options([b64u(stored.credential_id)]))
    assert "userHandle" not in assertion["response"]
    assert unb64u(assertion["response"]["authenticatorData"])[32] == soft.FLAG_UP
    with pytest.raises(ValueError):
        authenticator.create(creation_options(algorithms=(-257,)))


def test_user_verification_follows_the_request_and_the_knob() -> None:
    authenticator = SoftAuthenticator()
    registered(authenticator)
    cases: list[tuple[str, bool | None]] = [("preferred", None), ("discouraged", None), ("preferred", False),
                                            ("discouraged", True)]
    flags = [unb64u(authenticator.get(request_options(user_verification=uv), user_verified=verified)["response"]
                    ["authenticatorData"])[32] for uv, verified in cases]
    assert flags == [0x05, 0x01, 0x01, 0x05]


def test_exclude_credentials_refuses_a_second_registration_unless_told() -> None:
    authenticator = SoftAuthenticator()
    first = authenticator.create(creation_options())
    with pytest.raises(soft.ExcludedCredential):
        authenticator.create(creation_options(exclude=[first["id"]]))
    again = authenticator.create(creation_options(exclude=[first["id"]]), credential_id=unb64u(first["id"]),
                                 ignore_exclude=True)
    assert again["id"] == first["id"]


@pytest.mark.parametrize(("knobs", "why"), [
    ({"origin": "http://evil.example:8080"}, "origin"),
    ({"rp_id": "example.com"}, "rp_id"),
    ({"client_data_type": "webauthn.get"}, "type"),
    ({"user_present": False}, "user_present"),
    ({"challenge": b"\x00" * 32}, "challenge"),
    ({"fmt": "packed", "tamper_signature": True}, "signature"),
    ({"fmt": "fido-u2f"}, "format"),
])
def test_each_registration_knob_fails_its_check(knobs: dict[str, Any], why: str) -> None:
    options = creation_options()
    credential = SoftAuthenticator().create(options, **knobs)
    with pytest.raises(Rejected) as rejected:
        verify_registration(credential, challenge=unb64u(options["challenge"]))
    assert rejected.value.why == why


@pytest.mark.parametrize(("knobs", "why"), [
    ({"origin": "https://localhost:8080"}, "origin"),
    ({"rp_id": "127.0.0.1"}, "rp_id"),
    ({"client_data_type": "webauthn.create"}, "type"),
    ({"user_present": False}, "user_present"),
    ({"tamper_signature": True}, "signature"),
    ({"sign_count": 4}, "counter"),
    ({"sign_count": 0}, "counter"),
])
def test_each_log_in_knob_fails_its_check(knobs: dict[str, Any], why: str) -> None:
    authenticator = SoftAuthenticator()
    _, stored = registered(authenticator, algorithm=ES256)
    for _ in range(5):
        request = request_options()
        verify_assertion(authenticator.get(request), stored, challenge=unb64u(request["challenge"]))
    assert stored.sign_count == 5
    request = request_options()
    with pytest.raises(Rejected) as rejected:
        verify_assertion(authenticator.get(request, **knobs), stored, challenge=unb64u(request["challenge"]))
    assert rejected.value.why == why


def test_a_replayed_challenge_signs_again_and_a_zero_counter_stays_zero() -> None:
    authenticator = SoftAuthenticator(counter_step=0)
    _, stored = registered(authenticator, algorithm=EDDSA)
    request = request_options()
    first = authenticator.get(request)
    second = authenticator.get(request_options(), challenge=request["challenge"])  # the old one, replayed
    assert json.loads(unb64u(first["response"]["clientDataJSON"])) == \
        json.loads(unb64u(second["response"]["clientDataJSON"]))
    assert verify_assertion(first, stored, challenge=unb64u(request["challenge"])) == 0
    assert verify_assertion(second, stored, challenge=unb64u(request["challenge"])) == 0  # only the RP can refuse it
    other = authenticator.get(request_options(), user_handle=b"someone else")
    assert other["response"]["userHandle"] == b64u(b"someone else")


def test_client_data_is_what_browsers_write() -> None:
    options = creation_options()
    credential = SoftAuthenticator().create(options)
    assert unb64u(credential["response"]["clientDataJSON"]) == (
        '{"type":"webauthn.create","challenge":"%s","origin":"http://localhost:8080","crossOrigin":false}'
        % options["challenge"]).encode()


# --- the committed vectors ------------------------------------------------------------------------------------

FIXTURE_FILES = sorted(FIXTURES.glob("*.json"))


def test_the_fixtures_are_there() -> None:
    assert {path.name for path in FIXTURE_FILES} >= {
        "chromium-es256.json", "chromium-es256-up-only.json", "chromium-eddsa.json",
        "soft-eddsa.json", "soft-es256-packed.json"}


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[path.stem for path in FIXTURE_FILES])
def test_each_fixture_verifies(path: Path) -> None:
    vector = json.loads(path.read_text())
    origins = (vector["origin"],)
    stored = verify_registration(vector["registration"]["credential"], rp_id=vector["rp_id"], origins=origins,
                                 challenge=unb64u(vector["registration"]["challenge"]))
    assertion = vector["assertion"]
    assert assertion["allow_credentials"] in ([], [assertion["credential"]["id"]])
    verify_assertion(assertion["credential"], stored, rp_id=vector["rp_id"], origins=origins,
                     challenge=unb64u(assertion["challenge"]), user_handle=unb64u(vector["registration"]["user_id"]))
    # and not with another challenge
    with pytest.raises(Rejected, match="challenge"):
        verify_assertion(assertion["credential"], stored, rp_id=vector["rp_id"], origins=origins,
                         challenge=unb64u(vector["registration"]["challenge"]))


def test_the_soft_eddsa_fixture_is_what_the_generator_writes() -> None:
    committed = json.loads((FIXTURES / "soft-eddsa.json").read_text())
    assert committed == soft.vector("soft-eddsa", EDDSA, "none", 0)  # Ed25519 signs deterministically
