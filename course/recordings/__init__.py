"""Recorded live runs: what a torch cell shows where torch is missing (the browser edition).

A chapter cell that needs torch (a gloo run, a gradient check, a timing) asks for a named case::

    from course import recordings
    live = recordings.run("ch03-1f1b")            # a LiveResult either way
    detect_s = recordings.seconds("ch03-1f1b-blocking")

With torch installed the case runs live, exactly as the chapter would have run it.  Without torch the result comes
from ``course/recordings/<case>.json``, rebuilt as the same object (a LiveResult, a Plan, a Timeline, numbers; a
recorded exception is raised again), and the cell shows one plain sentence saying it is a recording and the exact
command that produced it.  ``COURSE_RECORDINGS=1`` shows the recording even where torch exists (tests use it).

Each case (``cases.CASES``) names the function that runs it, its inputs and the modules whose code decides its
result.  A recording stores their fingerprint; ``python -m course.recordings check`` (run by ``make check``) names
every recording whose inputs or code changed since it was made, and ``make recordings`` makes them again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

from ..optional import importable

HERE = Path(__file__).resolve().parent
FORMAT = 1
_seconds: dict[str, float] = {}


class RecordingError(RuntimeError):
    """A case without a recording, or a recording that cannot be read."""


def live_available() -> bool:
    """Run cases live: torch is importable and COURSE_RECORDINGS is not set to 1."""
    return os.environ.get("COURSE_RECORDINGS") != "1" and importable("torch")


def path_of(name: str) -> Path:
    return HERE / f"{name}.json"


def command(name: str) -> str:
    return f"python -m course.recordings run {name}"


# ---- fingerprints: the inputs and code a recording came from -------------------------------------------------------
def source_digest(module: str) -> str:
    """sha256 of a module's source file, read without importing it (torch modules included)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not Path(spec.origin).is_file():
        raise RecordingError(f"cannot find the source of {module} (named by a recording case)")
    return hashlib.sha256(Path(spec.origin).read_bytes()).hexdigest()


def fingerprint(name: str) -> str:
    from .cases import CASES

    case = CASES[name]
    modules = sorted({case.function.split(":")[0], *case.code})
    blob = json.dumps({"case": name, "function": case.function, "inputs": encode(case.inputs),
                       "code": {m: source_digest(m) for m in modules}}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


# ---- values <-> JSON ------------------------------------------------------------------------------------------------
def _step_text(step) -> str:
    from ..plan import ops_of

    return "&".join(f"{op.kind}{op.mb}.s{op.stage}" for op in ops_of(step))


def _plan_json(plan) -> dict:
    return {"name": plan.name, "m": plan.m, "placement": plan.placement, "routes": plan.routes,
            "ranks": [[_step_text(s) for s in steps] for steps in plan.ranks]}


def _plan(d: dict):
    from ..plan import Plan, parse_step

    return Plan([[parse_step(t) for t in steps] for steps in d["ranks"]], d["m"], placement=d["placement"],
                routes=d["routes"], name=d["name"])


def _timeline_json(tl) -> dict:
    return {**{name: getattr(tl, name) for name in tl.FIELDS}, "act": encode(tl.act), "meta": encode(tl.meta),
            "steps": [[_step_text(s) for s in row] for row in tl.steps]}


def _timeline(d: dict):
    from ..plan import parse_step
    from ..timeline import Timeline

    return Timeline(**{**{name: d[name] for name in Timeline.FIELDS}, "act": decode(d["act"]),
                       "meta": decode(d["meta"]), "steps": [[parse_step(t) for t in row] for row in d["steps"]]})


def _options(d: dict):
    from ..costs import Costs
    from ..live.options import LiveOptions, ModelConfig

    d = dict(d)
    return LiveOptions(costs=Costs(**d.pop("costs")), model=ModelConfig(**d.pop("model")), **d)


def encode(value):
    """A JSON-able form of ``value``: plain data as itself, course objects and exceptions tagged by type."""
    from ..live.result import LiveResult
    from ..plan import Plan
    from ..timeline import Timeline

    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"type": "float", "value": repr(value)}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {"type": "dict", "items": {k: encode(v) for k, v in value.items()}}
        return {"type": "pairs", "items": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, Plan):
        return {"type": "Plan", **_plan_json(value)}
    if isinstance(value, Timeline):
        return {"type": "Timeline", **_timeline_json(value)}
    if isinstance(value, LiveResult):
        return {"type": "LiveResult", "plan": _plan_json(value.plan), "engine": value.engine,
                "options": encode(dataclasses.asdict(value.options)), "timeline": _timeline_json(value.timeline),
                "max_abs_err": encode(value.max_abs_err), "losses": encode(value.losses), "meta": encode(value.meta)}
    if isinstance(value, BaseException):
        cls = type(value)
        return {"type": "exception", "class": f"{cls.__module__}:{cls.__qualname__}", "args": encode(value.args),
                "attrs": encode({k: v for k, v in vars(value).items() if not k.startswith("_")})}
    raise TypeError(f"a recording cannot hold a {type(value).__name__}: {value!r:.80}")


def decode(value):
    """The value ``encode`` wrote: the same types back (tuples come back as lists)."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    kind = value["type"]
    if kind == "dict":
        return {k: decode(v) for k, v in value["items"].items()}
    if kind == "pairs":
        return {_key(decode(k)): decode(v) for k, v in value["items"]}
    if kind == "float":
        return float(value["value"])
    if kind == "Plan":
        return _plan(value)
    if kind == "Timeline":
        return _timeline(value)
    if kind == "LiveResult":
        from ..live.result import LiveResult
        from ..sim import simulate

        plan, options = _plan(value["plan"]), _options(decode(value["options"]))
        return LiveResult(plan, value["engine"], options, _timeline(value["timeline"]),
                          simulate(plan, options.costs), decode(value["max_abs_err"]), decode(value["losses"]),
                          decode(value["meta"]))
    if kind == "exception":
        module, qualname = value["class"].split(":")
        cls = getattr(importlib.import_module(module), qualname)
        err = cls.__new__(cls)
        BaseException.__init__(err, *decode(value["args"]))
        err.__dict__.update(decode(value["attrs"]))
        return err
    raise RecordingError(f"unknown value type {kind!r} in a recording")


def _key(k):
    return tuple(k) if isinstance(k, list) else k


# ---- running, recording, replaying ----------------------------------------------------------------------------------
def execute(name: str) -> tuple[object, BaseException | None, float]:
    """Run case ``name`` live: (its result or None, the exception it raised or None, wall seconds)."""
    from .cases import CASES

    case = CASES[name]
    module, func = case.function.split(":")
    fn = getattr(importlib.import_module(module), func)
    t0 = time.perf_counter()
    try:
        result = fn(**case.inputs)
    except Exception as err:   # noqa: BLE001  (a recorded failure, a deadlock or a worker's error, is a result)
        return None, err, time.perf_counter() - t0
    return result, None, time.perf_counter() - t0


def record(name: str) -> dict:
    """Run ``name`` live and write its recording; return it."""
    result, error, seconds = execute(name)
    import torch

    rec = {"format": FORMAT, "case": name, "command": command(name), "fingerprint": fingerprint(name),
           "recorded": time.strftime("%Y-%m-%d"), "torch": torch.__version__,
           "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
           "seconds": round(seconds, 4), "raised": error is not None,
           "result": encode(error if error is not None else result)}
    # paths in tracebacks, relative to the repository
    text = json.dumps(rec, indent=1, ensure_ascii=False).replace(str(HERE.parent.parent) + "/", "")
    tmp = path_of(name).with_suffix(".json.partial")
    tmp.write_text(text + "\n", encoding="utf-8")
    tmp.replace(path_of(name))          # whole or not at all: a reader never sees half a recording
    return rec


def load(name: str) -> dict:
    from .cases import CASES

    if name not in CASES:
        raise RecordingError(f"no recording case {name!r}; cases: {', '.join(CASES)}")
    path = path_of(name)
    if not path.exists():
        raise RecordingError(f"{name}: no recording at {path}; make it with: {command(name)} --write "
                             f"(or make recordings), where torch is installed")
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise RecordingError(f"{path} is not JSON ({err}); make it again: {command(name)} --write") from None
    if not isinstance(rec, dict) or rec.get("format") != FORMAT or rec.get("case") != name:
        raise RecordingError(f"{path}: not a format-{FORMAT} recording of {name}; make it again: {command(name)} "
                             "--write")
    return rec


def stale(names=None) -> list[str]:
    """The cases whose recording is missing or was made from other inputs or code than the current ones."""
    from .cases import CASES

    out = []
    for name in names or CASES:
        try:
            if load(name)["fingerprint"] != fingerprint(name):
                out.append(name)
        except RecordingError:
            out.append(name)
    return out


def note(rec: dict, is_stale: bool) -> str:
    """The sentence a recorded cell shows (Chinese, then English, as the course's other messages)."""
    when = f"{rec['recorded']}, torch {rec['torch']}, {rec['machine']}"
    old = ("；录制之后代码或输入已改变，结果可能过时 (made from older code or inputs)" if is_stale else "")
    return (f"录制的结果 (recorded run)：这里没有 torch，下面是 `{rec['command']}` 在 {when} 上运行的结果{old}。"
            f"装好 torch 后在本地运行同一条命令即可实时重跑 (this is a recording; run the command locally to see it "
            f"live).")


def _show(text: str) -> None:
    if "IPython" in sys.modules:
        from IPython.display import Markdown, display
        display(Markdown(f"> {text}"))
    else:
        print(text)


def run(name: str):
    """Case ``name``'s result: live with torch, else its recording (with a note saying so).  A case whose run
    raised (a deadlock, a worker's error) raises the same exception again, live or recorded."""
    if live_available():
        result, error, seconds = execute(name)
        _seconds[name] = seconds
        if error is not None:
            raise error
        return result
    rec = load(name)
    _show(note(rec, rec["fingerprint"] != fingerprint(name)))
    _seconds[name] = rec["seconds"]
    value = decode(rec["result"])
    if rec["raised"]:
        raise value
    return value


def source(name: str) -> str:
    """The source of the function case ``name`` runs: what a chapter shows of a computation it may only replay."""
    import inspect

    from .cases import CASES

    if name not in CASES:
        raise RecordingError(f"no recording case {name!r}; cases: {', '.join(CASES)}")
    module, func = CASES[name].function.split(":")
    return inspect.getsource(getattr(importlib.import_module(module), func))


def seconds(name: str) -> float:
    """Wall seconds of case ``name``'s last ``run`` here: measured when live, as recorded otherwise."""
    if name not in _seconds:
        raise RecordingError(f"{name} has not run yet: call recordings.run({name!r}) first")
    return _seconds[name]


__all__ = ["run", "seconds", "source", "live_available", "record", "load", "stale", "encode", "decode", "fingerprint",
           "RecordingError"]
