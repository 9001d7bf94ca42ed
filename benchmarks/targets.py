"""The targets of a benchmark: each is checked where it is printed, and the benchmark exits 1 when one is missed.

    targets = Targets()
    print(f"ratio {ratio:.2f} (target <= 1.1: {targets.check('course vs torch step time', ratio <= 1.1)})")
    ...
    return targets.exit_code()      # sys.exit(main()): 0 when every target was met

(Not a benchmark itself: `make bench` runs benchmarks/bench_*.py and blog_claim.py.)
"""

from __future__ import annotations


class Targets:
    def __init__(self):
        self.missed: list[str] = []

    def check(self, name: str, ok: bool) -> str:
        """Record whether target ``name`` was met; return the word to print beside it."""
        if not ok:
            self.missed.append(name)
        return "met" if ok else "MISSED"

    def exit_code(self) -> int:
        if self.missed:
            print(f"MISSED {len(self.missed)} target{'s' * (len(self.missed) > 1)}: {'; '.join(self.missed)}")
            return 1
        return 0
