"""The binding's one error mapping: every kind of Rust error becomes its `votum.errors` class."""

from __future__ import annotations

import votum._native as native
from votum import errors


def test_every_rust_error_kind_becomes_its_python_class() -> None:
    table = dict(native._error_table())
    assert len(table) == 9
    for name, exc in table.items():
        expected = OSError if name == "OSError" else getattr(errors, name)
        assert type(exc) is expected, (name, type(exc))
        assert isinstance(exc, (OSError, errors.VotumError)), name
        assert str(exc), name
    # the Python hierarchy the service maps to HTTP statuses
    assert isinstance(table["InvalidInput"], ValueError)
    assert isinstance(table["DuplicateBallot"], errors.VotumError)
