"""Run code as the browser edition would: in a Python where numpy, matplotlib, torch, OR-Tools and PIL are absent.

The modules are hidden by a finder at the front of ``sys.meta_path``, so ``import numpy`` raises
ModuleNotFoundError and ``importlib.util.find_spec("numpy")`` says it is not there, as in Pyodide.
"""

from __future__ import annotations

import subprocess
import sys

ABSENT = ("numpy", "matplotlib", "torch", "ortools", "PIL")

PRELUDE = f"""
import sys
class _Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {ABSENT!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, _Absent())
"""


def run(code: str, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    """``python -c PRELUDE + code``; its output as text."""
    return subprocess.run([sys.executable, "-c", PRELUDE + code], capture_output=True, text=True, timeout=timeout,
                          **kwargs)
