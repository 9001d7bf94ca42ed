"""Which optional libraries this interpreter has: the browser edition (Pyodide) has none of numpy, matplotlib,
torch and OR-Tools, and the course takes its standard-library path wherever one is missing."""

from __future__ import annotations

import importlib.util


def importable(name: str) -> bool:
    """True when ``import name`` would find the module (without importing it)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):   # ValueError: sys.modules[name] is None, an import blocked on purpose
        return False
