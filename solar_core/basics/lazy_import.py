"""Public names of a package imported on first access (PEP 562), for the framework adapters:
``import langchain_solar`` works without LangChain, and using an adapter without its framework
says which package and extra to install."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(
    package: str, modules: Mapping[str, str], distributions: Mapping[str, str], extra: str
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: name -> the name from its submodule in
    ``modules``, imported on first access and kept. A missing top-level module among
    ``distributions`` (module -> distribution) is reported with ``pip install
    'solar-memory[<extra>]'``; any other import error is raised as is.

    >>> load = lazy_attributes("json", {"JSONDecoder": "decoder"}, {}, "none")
    >>> load("JSONDecoder").__name__
    'JSONDecoder'
    """

    def load(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        try:
            value = getattr(importlib.import_module(f".{module}", package), name)
        except ModuleNotFoundError as exc:
            root = (exc.name or "").partition(".")[0]
            if root not in distributions:
                raise
            raise ModuleNotFoundError(
                f"{name} needs {distributions[root]}: pip install 'solar-memory[{extra}]' ({exc})",
                name=exc.name,
            ) from exc
        setattr(sys.modules[package], name, value)
        return value

    return load
