"""``python -m course.recordings``: list, run, write and check the recorded live runs.

    python -m course.recordings list             # every case, whether its recording is current
    python -m course.recordings run NAME         # run one case live and print its result
    python -m course.recordings run NAME --write # ... and write course/recordings/NAME.json
    python -m course.recordings write [NAME...]  # (make recordings) each case in a fresh process, then check
    python -m course.recordings check            # (make check) exit 1 naming every stale or missing recording
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from . import RecordingError, decode, execute, record, stale
from .cases import CASES


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.recordings", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="every case and whether its recording is current")
    one = sub.add_parser("run", help="run one case live (needs torch) and print its result")
    one.add_argument("name", choices=list(CASES), metavar="NAME")
    one.add_argument("--write", action="store_true", help="also write its recording")
    many = sub.add_parser("write", help="record cases, each in a fresh process (default: every case)")
    many.add_argument("names", nargs="*", metavar="NAME")
    sub.add_parser("check", help="exit 1 when a recording is missing or stale")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "list":
            old = set(stale())
            for name, case in CASES.items():
                print(f"{name:<26} {'STALE' if name in old else 'ok':<6} {case.about}")
            return 0
        if args.cmd == "run":
            if args.write:
                rec = record(args.name)
                value = decode(rec["result"])
                print(f"wrote course/recordings/{args.name}.json ({rec['seconds']:.1f} s)")
            else:
                result, error, _ = execute(args.name)
                value = error if error is not None else result
            print(repr(value))
            return 0
        if args.cmd == "write":
            for name in args.names or list(CASES):   # a fresh interpreter each: start-up times are part of some
                done = subprocess.run([sys.executable, "-m", "course.recordings", "run", name, "--write"])
                if done.returncode:
                    print(f"recordings: {name} failed (exit {done.returncode})", file=sys.stderr)
                    return 1
        old = stale()
        for name in old:
            print(f"stale or missing recording: course/recordings/{name}.json (make it: python -m course.recordings "
                  f"run {name} --write, or make recordings)")
        return 1 if old else 0
    except (RecordingError, ImportError) as err:
        print(f"recordings: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
