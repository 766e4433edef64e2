"""A small thread-safe LRU of per-election objects (manifests, devices with their tables, verifiers,
decryptors), shared by the seed endpoints and the stateful API."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class LruCache:
    def __init__(self, size: int = 32) -> None:
        self._size = size
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any, make: Callable[[], T]) -> T:
        """The value under `key`, made (outside the lock) when absent; the least recently used value
        is dropped past `size`."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]  # type: ignore[no-any-return]
        value = make()
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value
