"""The package cannot drift from the daemon: its methods are rpc.describe's, checked against the live daemon."""
from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

import roster
from conftest import PASSKEY_METHODS
from roster import _generated
from roster._generate import python_name, render


def _described(client: roster.Client) -> dict[str, Any]:
    """rpc.describe's methods by name. Against a daemon without its side of passkeys (CONTRACT §13) the package,
    written ahead of it, has exactly those methods more: that is checked, and the exact comparisons are skipped,
    saying so, until the daemon has them (then `make python-methods` writes _generated.py from its own words)."""
    described = {method["name"]: method["params"] for method in client.rpc_describe()["methods"]}
    if not PASSKEY_METHODS & set(described):
        assert set(roster.METHODS) - set(described) == PASSKEY_METHODS
        for name, params in described.items():
            assert tuple(params) == roster.METHODS[name], name
        pytest.skip("rosterd does not describe the passkey methods yet; the package has them ahead of it "
                    "(regenerate with `make python-methods` once it does)")
    return described


def test_the_generated_methods_are_what_the_daemon_describes_now(client: roster.Client) -> None:
    # A method added, removed or changed in rosterd fails here: regenerate with `make python-methods`.
    _described(client)
    assert render(client.rpc_describe()) == Path(_generated.__file__).read_text()


def test_every_described_method_is_on_both_clients_with_its_params(client: roster.Client) -> None:
    described = _described(client)
    assert set(described) == set(roster.METHODS)
    for name, params in described.items():
        assert tuple(params) == roster.METHODS[name]
        for client_class in (roster.Client, roster.AsyncClient):
            method = getattr(client_class, python_name(name))
            assert inspect.iscoroutinefunction(method) == (client_class is roster.AsyncClient)
            signature = inspect.signature(method).parameters
            keywords = {key: value for key, value in signature.items() if key != "self"}
            assert all(value.kind is inspect.Parameter.KEYWORD_ONLY for value in keywords.values()), name
            assert {key: value.default is inspect.Parameter.empty for key, value in keywords.items()} == {
                python_name(param.rstrip("?")): not param.endswith("?") for param in params}, name
