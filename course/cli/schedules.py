"""`schedules`: list the registered schedules and their parameters."""

from __future__ import annotations

from .args import dumps


def add_parser(sub):
    p = sub.add_parser("schedules", help="list schedule names and their parameters")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..schedules import REGISTRY

    if args.json:
        print(dumps([{"name": s.name, "params": ["p", "m", *s.params], "summary": s.summary}
                          for s in REGISTRY.values()]))
        return 0
    for s in REGISTRY.values():
        params = " ".join(["-p P", "-m M"] + [f"-{x} {x.upper()}" if len(x) == 1 else f"--{x} {x.upper()}"
                                              for x in s.params])
        print(f"{s.name:<12} {params:<22} {s.summary}")
    return 0
