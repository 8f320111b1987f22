"""A namespace is a tuple of labels: a bare string passed for one is refused by every call of
``SolarStore``, never read as the tuple of its characters (``"42"`` as ``("4", "2")``, whose
items a ``get`` returned and a ``forget`` deleted)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from langchain_solar import SolarStore

CALLS: dict[str, Callable[[SolarStore], Any]] = {
    "get": lambda store: store.get("42", "k"),  # type: ignore[arg-type]
    "put": lambda store: store.put("42", "k2", {"t": 3}),  # type: ignore[arg-type]
    "search": lambda store: store.search("42"),  # type: ignore[arg-type]
    "delete": lambda store: store.delete("42", "k"),  # type: ignore[arg-type]
    "forget": lambda store: store.forget("42"),  # type: ignore[arg-type]
    "memory": lambda store: store.memory("42"),  # type: ignore[arg-type]
    "reembed": lambda store: store.reembed("42"),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_str_namespace_is_refused_and_names_the_tuple(call: str) -> None:
    store = SolarStore(capacity=5, policy="fifo")
    store.put(("4", "2"), "k", {"t": 1})
    with pytest.raises(ValueError, match=r"a namespace is a tuple of str labels.*\('42',\)"):
        CALLS[call](store)
    item = store.get(("4", "2"), "k")
    assert item is not None and item.value == {"t": 1}  # nothing read, changed or deleted
    assert store.list_namespaces() == [("4", "2")]
    store.close()
