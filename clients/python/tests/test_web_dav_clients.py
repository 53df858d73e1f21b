"""roster-web's CardDAV against real clients and the real rosterd: Debian's vdirsyncer syncing a book both ways (and
a conflict, each way it may be resolved), and litmus's basic and props suites. What they did is checked through
the socket with the Python client."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import Daemon, Gateway
from dav_support import DavUser, card, dav_user

__all__ = ["dav_user"]
# More than a thousand: vdirsyncer asks for the whole book in one addressbook-multiget.
BULK = 1200


def needs(program: str) -> str:
    found = shutil.which(program)
    if found is None:
        pytest.fail(f"{program} is missing: `make test-deps` installs it (Debian package {program})")
    return found


class Vdirsyncer:
    """vdirsyncer with a config of its own: the local directory `local/contacts/` paired with the gateway's book,
    found by discovery from the gateway's root."""

    def __init__(self, directory: Path, gateway: Gateway, user: DavUser) -> None:
        self.program = needs("vdirsyncer")
        self.directory = directory
        self.local = directory / "local" / "contacts"
        self.local.mkdir(parents=True)
        self.gateway = gateway
        self.user = user
        self.configure("b wins")
        self.run("discover")

    def configure(self, resolution: str) -> None:
        (self.directory / "config").write_text(f"""[general]
status_path = "{self.directory / 'status'}/"

[pair book]
a = "local"
b = "roster"
collections = ["from b"]
conflict_resolution = "{resolution}"

[storage local]
type = "filesystem"
path = "{self.directory / 'local'}/"
fileext = ".vcf"

[storage roster]
type = "carddav"
url = "{self.gateway.url}/"
username = "{self.user.username}"
password = "{self.user.app_password}"
""")

    def run(self, *args: str) -> str:
        done = subprocess.run([self.program, *args], input="y\n", capture_output=True, text=True, timeout=600,
                              env={**os.environ, "VDIRSYNCER_CONFIG": str(self.directory / "config")})
        assert done.returncode == 0, (done.stdout, done.stderr, self.gateway.log()[-4000:])
        return done.stdout + done.stderr

    def cards(self) -> dict[str, Path]:
        """The local cards by their UID."""
        found = {}
        for path in self.local.glob("*.vcf"):
            match = re.search(r"^UID(?:;[^:\r\n]*)?:(.*?)\r?$", path.read_text(), re.MULTILINE)
            assert match is not None, path
            found[match.group(1)] = path
        return found


def bulk(n: int) -> str:
    return card(f"bulk-{n:03d}", f"Person{n:03d} Bulk", "4.0",
                extra=f"EMAIL:bulk{n}@example.org\r\nTEL:+1 555 {n:04d}\r\n")


def by_uid(user: DavUser) -> dict[str, dict[str, object]]:
    contacts: dict[str, dict[str, object]] = {}
    token = None
    while True:
        params: dict[str, object] = {"limit": 1000} if token is None else {"limit": 1000, "since": token}
        answer = user.client.call("contacts.changes", params)
        for contact in answer["changed"]:
            contacts[contact["uid"]] = contact
        for uid in answer["removed"]:
            contacts.pop(uid, None)
        token = answer["token"]
        if not answer.get("more"):
            return contacts


def test_vdirsyncer_syncs_a_book_both_ways_and_resolves_a_conflict(daemon: Daemon, gateway: Gateway,
                                                                   dav_user: DavUser, tmp_path: Path) -> None:
    imported = dav_user.client.contacts_import(format="vcard", data="".join(bulk(n) for n in range(BULK)))
    assert imported["added"] == BULK, imported
    sync = Vdirsyncer(tmp_path, gateway, dav_user)
    sync.run("sync")
    local = sync.cards()
    assert set(local) == {f"bulk-{n:03d}" for n in range(BULK)}
    assert "FN:Person007 Bulk" in local["bulk-007"].read_text()

    # Edited and added locally, then synced back: rosterd has the edits and the new cards, byte for byte.
    for n in range(10):
        path = local[f"bulk-{n:03d}"]
        path.write_text(path.read_text().replace(f"FN:Person{n:03d} Bulk", f"FN:Edited{n} Locally"))
    for n in range(5):
        (sync.local / f"new-{n}.vcf").write_text(card(f"new-{n}@example.org", f"New{n} Card",
                                                      extra="X-KEPT:as sent\r\n"))
    sync.run("sync")
    contacts = by_uid(dav_user)
    assert len(contacts) == BULK + 5
    assert [contacts[f"bulk-{n:03d}"]["name"] for n in range(10)] == [f"Edited{n} Locally" for n in range(10)]
    new = [uid for uid in contacts if str(uid).startswith("new-") or contacts[uid]["name"] in
           {f"New{n} Card" for n in range(5)}]
    assert len(new) == 5
    for uid in new:
        assert "X-KEPT:as sent" in dav_user.client.call("contacts.get_vcard", {"uid": uid})["vcard"]

    # Deleted on the server (through the socket), synced again: gone locally too.
    for n in range(100, 120):
        dav_user.client.call("contacts.remove", {"uid": f"bulk-{n:03d}"})
    sync.run("sync")
    local = sync.cards()
    assert len(local) == BULK + 5 - 20 and "bulk-110" not in local and "bulk-120" in local

    # A conflict: one card changed on both sides. "b wins": the server's change is kept on both sides.
    target = local["bulk-200"]
    contact = by_uid(dav_user)["bulk-200"]
    target.write_text(target.read_text().replace("FN:Person200 Bulk", "FN:Local Change"))
    dav_user.client.contacts_update(id=int(str(contact["id"])), name="Server Change")
    sync.run("sync")
    assert "FN:Server Change" in sync.cards()["bulk-200"].read_text()
    assert by_uid(dav_user)["bulk-200"]["name"] == "Server Change"
    # "a wins": the local change is written over the server's.
    sync.configure("a wins")
    target = sync.cards()["bulk-201"]
    contact = by_uid(dav_user)["bulk-201"]
    target.write_text(target.read_text().replace("FN:Person201 Bulk", "FN:Local Wins"))
    dav_user.client.contacts_update(id=int(str(contact["id"])), name="Server Loses")
    sync.run("sync")
    assert by_uid(dav_user)["bulk-201"]["name"] == "Local Wins"
    assert "FN:Local Wins" in dav_user.client.call("contacts.get_vcard", {"uid": "bulk-201"})["vcard"]
    # Nothing left to do: a further sync changes nothing on either side.
    quiet = sync.run("sync")
    assert "Copying" not in quiet and "Deleting" not in quiet, quiet


# litmus starts every suite by creating a collection `litmus/` under the URL it is given (MKCOL); Roster's one
# address book holds cards only, so MKCOL is answered 405 and each suite stops there (README lists why).
EXPECTED_LITMUS = re.compile(r"begin\.+ FAIL \(Could not create new collection `[^']*litmus/' for tests: "
                             r"405 Method Not Allowed")


@pytest.mark.parametrize("suite", ["basic", "props"])
def test_litmus_suites_run_against_the_book_and_meet_only_the_refusals_readme_lists(
        daemon: Daemon, gateway: Gateway, dav_user: DavUser, tmp_path: Path, suite: str) -> None:
    litmus = needs("litmus")
    done = subprocess.run([litmus, f"{gateway.url}/dav/addressbooks/{dav_user.username}/contacts/",
                           dav_user.username, dav_user.app_password], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env={**os.environ, "TESTS": suite})
    output = done.stdout + done.stderr
    assert re.search(r"init\.+ pass", output), output
    assert EXPECTED_LITMUS.search(output), output
    assert f"<- summary for `{suite}': of 2 tests run: 1 passed, 1 failed" in output, output
    assert by_uid(dav_user) == {}
