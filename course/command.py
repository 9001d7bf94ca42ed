"""What every command line of the course shares: one-line errors, number types, cost flags, size guards.

Both front ends build on it: ``python -m course`` (``course.cli``; its subcommands import these names from
``course.cli.args``) and the torchrun entry ``python -m course.live``, which sits below the CLI and must not import
it.  Exit status: 0 done, 1 the job ran and failed (a gradient mismatch, a deadlock), 2 bad input or an output that
cannot be written (one line on stderr, never a traceback), 130 interrupted (Ctrl-C), 143 terminated (SIGTERM).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import sys

from .files import write_file

# Peak resident memory of `sim ... --json` (build, simulate, summarise) above the interpreter's own, per op: 280
# bytes for 1F1B p=4 m=250k (2M ops), 275 for ZB-H1, 250 for interleaved v=4, 575 for DualPipeV (its F&B pairs);
# with many ranks each rank adds about 1.6 kB (1F1B p=500k m=2: 1.34 GB for 2M ops).  The worst of them, rounded up:
BYTES_PER_OP, BYTES_PER_RANK = 600, 1600


class UsageError(Exception):
    """Bad input from the command line: printed as one line, exit status 2."""


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that ``finally`` blocks (the live job's cleanup) run."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (no usage dump) and exits 2."""

    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")


def run_guarded(command, *args) -> int:
    """Call ``command(*args) -> int`` and turn every way it can end into an exit status and at most one line."""
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:            # not the main thread: leave signals alone
        previous = None
    try:
        code = command(*args)
        sys.stdout.flush()        # a full disk or a closed pipe shows here, not in the interpreter's shutdown
        return code
    except (UsageError, ValueError) as e:    # PlanError, DeadlockError and argument checks are ValueErrors
        return _fail(f"error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", 2)
    except BrokenPipeError:       # `... | head`
        _silence_stdout()
        return 0
    except OSError as e:          # an unwritable output path, a full disk
        _silence_stdout()
        where = f"cannot write {e.filename}: " if e.filename else "cannot write the output (stdout): "
        return _fail(f"error: {where}{e.strerror or e}", 2)
    except MemoryError:
        return _fail("error: out of memory (the size guards were overridden with --force, or misjudged)", 2)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except Terminated:
        return _fail("terminated", 143)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _raise_terminated(signum, frame):
    raise Terminated()


def _fail(line: str, code: int) -> int:
    print(line, file=sys.stderr)
    return code


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush of what is still buffered cannot fail again."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def write_output(path: str, data: bytes | str) -> None:
    """Write an output file the user named (whole or not at all: ``course.files``) and say so on stderr, so that
    stdout stays the command's result (one JSON document with ``--json``)."""
    write_file(path, data)
    print(f"wrote {path}", file=sys.stderr)


def dumps(obj) -> str:
    """Standard JSON: an infinity or NaN is an error here, never a ``NaN`` token in the output."""
    return json.dumps(obj, allow_nan=False)


# ---- number types (argparse ``type=``) ------------------------------------------------------------------
# One rule for every number read from a command line: ASCII digits with an optional sign, decimal point and
# exponent ("8", "-0.5", "2e-3"), or the words inf and nan (so that they can be refused as not finite).  Python's
# own int() and float() also take "1_000" and digits of other scripts ("٤", "４"); both are refused here, so a
# number means the same to every tool that reads the command line.
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)", re.ASCII | re.I)
_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)


def _float(text: str) -> float:
    if not _FLOAT.fullmatch(text.strip()):
        raise ValueError(text)
    return float(text)


def finite_float(text: str) -> float:
    """'2.5' -> 2.5; nan and infinities are refused."""
    try:
        val = _float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r} (ASCII digits, e.g. 2.5 or 1e-3)") \
            from None
    if not math.isfinite(val):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return val


def positive_int(text: str) -> int:
    if not _INT.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r} (ASCII digits 0-9)")
    try:
        val = int(text)
    except ValueError:     # thousands of digits: int() refuses them
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text[:20]!r}...") from None
    if val < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer (>= 1), got {val}")
    return val


def number_list(text: str) -> float | list[float]:
    """'2' -> 2.0; '1,2,3' -> [1.0, 2.0, 3.0] (per-stage values).  Finite and non-negative."""
    try:
        vals = [_float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or a comma-separated list of numbers, got {text!r} "
                                         "(ASCII digits, e.g. 1,2.5,1e-3)") from None
    if not all(math.isfinite(v) for v in vals):
        raise argparse.ArgumentTypeError(f"expected finite numbers, got {text!r}")
    if any(v < 0 for v in vals):
        raise argparse.ArgumentTypeError(f"expected non-negative values, got {text!r}")
    return vals[0] if len(vals) == 1 else vals


def check_finite(value: float, what: str) -> None:
    """Finite inputs can still add up to infinity (1e308 + 1e308): refuse such a result in one line."""
    if not math.isfinite(value):
        raise ValueError(f"costs too large: {what} overflows to {value} (give costs whose sum is finite)")


def output_file(text: str) -> str:
    """A file the command will write: refused at once when its folder is missing or not writable."""
    folder = os.path.dirname(os.path.abspath(text))
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a directory, expected a file name")
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(text) and not os.access(text, os.W_OK)):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: permission denied")
    return text


# ---- costs -------------------------------------------------------------------------------------------------
COST_FIELDS = ("f", "b", "w", "comm", "act", "overlap", "w_mem")   # the Costs fields a flag sets (and --mb-scale)

def add_cost_args(parser, *, omit: tuple[str, ...] = ()) -> None:
    """--f --b --w --comm --act --mb-scale --overlap --w-mem, less those named in ``omit`` (``order`` gives the
    per-micro-batch multipliers with a flag of its own; ``search`` models neither act, mb_scale nor overlap)."""
    g = parser.add_argument_group("costs (one rank's share of the model; lists give one value per stage)")
    unknown = set(omit) - set(COST_FIELDS) - {"mb_scale"}
    assert not unknown, f"add_cost_args: no cost flag {sorted(unknown)}"

    def add(name, **kw):
        if name not in omit:
            g.add_argument(f"--{name.replace('_', '-')}", **kw)
    add("f", type=number_list, default=1.0, help="forward time F (default 1)")
    add("b", type=number_list, default=1.0, help="input-gradient time B (default 1); a full backward costs B + W")
    add("w", type=number_list, default=1.0, help="weight-gradient time W (default 1)")
    add("comm", type=finite_float, default=0.0, help="point-to-point latency between ranks (default 0)")
    add("act", type=number_list, default=1.0, help="activation memory per micro-batch (default 1)")
    add("mb_scale", type=number_list, metavar="S1,...,SM",
        help="per-micro-batch cost multipliers, one per micro-batch, e.g. 1,2,1,1")
    add("overlap", type=finite_float, default=1.0, help="an overlapped F&B step (dualpipe, dualpipev) lasts "
        "OVERLAP x (F + B); below 1 models hidden communication (default 1)")
    add("w_mem", type=finite_float, default=1.0, help="split backward: the share of a micro-batch's activations "
        "still held after B until its W (B frees 1 - W_MEM, W frees W_MEM; default 1)")


def costs_from_args(args, plan=None):
    """The Costs the cost flags describe (Costs' defaults for flags the command omits); with ``plan``, --mb-scale
    must give one value per micro-batch."""
    from .costs import Costs

    scale = getattr(args, "mb_scale", None)
    if isinstance(scale, float):
        scale = [scale]
    if scale is not None and plan is not None and len(scale) != plan.m:
        raise ValueError(f"--mb-scale lists {len(scale)} value{'s' * (len(scale) != 1)} but the plan has "
                         f"{plan.m} micro-batches: give {plan.m}, one per micro-batch")
    given = {name: getattr(args, name) for name in COST_FIELDS if hasattr(args, name)}
    return Costs(**given, mb_scale=scale)


# ---- size guards ----------------------------------------------------------------------------------------------
def available_memory() -> int:
    """Bytes of memory this machine can still give: MemAvailable in /proc/meminfo on Linux (read directly: importing
    psutil would cost every command ~20 ms), psutil elsewhere, free pages without it."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024      # the figure is in KiB
    except (OSError, ValueError, IndexError):
        pass
    try:
        import psutil

        return psutil.virtual_memory().available
    except ImportError:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def check_ops(what: str, ops: float, force: bool, ranks: float = 0) -> None:
    """Refuse work of about ``ops`` ops on ``ranks`` ranks when holding it would not fit in memory (``force``
    overrides)."""
    need, have = ops * BYTES_PER_OP + ranks * BYTES_PER_RANK, available_memory()
    if need > have and not force:
        raise ValueError(f"{what} means about {ops:.2g} ops, ~{_bytes(need)} of memory, more than the "
                         f"{_bytes(have)} of memory available (limit ~{have / BYTES_PER_OP:.2g} ops); "
                         "--force to try anyway")


def _bytes(n: float) -> str:
    unit = 0
    while n >= 1000 and unit < 5:
        n, unit = n / 1000, unit + 1
    return f"{n:.3g} {('B', 'KB', 'MB', 'GB', 'TB', 'PB')[unit]}"
