#!/usr/bin/env python3
"""A small rosterd client on top of the `roster` package (clients/python).

    with roster.Client() as client:                  # $ROSTER_SOCKET or the default path
        client.session_hello(locale="en")
        with client.form("register") as form:
            form.input("username", "alice1")
            for state in form.states(timeout=5):    # typed field and form states as they arrive
                print(state)

Run it as a script for a demo: `python3 roster_client.py [SOCKET] [USERNAME]` checks USERNAME in the
register form, prints every event until the final verdict, then shows an error's stable reason.
Install the package with `pip install ./clients/python`; run from the repository, it finds it by itself.
"""
import dataclasses
import json
import sys
from pathlib import Path

try:
    import roster
except ImportError:  # run from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python" / "src"))
    import roster


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else None
    username = sys.argv[2] if len(sys.argv) > 2 else "alice1"
    with roster.Client(path) as client:
        hello = client.session_hello(locale="en", client="roster_client.py")
        print(f"connected to {hello['server']} {hello['version']}")
        client.form_open(form="register")
        client.form_input(form="register", field="username", value=username)
        for event in client.events(timeout=5):
            print(json.dumps(dataclasses.asdict(event), ensure_ascii=False))
            if isinstance(event, roster.FieldEvent) and event.field == "username" and event.state in ("valid", "invalid"):
                break
        try:
            client.call("no.such")
        except roster.RosterError as error:
            print(f"error: {error.reason}")


if __name__ == "__main__":
    main()
