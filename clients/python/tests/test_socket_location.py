"""Socket discovery matches rosterd and rosterctl (Sources/RosterProtocol/SocketLocation.swift)."""
from __future__ import annotations

import pytest

import roster
from conftest import Daemon


def test_roster_socket_wins_over_the_defaults() -> None:
    env = {"ROSTER_SOCKET": "/tmp/x.sock", "XDG_RUNTIME_DIR": "/run/user/1000"}
    assert roster.default_socket_path(env, is_root=True) == "/tmp/x.sock"
    assert roster.default_socket_path(env, is_root=False) == "/tmp/x.sock"


def test_root_uses_the_system_socket_and_others_their_runtime_directory() -> None:
    env = {"ROSTER_SOCKET": "", "XDG_RUNTIME_DIR": "/run/user/1000"}
    assert roster.default_socket_path(env, is_root=True) == "/run/roster/roster.sock"
    assert roster.default_socket_path(env, is_root=False) == "/run/user/1000/roster/roster.sock"


def test_without_a_runtime_directory_a_user_is_told_what_to_set() -> None:
    with pytest.raises(LookupError, match="ROSTER_SOCKET"):
        roster.default_socket_path({}, is_root=False)


def test_a_client_without_a_path_finds_the_daemon_through_roster_socket(daemon: Daemon,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROSTER_SOCKET", daemon.socket_path)
    with roster.Client() as client:
        assert client.session_whoami() == {"user": None}


def test_a_missing_socket_is_a_clear_connection_error(tmp_path: object) -> None:
    with pytest.raises(roster.ConnectionLost, match="cannot connect to rosterd at /nonexistent/roster.sock"):
        roster.Client("/nonexistent/roster.sock")
