"""genai-prices' package without the network updater its ``__init__`` loads.

``genai_prices/__init__.py`` imports ``genai_prices.update_prices`` (the
background price updater: ``httpx2`` and ``asyncio``) and ``importlib.metadata``
for ``__version__``; pricing needs only ``genai_prices.types`` and
``genai_prices.data_snapshot`` (genai-prices 2.x, ``genai_prices/__init__.py``).
On a first run that import is a fifth of ``agentlog usage`` on 3,000 small logs.

Importing this module (as :mod:`agentlog.usage.resolve` and
:mod:`agentlog.usage.snapshot` do before genai-prices) runs :func:`lean_package`,
which puts in ``sys.modules`` a package module for genai-prices
whose ``__init__`` has not run: its submodules import from its folder as usual,
and the first attribute asked of the package itself (``calc_price``,
``__version__``, ``UpdatePrices``…) runs the real ``__init__`` into it, so code
that imports genai-prices in the same process sees the whole package.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types
from typing import Any

NAME = "genai_prices"


class _LeanPackage(types.ModuleType):
    """The package, its ``__init__`` run on the first attribute it lacks."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name not in ("__version__", "__all__"):
            raise AttributeError(name)  # import machinery probing dunders: nothing to run
        if importlib.machinery.PathFinder.find_spec(f"{NAME}.{name}", self.__path__) is not None:
            raise AttributeError(
                name
            )  # a submodule not imported yet: ``from genai_prices import x`` imports it
        spec = self.__spec__
        assert spec is not None and spec.loader is not None
        self.__class__ = types.ModuleType  # type: ignore[assignment]  # once: the real __init__ defines the rest
        spec.loader.exec_module(self)
        return getattr(self, name)


def lean_package() -> None:
    """Make ``import genai_prices.<submodule>`` skip the package's ``__init__``
    until the package itself is used (nothing happens once genai-prices is
    imported, or when it cannot be found: the import then fails as usual)."""
    if NAME in sys.modules:
        return
    spec = importlib.machinery.PathFinder.find_spec(NAME)
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        return
    package = _LeanPackage(NAME)
    package.__spec__ = spec
    package.__file__ = spec.origin
    package.__path__ = list(spec.submodule_search_locations)
    package.__package__ = NAME
    package.__loader__ = spec.loader
    sys.modules[NAME] = package


lean_package()
