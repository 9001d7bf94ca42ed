"""The learner process: imports the submission and answers the checker's requests with plain data.

Started by practice/sandbox.py as ``python -I -u -B learner.py`` in its own session, under resource limits, in a
directory that holds only ``submission.py``; before it reads a request it enters the walls of practice/contain.py
(its own pid, mount, IPC and network namespaces, a minimal read-only view of the files, another uid as root).
Nothing this process says is trusted: it computes no verdict and holds no key.  It only turns requests into calls
of the learner's functions and their results (or exceptions) into plain data (practice/wire.py).  Requests, one
frame each::

    {"op": "import", "names": [...], "forbid": {function: [modules]}}  ->  {"ok": {name: {"kind": ...}}}
    {"op": "call", "name": f, "args": [...], "kwargs": {...}}  ->  {"ok": value} | {"raised": exception}
    {"op": "not_using", "name": f, "modules": [...], "names": [...]}  ->  {"ok": message or None}
    {"op": "run", "runner": "course.module:function", "name": f, "args": [...]}  ->  runner(f, *args)
    {"op": "exit"}

Before the submission is imported, every function of the modules in ``forbid`` (already imported or imported later)
is replaced by a guard that raises ``ForbiddenCall`` when the learner's file is on the call stack while a learner
function that must not use that module runs (``forbid`` maps each such function to its modules, "*" to every
function), and the reply says so (the checker then fails the test).  This is the run-time half of "don't call the
library"; the static half is ``course.checks.assert_not_using``.  Both run in this process, so code set on
dismantling them can; they stop the routes a learner takes by accident or by a quick trick (``importlib``, a
reference kept in a dict).
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.abc
import json
import os
import signal
import sys
import traceback
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MESSAGE_LIMIT = 2000


class ForbiddenCall(RuntimeError):
    """The exercise must be solved by hand: the learner's code called a function it must not use."""


def main() -> None:
    header = json.loads(sys.stdin.read())
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    sys.path.append(ROOT)
    _confine(header.get("view"))
    requests, replies = (_move_high(header[k]) for k in ("requests", "replies"))
    import course.checks
    import course.plan  # Plans passed in are rebuilt with it
    from course.i18n import tr  # COURSE_LANG, which the judge sets, picks the language
    from practice import wire
    workdir = os.getcwd()
    sys.path.insert(0, workdir)
    submission_file = os.path.join(workdir, "submission.py")
    guard = Guard(submission_file)
    not_using = course.checks.not_using_message
    module = None
    while True:
        try:
            request = wire.receive(requests)
        except wire.WireError:
            os._exit(0)
        op = request.get("op") if type(request) is dict else None
        reply: dict
        try:
            if op == "exit":
                sys.stdout.flush()
                os._exit(0)
            if op == "import":
                guard.install(request.get("forbid") if type(request.get("forbid")) is dict else {})
                module = importlib.import_module("submission")
                reply = {"ok": {n: describe(getattr(module, n)) for n in request.get("names", ())
                                if type(n) is str and hasattr(module, n)}}
            elif op in ("call", "not_using", "run"):
                fn = getattr(module, request["name"])
                guard.enter(request["name"])
                if op == "call":
                    args, kwargs = wire.decode(request["args"]), wire.decode(request["kwargs"])
                    reply = {"ok": fn(*args, **kwargs)}
                elif op == "not_using":
                    reply = {"ok": not_using(fn, *request["modules"], names=tuple(request["names"]))}
                else:
                    reply = {"ok": runner(request["runner"])(fn, *wire.decode(request["args"]))}
            else:
                reply = {"raised": {"module": "builtins", "name": "RuntimeError", "mro": [],
                                    "message": f"unknown request {str(op)[:40]!r}"}}
        except BaseException as e:  # noqa: BLE001  (the checker decides what an exception means)
            reply = {"raised": describe_exception(e, submission_file)}
        if "ok" in reply:
            try:
                reply["ok"] = wire.encode(reply["ok"])
            except BaseException as e:  # noqa: BLE001
                reply = {"raised": {"module": "builtins", "name": "TypeError", "mro": [],
                                    "message": tr(f"返回值无法传回 (the return value cannot be sent back): {_text(e)}",
                                                  f"the return value cannot be sent back: {_text(e)}")}}
        if guard.used:
            reply["forbidden"], guard.used[:] = list(guard.used), []
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            wire.send(replies, reply, reply=True)
        except (OSError, ValueError, wire.WireError):
            try:
                wire.send(replies, {"raised": {"module": "builtins", "name": "TypeError", "mro": [],
                                               "message": tr("返回值太大 (the reply is too large to send back)",
                                                             "the reply is too large to send back")}})
            except (OSError, ValueError, wire.WireError):
                os._exit(0)


def _move_high(fd: int) -> int:
    """The pipe moved to a random high descriptor: writing blindly to fds 3, 4, ... corrupts nothing."""
    while True:
        high = 256 + int.from_bytes(os.urandom(2), "big") % 700
        try:
            os.fstat(high)
        except OSError:
            break
    os.dup2(fd, high, inheritable=False)
    os.close(fd)
    return high


def _confine(view: dict | None) -> None:
    """Before any learner code: die with the judge, then the walls of practice/contain.py (``view``), or where the
    judge found no namespace to make, no new privileges and no capability."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)   # PR_SET_PDEATHSIG: a SIGKILLed judge takes this along
    from practice import contain
    if view is None:
        contain.without_namespaces()
        return
    try:
        contain.enter(view)
    except OSError as e:
        print(f"learner: the sandbox could not be set up: {e}", flush=True)
        os._exit(70)


def describe(obj) -> dict:
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return {"kind": "exception", "mro": _mro(obj)}
    if (isinstance(obj, (types.FunctionType, types.BuiltinFunctionType))
            or (callable(obj) and not isinstance(obj, type))):
        return {"kind": "function"}
    if isinstance(obj, type):
        return {"kind": "class", "type": obj.__qualname__}
    try:
        from practice import wire
        wire.encode(obj, strict=True)
        return {"kind": "value", "value": obj}
    except Exception:  # noqa: BLE001
        return {"kind": "object", "type": type(obj).__qualname__}


def describe_exception(e: BaseException, submission_file: str) -> dict:
    t = type(e)
    try:
        frames = [[f.lineno, f.name, (f.line or "").strip()] for f in traceback.extract_tb(e.__traceback__)
                  if f.filename == submission_file][-5:]
    except Exception:  # noqa: BLE001
        frames = []
    return {"module": _text(lambda: t.__module__), "name": _text(lambda: t.__qualname__), "mro": _mro(t),
            "message": _text(lambda: str(e))[:MESSAGE_LIMIT], "frames": frames}


def _mro(t: type) -> list:
    try:
        return [[_text(lambda c=c: c.__module__), _text(lambda c=c: c.__qualname__)] for c in type.mro(t)]
    except Exception:  # noqa: BLE001
        return []


def _text(fn) -> str:
    try:
        value = fn() if callable(fn) else fn
        return value if type(value) is str else str(value)
    except BaseException:  # noqa: BLE001  (a learner's __str__ may raise anything)
        return "?"


def runner(name: str):
    """``course.module:function``: a library function the checker asks to run here with a learner's function."""
    module, _, function = str(name).partition(":")
    if not module.startswith("course.") or not function:
        raise ValueError(f"a runner must be a function of the course library, got {name!r}")
    return getattr(importlib.import_module(module), function)


class Guard(importlib.abc.MetaPathFinder):
    """Replaces the functions of forbidden modules with ones that refuse to run under the learner's code."""

    def __init__(self, submission_file: str):
        self.file, self.modules, self.used = submission_file, (), []
        self.by_function: dict[str, tuple[str, ...]] = {}
        self.active: tuple[str, ...] = ()     # the modules the learner function being called must not use

    def install(self, forbid: dict) -> None:
        self.by_function = {str(k): tuple(m for m in v if type(m) is str) for k, v in forbid.items()
                            if type(v) is list}
        self.modules = tuple({m for mods in self.by_function.values() for m in mods})
        if not self.modules:
            return
        for name, module in list(sys.modules.items()):
            if self.forbidden(name) and module is not None:
                self.wrap(module)
        sys.meta_path.insert(0, self)

    def enter(self, function: str) -> None:
        """A request calls the learner's ``function``: refuse what it (or every function, "*") must not use."""
        self.active = self.by_function.get(function, ()) + self.by_function.get("*", ())

    def forbidden(self, name: str, modules: tuple[str, ...] | None = None) -> bool:
        return any(name == m or name.startswith(m + ".") for m in (self.modules if modules is None else modules))

    def find_spec(self, name, path, target=None):   # a forbidden module imported later is guarded too
        if not self.forbidden(name):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _GuardedLoader(spec.loader, self)
                return spec
        return None

    def wrap(self, module) -> None:
        for key, value in list(vars(module).items()):
            if not key.startswith("__") and type(value) in (types.FunctionType, types.BuiltinFunctionType) \
                    and not getattr(value, "_course_guard", False):
                setattr(module, key, self.guarded(f"{module.__name__}.{key}", value))

    def guarded(self, qualname: str, fn):
        guard, file, module = self, self.file, qualname.rpartition(".")[0]

        def call(*args, **kwargs):
            if not guard.forbidden(module, guard.active):
                return fn(*args, **kwargs)
            frame = sys._getframe(1)
            while frame is not None:   # the nearest of: the learner's file (refuse) or an import in progress (allow)
                name = frame.f_code.co_filename
                if name == file:
                    guard.used.append(qualname)
                    raise ForbiddenCall(_forbidden(qualname))
                if name.startswith("<frozen importlib"):   # a library's own code while `import torch` runs
                    break
                frame = frame.f_back
            return fn(*args, **kwargs)

        call.__name__, call.__doc__ = fn.__name__, fn.__doc__
        call.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        call.__module__, call._course_guard = getattr(fn, "__module__", None), True
        return call


def _forbidden(qualname: str) -> str:
    from course.i18n import tr
    return tr(f"本题要求自己实现，不能调用 (must not use) {qualname}",
              f"this exercise is to be done by hand: {qualname} must not be used")


class _GuardedLoader(importlib.abc.Loader):
    def __init__(self, loader, guard: Guard):
        self.loader, self.guard = loader, guard

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.guard.wrap(module)

    def __getattr__(self, name):   # get_source, is_package, ... of the real loader
        return getattr(self.loader, name)


if __name__ == "__main__":
    main()
