"""What a client of a cluster votum did not start may unpickle (issue 43, item 7).

`distributed` unpickles what a scheduler or worker sends a client: task results serialized by
pickle, objects sent as `__Pickled__` (unconditionally, whatever `deserializers` say), a failed task's
exception and traceback, and the category of a warning a worker forwards (`distributed.client`). A
pickle can name any callable, so a worker that answered a pickle ran a command in the verifying
client. Inside `restricted()`, every such unpickling in this process goes through
`RestrictedUnpickler`, which builds only plain data and exceptions:

- classes and functions from `builtins` that make data (bytes, sets, complex numbers, ...);
- exception and warning classes (subclasses of `BaseException`) from `builtins`, `votum`,
  `distributed`, `dask` and `tblib`, and tblib's rebuilders of tracebacks, so a task that failed is
  still reported with its exception;
- nothing else: anything else is `pickle.UnpicklingError`, and the run ends with `ClusterError`.

votum's tasks answer bytes, strings, booleans and lists of them (spec/98.1), which need none of this.
A LocalCluster (`local:N`) runs its scheduler in this process, which must unpickle the task graph; its
workers are this run's own processes, so it is not restricted."""

from __future__ import annotations

import builtins
import importlib
import io
import pickle
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: data-making names from builtins a pickle may use
_BUILTIN_DATA = frozenset(
    {"bytes", "bytearray", "set", "frozenset", "complex", "slice", "range", "str", "int", "float", "bool",
     "list", "dict", "tuple"}
)  # fmt: skip
#: modules whose exception classes a pickle may name (the module itself, or one below it)
_EXCEPTION_MODULES = ("builtins", "votum", "distributed", "dask", "tblib", "concurrent.futures", "asyncio")
#: tblib's functions that rebuild an exception and its traceback from plain values
_TBLIB = frozenset(
    {
        ("tblib", "Code"),
        ("tblib", "Frame"),
        ("tblib", "Traceback"),
        ("tblib.pickling_support", "unpickle_traceback"),
        ("tblib.pickling_support", "unpickle_exception"),
        ("tblib.pickling_support", "unpickle_exception_with_attrs"),
    }
)


class RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _BUILTIN_DATA:
            return getattr(builtins, name)
        if (module, name) in _TBLIB:
            return super().find_class(module, name)
        if "." not in name and any(module == m or module.startswith(m + ".") for m in _EXCEPTION_MODULES):
            found = getattr(importlib.import_module(module), name, None)
            if isinstance(found, type) and issubclass(found, BaseException):
                return found
        raise pickle.UnpicklingError(
            f"a cluster sent a pickle naming {module}.{name}, which votum does not load"
        )


def loads(data: bytes | bytearray | memoryview, *, buffers: Any = ()) -> Any:
    return RestrictedUnpickler(io.BytesIO(data), buffers=buffers or None).load()


_lock = threading.Lock()
_depth = 0
_saved: dict[str, Any] = {}


@contextmanager
def restricted() -> Iterator[None]:
    """Every unpickling by `distributed` in this process goes through `RestrictedUnpickler` while
    inside (nested uses share one installation)."""
    global _depth
    import distributed.client
    import distributed.protocol.pickle

    with _lock:
        if _depth == 0:
            _saved["protocol"] = distributed.protocol.pickle.loads
            _saved["client"] = distributed.client.__dict__["pickle"]
            distributed.protocol.pickle.loads = loads
            # the module's own `import pickle`, which loads a warning's category from a worker
            restricted_module = types.SimpleNamespace(
                loads=loads, dumps=pickle.dumps, HIGHEST_PROTOCOL=pickle.HIGHEST_PROTOCOL
            )
            setattr(distributed.client, "pickle", restricted_module)  # noqa: B010
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                distributed.protocol.pickle.loads = _saved.pop("protocol")
                setattr(distributed.client, "pickle", _saved.pop("client"))  # noqa: B010
