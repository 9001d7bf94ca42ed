"""The checker: runs ONE test file, never imports the learner's code, and reports each verdict to the judge.

Started by practice/sandbox.py as ``python -I checker.py`` before the learner process exists.  The judge writes a
JSON header to stdin (MAC key, nonce, the fds of the verdict pipe and of the two pipes to the learner process, the
test file, the deadline).  The checker imports everything the test file imports, then tells the judge it is ready;
only then does the judge start the learner process.

In here ``submission`` is a stand-in module (``Learner.module``): ``from submission import f`` gives a
``LearnerFunction`` whose call sends the function's name and its arguments as plain data (practice/wire.py) to the
learner process and returns the plain data that comes back, decoded by this process into real values.  Exceptions
raised there come back as their type's name, module, MRO and message, and are raised here as stand-in classes
(``remote_exception``): a learner's ``class Deadlock(RuntimeError)`` becomes a checker-side ``Deadlock`` that is a
``RuntimeError``, the same class that ``from submission import Deadlock`` gave the test.  Every comparison runs here,
on values this process built, so nothing the learner's code patches can reach it.
"""

from __future__ import annotations

import builtins
import ctypes
import hmac
import json
import os
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # the repository: course, practice
from course.i18n import tr  # COURSE_LANG, which the judge sets, picks the language

OUTPUT_LIMIT = 2000


class LearnerCrashed(BaseException):
    """The learner process exited, was killed, or called sys.exit: the running test is ``crashed``."""


class LearnerTimeout(BaseException):
    """The learner process did not answer before the test file's deadline: the running test is ``timeout``."""


class LibraryUsed(BaseException):
    """The learner's code called a function the exercise forbids (a BaseException: no test's ``except`` hides it)."""


class Learner:
    """The checker's end of the two pipes to the learner process."""

    def __init__(self, requests: int, replies: int, deadline: float, names: list[str],
                 forbid: dict[str, list[str]], wire):
        self.requests, self.replies, self.deadline = requests, replies, deadline
        self.names, self.forbid, self.wire = names, forbid, wire
        self.dead: BaseException | None = None
        self.classes: dict = {}
        self.module = types.ModuleType("submission")
        self.module.__getattr__ = self._first_import    # PEP 562: runs for a name not (yet) in the module
        self.loaded = False

    # -- requests --
    def request(self, op: str, **fields):
        if self.dead is not None:
            raise type(self.dead)(*self.dead.args)
        wire = self.wire
        try:
            wire.send(self.requests, {"op": op, **fields}, self.deadline)
            reply = wire.receive(self.replies, self.deadline, reply=True)
        except wire.WireTimeout:
            self.dead = LearnerTimeout(tr("学习者进程 (learner process) 在时限内没有回答 (no answer before the "
                                          "deadline)",
                                          "the learner process did not answer before the deadline"))
        except wire.WireClosed:
            self.dead = LearnerCrashed(tr("学习者进程 (learner process) 退出了 (exited) 或被终止 (killed)",
                                          "the learner process exited or was killed"))
        except wire.WireError as e:
            self.dead = LearnerCrashed(_malformed(e))
        if self.dead is not None:
            raise type(self.dead)(*self.dead.args)
        return self._answer(reply)

    def _answer(self, reply):
        if type(reply) is not dict:
            raise LearnerCrashed(_malformed())
        used = reply.get("forbidden")
        if used:
            names = ", ".join(str(u)[:80] for u in list(used)[:3]) if type(used) is list else "?"
            raise LibraryUsed(tr(f"运行时调用了 (called at run time) {names}：本题要求自己实现，不能调用 (must not "
                                 "use) 这个库",
                                 f"called at run time: {names}; this exercise is to be done by hand, without that "
                                 "library"))
        if "raised" in reply:
            raise self._exception(reply["raised"])
        try:
            return self.wire.decode(reply.get("ok"), opaque=self._opaque)
        except self.wire.WireError as e:
            raise LearnerCrashed(_malformed(e)) from None

    def _exception(self, info) -> BaseException:
        if type(info) is not dict:
            return LearnerCrashed(_malformed())
        message = info.get("message") if type(info.get("message")) is str else "?"
        cls = self.exception_class(info.get("module"), info.get("name"), info.get("mro"))
        if cls is SystemExit:
            return LearnerCrashed(tr(f"提交的代码调用了 sys.exit({message[:100]})：进程不能提前退出 (exit)",
                                     f"the submission called sys.exit({message[:100]}): it may not exit early"))
        if cls is KeyboardInterrupt:
            return LearnerCrashed(tr("提交的代码被中断 (KeyboardInterrupt)", "the submission was interrupted "
                                     "(KeyboardInterrupt)"))
        try:
            e = cls(message[:OUTPUT_LIMIT])
        except Exception:  # noqa: BLE001  (a builtin whose constructor wants more, e.g. UnicodeDecodeError)
            fallback = self.exception_class("submission", f"{cls.__name__}", [["builtins", "Exception"]])
            e = fallback(message[:OUTPUT_LIMIT])
        frames = info.get("frames")
        e.learner_frames = [f for f in frames if type(f) is list and len(f) == 3] if type(frames) is list else []
        return e

    def exception_class(self, module, name, mro) -> type:
        """The checker-side class for the learner's exception type ``module.name`` (one class per name)."""
        module, name = (module if type(module) is str else "?"), (name if type(name) is str else "?")
        if module == "builtins":
            found = getattr(builtins, name, None)
            if isinstance(found, type) and issubclass(found, BaseException):
                return found
        key = (module, name)
        if key not in self.classes:
            base = Exception
            for entry in mro if type(mro) is list else []:
                if type(entry) is list and len(entry) == 2 and entry[0] == "builtins":
                    found = getattr(builtins, str(entry[1]), None)
                    if isinstance(found, type) and issubclass(found, Exception):
                        base = found
                        break
            short = name.rsplit(".", 1)[-1] or "LearnerException"
            self.classes[key] = type(short, (base,), {"__module__": module, "__qualname__": name,
                                                      "__doc__": "Stand-in for an exception class of the learner."})
        return self.classes[key]

    def _opaque(self, type_name: str):
        key = ("$object", type_name)
        if key not in self.classes:
            short = type_name.rsplit(".", 1)[-1] or "LearnerObject"
            self.classes[key] = type(short, (LearnerObject,), {"__qualname__": short, "__module__": "submission"})
        return self.classes[key]()

    # -- the stand-in module --
    def _first_import(self, name: str):
        if not self.loaded:
            self.loaded = True
            described = self.request("import", names=self.names, forbid=self.forbid)
            for key, info in (described.items() if type(described) is dict else ()):
                value = self._stand_in(key, info)
                if value is not None:
                    setattr(self.module, key, value)
        if name in self.module.__dict__:
            return self.module.__dict__[name]
        raise AttributeError(f"module 'submission' has no attribute {name!r}")

    def _stand_in(self, name, info):
        if type(name) is not str or type(info) is not dict:
            return None
        kind = info.get("kind")
        if kind == "function":
            return LearnerFunction(self, name)
        if kind == "exception":
            return self.exception_class("submission", name, info.get("mro"))
        if kind == "value":
            return info.get("value")
        return self._opaque(str(info.get("type", "object")))

    def close(self) -> None:
        if self.dead is None:
            try:
                self.wire.send(self.requests, {"op": "exit"}, time.monotonic() + 0.5)
            except self.wire.WireError:
                pass


def _malformed(error: object = None) -> str:
    """The learner process sent something that is not a reply (``error``: what the wire found wrong)."""
    return tr("学习者进程发来的数据无法解析 (malformed reply)", "the learner process sent a malformed reply") \
        + (f": {error}" if error is not None else "")


class LearnerObject:
    """Stand-in for a learner's object that cannot cross the boundary (only its type's name did)."""

    def __repr__(self) -> str:
        return tr(f"<{type(self).__name__} 对象 (object)>", f"<{type(self).__name__} object>")


def _remote_base():
    import course.checks
    return course.checks.Remote


class LearnerFunction(_remote_base()):
    """A function of the submission, called in the learner process."""

    def __init__(self, learner: Learner, name: str):
        self._learner, self.__name__, self.__qualname__ = learner, name, name

    def __call__(self, *args, **kwargs):
        wire = self._learner.wire
        try:
            data = wire.encode(list(args), strict=True), wire.encode(dict(kwargs), strict=True)
        except wire.WireError as e:
            raise TypeError(f"a test can pass only plain data to the learner's {self.__name__}: {e}") from None
        return self._learner.request("call", name=self.__name__, args=data[0], kwargs=data[1])

    def not_using(self, modules: tuple, names: tuple):
        return self._learner.request("not_using", name=self.__name__, modules=list(modules), names=list(names))

    def run_with(self, runner: str, args: tuple):
        wire = self._learner.wire
        try:
            data = wire.encode(list(args), strict=True)
        except wire.WireError as e:
            raise TypeError(f"only plain data can go to {runner}: {e}") from None
        return self._learner.request("run", runner=runner, name=self.__name__, args=data)

    def __repr__(self) -> str:
        return f"<learner function {self.__name__}>"


# ---- verdicts ---------------------------------------------------------------------------------------------------

def classify(e: BaseException, at_import: bool) -> tuple[str, str]:
    where = tr("import 时 (at import)", "at import") if at_import else tr("运行时 (at run time)", "at run time")
    if isinstance(e, LearnerCrashed):
        return "crashed", tr(f"进程提前退出 (crashed, {where})：{e}",
                             f"the process ended early (crashed, {where}): {e}")
    if isinstance(e, LearnerTimeout):
        return "timeout", tr(f"超时 (timeout)：{e}。死循环 (infinite loop) 或死锁？",
                             f"timeout: {e}.  An infinite loop or a deadlock?")
    if isinstance(e, LibraryUsed):
        return "failed", str(e)
    frames = getattr(e, "learner_frames", None) or []
    trace = (tr("\n  Traceback (你的代码 / your code):\n", "\n  Traceback (your code):\n") + "\n".join(
        f"  submission.py, line {f[0]}, in {str(f[1])[:80]}: {str(f[2])[:200]}" for f in frames[-5:])) if frames else ""
    if isinstance(e, AssertionError) and not at_import:
        return "failed", (str(e) or tr("断言失败 (assertion failed)", "assertion failed"))[:OUTPUT_LIMIT]
    if isinstance(e, NotImplementedError):
        return "error", tr("还没有实现 (NotImplementedError)：把 starter 里的 raise NotImplementedError 换成你的代码。",
                           "not implemented yet (NotImplementedError): replace the starter's raise "
                           "NotImplementedError with your code.") + trace
    return "error", f"{type(e).__name__}: {str(e)[:OUTPUT_LIMIT]}{trace}"


def not_run(why: str) -> str:
    """The message of a test that never ran because of ``why`` (the judge says it too)."""
    return tr(f"没有运行 (not run)：{why}", f"not run: {why}")


def main() -> None:
    header = json.loads(sys.stdin.read())
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    _not_dumpable()
    signer = hmac.new(bytes.fromhex(header.pop("key")), digestmod="sha256")
    nonce, verdicts, seq = header["nonce"], header["verdicts"], [0]

    def send(**record) -> None:
        record["nonce"], record["seq"] = nonce, seq[0]
        body = json.dumps(record, ensure_ascii=True, sort_keys=True)
        mac = signer.copy()
        mac.update(body.encode())
        os.write(verdicts, (json.dumps({"body": body, "mac": mac.hexdigest()}) + "\n").encode())
        seq[0] += 1

    from practice import exercises, wire

    path = header["test"]
    with open(path, encoding="utf-8") as f:
        test = exercises.TestFile(os.path.basename(path), f.read())
    names = test.test_names

    def finish(verdict: str, message: str, start: int = 0) -> None:
        """Every test from ``start`` on gets ``verdict``: the same message at import, "not run" after a test."""
        for name in names[start:]:
            send(event="result", test=name, verdict=verdict,
                 message=not_run(message) if start else message)
        send(event="done")
        sys.exit(0)

    try:   # everything the test imports, before the learner process exists
        import importlib
        for module in ("course.checks", *test.imports):   # course.checks: _remote_base needs it later
            importlib.import_module(module)
    except Exception as e:  # noqa: BLE001
        send(event="ready")
        finish("error", tr(f"测试需要的模块导入失败 (import failed): {type(e).__name__}: {e}。运行 "
                           "`python practice/judge.py doctor` 看看缺什么。",
                           f"a module the tests need failed to import: {type(e).__name__}: {e}.  Run "
                           "`python practice/judge.py doctor` to see what is missing."))
    learner = Learner(header["requests"], header["replies"], header["deadline"], test.submission_names,
                      test.forbidden_modules, wire)
    sys.modules["submission"] = learner.module
    module = types.ModuleType(test.name[:-3])
    module.__file__ = path
    sys.modules[module.__name__] = module
    send(event="ready")
    try:
        exec(compile(test.source, path, "exec"), module.__dict__)
    except BaseException as e:  # noqa: BLE001  (the learner's import failed: every test gets that verdict)
        finish(*classify(e, at_import=True))
    for k, name in enumerate(names):
        send(event="start", test=name)
        try:
            module.__dict__[name]()
            verdict, message = "passed", ""
        except BaseException as e:  # noqa: BLE001
            verdict, message = classify(e, at_import=False)
        send(event="result", test=name, verdict=verdict, message=message)
        if learner.dead is not None and k + 1 < len(names):
            finish(verdict, message, k + 1)
    learner.close()
    send(event="done")


def _not_dumpable() -> None:
    """PR_SET_DUMPABLE 0: a process of the same user can no longer open this one's fds or memory through /proc."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


if __name__ == "__main__":
    main()
