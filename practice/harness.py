"""The judge's child process: runs ONE test file against a submission and reports each verdict over a signed pipe.

Started by practice/judge.py as ``python -I harness.py`` in a fresh directory holding ``submission.py`` and a copy
of the test file.  The judge writes a JSON header to stdin: the HMAC key, a nonce, the verdict pipe's fd, the test
file's name and the repository root.  Before any learner code runs, the harness

- turns the key into an opaque HMAC object and binds every primitive it needs later as a local of ``main``,
- imports every module the test file imports and fingerprints them (functions, their code, classes),
- compiles the test file itself, so it knows the code object of every test function.

After the learner's module is imported (by the test's ``from submission import ...``) and after every test, it
verifies that nothing it relies on was swapped: the fingerprints, the names the test module imported, and the test
functions' code.  Only signed lines on the pipe count; stdout, stderr and the exit code are not trusted.
"""

import ast
import builtins
import hmac
import importlib
import json
import math
import os
import sys
import traceback
import types

OUTPUT_LIMIT = 2000
_missing = object()


def main() -> None:
    header = json.loads(sys.stdin.read())
    signer = hmac.new(bytes.fromhex(header.pop("key")), digestmod="sha256")
    nonce, fd, test_file, root = header["nonce"], header["fd"], header["test"], header["root"]
    del header
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    # Locals from here on: learner code can rebind module attributes (json.dumps, os.write, this module's
    # functions), but not these names.
    write, esc, join, sorted_, type_, str_, int_ = (os.write, json.encoder.encode_basestring_ascii, str.join, sorted,
                                                    type, str, int)
    isinstance_, list_ = isinstance, list
    classify, changed, fingerprint, exit_ = _classify, _changed, _fingerprint, os._exit
    seq = [0]

    def encode(value) -> str:
        if isinstance_(value, str_):
            return esc(value)
        if type_(value) is int_:
            return int_.__repr__(value)
        if type_(value) is list_:
            return "[" + join(",", [encode(v) for v in value]) + "]"
        return "{" + join(",", [esc(k) + ":" + encode(value[k]) for k in sorted_(value)]) + "}"

    def send(**record) -> None:
        record["nonce"], record["seq"] = nonce, seq[0]
        body = encode(record)
        mac = signer.copy()
        mac.update(body.encode())
        write(fd, ('{"body":' + esc(body) + ',"mac":"' + mac.hexdigest() + '"}\n').encode())
        seq[0] += 1

    sys.path.append(root)   # the repository: `course` imports even without `pip install -e .`
    workdir = os.getcwd()
    path = os.path.join(workdir, test_file)
    with open(path, encoding="utf-8") as f:
        source = f.read()
    tree = ast.parse(source)
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    send(event="tests", names=names)

    def finish_all(verdict: str, message: str) -> None:
        for name in names:
            send(event="result", test=name, verdict=verdict, message=message)
        send(event="done")
        exit_(0)

    try:   # everything the test imports, imported and fingerprinted before learner code exists
        import course.checks  # noqa: F401
        bindings = _imported_bindings(tree)
    except Exception as e:  # noqa: BLE001
        finish_all("error", f"测试需要的模块导入失败 (import failed): {type(e).__name__}: {e}。运行 "
                            "`python practice/judge.py doctor` 看看缺什么。")
    watched = fingerprint()
    code = compile(source, path, "exec")
    test_code = {c.co_name: c for c in code.co_consts if type(c) is types.CodeType}

    sys.path.insert(0, workdir)
    sys.argv = [test_file]
    module = types.ModuleType(test_file[:-3])
    module.__file__ = path
    sys.modules[module.__name__] = module
    submission_path = os.path.join(workdir, "submission.py")
    try:
        exec(code, module.__dict__)
    except BaseException as e:  # noqa: BLE001  (whatever the learner's import does, every test gets a verdict)
        finish_all(*classify(e, submission_path, at_import=True))

    for name in names:
        send(event="start", test=name)
        fn = module.__dict__.get(name)
        tampered = changed(watched, bindings, module.__dict__)
        if type_(fn) is not types.FunctionType or fn.__code__ is not test_code.get(name) \
                or fn.__globals__ is not module.__dict__:
            tampered.append(f"{module.__name__}.{name}")
        if not tampered:
            try:
                fn()
                verdict, message = "passed", ""
            except BaseException as e:  # noqa: BLE001
                verdict, message = classify(e, submission_path, at_import=False)
            tampered = changed(watched, bindings, module.__dict__)
        if tampered:
            verdict = "error"
            message = ("检测到篡改 (tampering)：提交的代码改动了测试或检查用的函数 (" + ", ".join(tampered[:5]) +
                       ")。请不要 monkeypatch 测试、math、builtins、torch.Tensor 或 course 库。")
        send(event="result", test=name, verdict=verdict, message=message)
    send(event="done")
    exit_(0)   # no atexit handlers or finalizers from learner code


def _imported_bindings(tree: ast.Module) -> list:
    """Import what the test file imports (except the learner's module); return (name, object) it will bind."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "submission":
                    continue
                importlib.import_module(alias.name)
                bound = alias.asname or alias.name.split(".")[0]
                out.append((bound, sys.modules[alias.name if alias.asname else alias.name.split(".")[0]]))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "submission":
                continue
            mod = importlib.import_module(node.module)
            for alias in node.names:
                value = getattr(mod, alias.name, _missing)
                if value is _missing:
                    value = importlib.import_module(f"{node.module}.{alias.name}")
                out.append((alias.asname or alias.name, value))
    return out


def _fingerprint() -> list:
    """References to what the checks rely on, compared after the learner's import and after each test.

    builtins and math entirely; in the course package, every function (with its code and defaults) and class;
    torch.Tensor's methods.  torch's own module dict is left out: importing torch submodules legitimately
    rebinds some of its names.
    """
    watched = []

    def watch_function(label, fn):
        for attr in ("__code__", "__defaults__", "__kwdefaults__"):
            watched.append((f"{label}.{attr}", lambda f=fn, a=attr: getattr(f, a), getattr(fn, attr)))

    for mod in (builtins, math):
        d = vars(mod)
        watched.extend((f"{mod.__name__}.{k}", lambda d=d, k=k: d.get(k, _missing), v) for k, v in list(d.items()))
    for name, mod in list(sys.modules.items()):
        if name != "course" and not name.startswith("course.") or mod is None:
            continue
        d = vars(mod)
        for key, value in list(d.items()):
            if type(value) is types.FunctionType or isinstance(value, type):
                watched.append((f"{name}.{key}", lambda d=d, k=key: d.get(k, _missing), value))
            if type(value) is types.FunctionType:
                watch_function(f"{name}.{key}", value)
    if "torch" in sys.modules:
        tensor = vars(sys.modules["torch"].Tensor)
        watched += [(f"torch.Tensor.{k}", lambda k=k: tensor.get(k, _missing), v) for k, v in list(tensor.items())]
    return watched


def _changed(watched, bindings, namespace) -> list:
    out = [label for label, lookup, value in watched if lookup() is not value]
    out += [name for name, value in bindings if namespace.get(name, _missing) is not value]
    return out


def _classify(e: BaseException, submission_path: str, at_import: bool) -> tuple[str, str]:
    where = "import 时 (at import)" if at_import else "运行时 (at run time)"
    if isinstance(e, SystemExit):
        return "crashed", f"提交的代码在 {where} 调用了 sys.exit({_safe(lambda: e.code)})：进程不能提前退出 (exit)。"
    if isinstance(e, KeyboardInterrupt):
        return "crashed", f"提交的代码在 {where} 被中断 (KeyboardInterrupt)。"
    if isinstance(e, AssertionError) and not at_import:
        message = _safe(lambda: str(e)) or "断言失败 (assertion failed)"
        return "failed", message[:OUTPUT_LIMIT]
    if isinstance(e, NotImplementedError):
        return "error", "还没有实现 (NotImplementedError)：把 starter 里的 raise NotImplementedError 换成你的代码。" + \
            _learner_frames(e, submission_path)
    kind = _safe(lambda: type(e).__name__)
    return "error", f"{kind}: {_safe(lambda: str(e))[:OUTPUT_LIMIT]}{_learner_frames(e, submission_path)}"


def _learner_frames(e: BaseException, submission_path: str) -> str:
    """The traceback's frames inside the learner's file only (never the test's source)."""
    try:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == submission_path]
    except Exception:  # noqa: BLE001
        return ""
    if not frames:
        return ""
    lines = [f"  submission.py, line {f.lineno}, in {f.name}: {(f.line or '').strip()}" for f in frames[-5:]]
    return "\n  Traceback (你的代码 / your code):\n" + "\n".join(lines)


def _safe(fn) -> str:
    try:
        return str(fn())
    except BaseException:  # noqa: BLE001  (a learner's __str__ may raise anything)
        return "?"


if __name__ == "__main__":
    main()
