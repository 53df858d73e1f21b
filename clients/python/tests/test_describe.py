"""The package cannot drift from the daemon: its methods are rpc.describe's, checked against the live daemon."""
from __future__ import annotations

import inspect
from pathlib import Path

import roster
from roster import _generated
from roster._generate import python_name, render


def test_the_generated_methods_are_what_the_daemon_describes_now(client: roster.Client) -> None:
    # A method added, removed or changed in rosterd fails here: regenerate with `make python-methods`.
    assert render(client.rpc_describe()) == Path(_generated.__file__).read_text()


def test_every_described_method_is_on_both_clients_with_its_params(client: roster.Client) -> None:
    described = {method["name"]: method["params"] for method in client.rpc_describe()["methods"]}
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
