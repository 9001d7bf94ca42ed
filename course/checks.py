"""Checks the exercise tests use (practice/problems/*/test_*.py, and the nbgrader cells made from them).

A test imports these names BEFORE it imports the learner's code, so every primitive used here is bound
before learner code runs: replacing ``math.isclose``, ``numpy.testing`` or ``pytest.approx`` afterwards changes
nothing.  Values are compared by exact type first, so an object that claims to equal everything (a custom
``__eq__``, a subclass of int) fails instead of passing.  Failure messages are Chinese with English terms and
never call the learner's ``__repr__``/``__eq__``.
"""

from __future__ import annotations

import builtins
import math
import os
import sys
import types

# Primitives captured at import time (before any learner code can patch them).
_isclose, _isnan = math.isclose, math.isnan
_type, _len, _repr, _range, _zip = builtins.type, builtins.len, builtins.repr, builtins.range, builtins.zip
_sorted, _urandom, _int_from_bytes = builtins.sorted, os.urandom, int.from_bytes
_FunctionType, _CodeType, _ModuleType = types.FunctionType, types.CodeType, types.ModuleType
_SCALARS = (int, float, str, bool, type(None))


class CheckFailed(AssertionError):
    """A check found a wrong answer; the message says what was expected and what came back."""


def fresh_seed() -> int:
    """A seed drawn from the OS for randomised cases: a fresh one every run.  Put it in failure messages."""
    return _int_from_bytes(_urandom(4), "big")


def show(x, limit: int = 300) -> str:
    """A short description of a value that never runs learner code (no learner __repr__)."""
    t = _type(x)
    if t in _SCALARS:
        s = _repr(x)
    elif t in (list, tuple):
        inner = ", ".join(show(v, limit) for v in x[:20]) + (", ..." if _len(x) > 20 else "")
        s = f"[{inner}]" if t is list else f"({inner}{',' if _len(x) == 1 else ''})"
    elif t is dict:
        items = list(dict.items(x))[:20]
        s = "{" + ", ".join(f"{show(k)}: {show(v)}" for k, v in items) + (", ..." if _len(x) > 20 else "") + "}"
    else:
        s = f"<{_type_name(t)} 对象 (object)>"
    return s if _len(s) <= limit else s[:limit] + "..."


def _type_name(t) -> str:
    name = t.__dict__.get("__qualname__") if _type(t.__dict__) is dict else None
    return name if _type(name) is str else builtins.type.__dict__["__qualname__"].__get__(t)


def _first_difference(got, exp, path: str, rel: float, abs_tol: float) -> str | None:
    """Where ``got`` differs from the trusted ``exp`` (types compared exactly), or None."""
    te, tg = _type(exp), _type(got)
    if te is float:
        if tg not in (float, int):
            return f"{path}: 期望 float，得到 {_type_name(tg)}"
        if _isnan(exp):
            return None if tg is float and _isnan(got) else f"{path}: 期望 nan，得到 {show(got)}"
        if tg is float and _isnan(got) or not _isclose(float(got), exp, rel_tol=rel, abs_tol=abs_tol):
            return f"{path}: 期望 (expected) {exp!r}，得到 (got) {show(got)}"
        return None
    if tg is not te:
        return f"{path}: 期望类型 (expected type) {_type_name(te)}，得到 {_type_name(tg)}"
    if te in (list, tuple):
        if _len(got) != _len(exp):
            return f"{path}: 期望长度 (length) {_len(exp)}，得到 {_len(got)}"
        for i in _range(_len(exp)):
            d = _first_difference(got[i], exp[i], f"{path}[{i}]", rel, abs_tol)
            if d:
                return d
        return None
    if te is dict:
        gk, ek = list(dict.keys(got)), list(dict.keys(exp))
        bad = [k for k in gk if _type(k) not in _SCALARS]
        if bad:
            return f"{path}: 键 (key) 的类型不对：{_type_name(_type(bad[0]))}"
        if set(gk) != set(ek):
            missing = _sorted(set(ek) - set(gk), key=_repr)[:5]
            extra = _sorted(set(gk) - set(ek), key=_repr)[:5]
            return f"{path}: 键 (keys) 不对：缺少 (missing) {missing}，多出 (extra) {extra}"
        for k in ek:
            d = _first_difference(dict.__getitem__(got, k), exp[k], f"{path}[{k!r}]", rel, abs_tol)
            if d:
                return d
        return None
    if te in _SCALARS:
        return None if got == exp else f"{path}: 期望 (expected) {exp!r}，得到 (got) {show(got)}"
    raise TypeError(f"assert_equal cannot compare expected values of type {_type_name(te)}")


def assert_equal(got, expected, what: str = "返回值 (return value)", hint: str = "", *,
                 rel: float = 1e-9, abs_tol: float = 1e-9) -> None:
    """Exact types and values (floats within ``rel``/``abs_tol``), recursing through list, tuple and dict."""
    d = _first_difference(got, expected, what, rel, abs_tol)
    if d:
        full = f"{d}\n  完整期望 (expected): {show(expected, 600)}" if d.split(":")[0] != what else d
        raise CheckFailed(full + (f"\n  提示 (hint): {hint}" if hint else ""))


def assert_close(got, expected: float, what: str = "返回值 (return value)", hint: str = "", *,
                 rel: float = 1e-9, abs_tol: float = 1e-9) -> None:
    """One number: an int or float (not bool, not a subclass) close to ``expected``."""
    assert_equal(got, float(expected), what, hint, rel=rel, abs_tol=abs_tol)


def assert_true(condition: bool, message: str) -> None:
    if condition is not True:
        raise CheckFailed(message)


def assert_raises(exc_type: type, fn, *args, what: str = "", hint: str = "", **kwargs) -> BaseException:
    """``fn(*args, **kwargs)`` must raise ``exc_type`` (or a subclass); returns the exception."""
    call = what or f"{getattr(fn, '__name__', 'f')}{show(args)}"
    try:
        fn(*args, **kwargs)
    except exc_type as e:
        return e
    except Exception as e:
        raise CheckFailed(f"{call} 应该抛出 (should raise) {exc_type.__name__}，却抛出了 {_type_name(_type(e))}"
                          + (f"\n  提示 (hint): {hint}" if hint else "")) from e
    raise CheckFailed(f"{call} 应该抛出 (should raise) {exc_type.__name__}，却正常返回了 (returned normally)"
                      + (f"\n  提示 (hint): {hint}" if hint else ""))


# ---- tensors (torch is imported by the caller before the learner's code; we only look it up) ------------------

_TORCH: dict = {}


def _torch_primitives() -> dict:
    """torch's comparison primitives, captured the first time a tensor is checked (torch imported by the test)."""
    if not _TORCH:
        torch = sys.modules["torch"]
        _TORCH.update(Tensor=torch.Tensor, sub=torch.sub, abs=torch.abs, amax=torch.amax, isfinite=torch.isfinite,
                      all=torch.all, item=torch.Tensor.item, shape=torch.Tensor.shape.__get__,
                      dtype=torch.Tensor.dtype.__get__)
    return _TORCH


if "torch" in sys.modules:  # captured now when the test imported torch first (the usual order)
    _torch_primitives()


def assert_tensor_close(got, expected, what: str = "张量 (tensor)", hint: str = "", *,
                        atol: float = 1e-6, rtol: float = 1e-5) -> None:
    """A torch.Tensor (exact type) with the expected shape and dtype, elementwise within atol + rtol*|expected|."""
    T = _torch_primitives()
    suffix = f"\n  提示 (hint): {hint}" if hint else ""
    if _type(got) is not T["Tensor"]:
        raise CheckFailed(f"{what}: 期望 torch.Tensor，得到 {_type_name(_type(got))}{suffix}")
    gs, es = tuple(T["shape"](got)), tuple(T["shape"](expected))
    if gs != es:
        raise CheckFailed(f"{what}: 期望形状 (shape) {es}，得到 {gs}{suffix}")
    if T["dtype"](got) is not T["dtype"](expected):
        raise CheckFailed(f"{what}: 期望 dtype {T['dtype'](expected)}，得到 {T['dtype'](got)}{suffix}")
    if gs and 0 in gs:
        return
    g, e = got.detach(), expected.detach()
    diff = T["abs"](T["sub"](g, e))
    tol = atol + rtol * T["item"](T["amax"](T["abs"](e)))
    worst = T["item"](T["amax"](diff))
    if not T["item"](T["all"](T["isfinite"](g))) or not worst <= tol:
        raise CheckFailed(f"{what}: 最大误差 (max abs error) {worst:.3g} 超过容差 (tolerance) {tol:.3g}{suffix}")


# ---- "don't call the library that already does the whole job" ---------------------------------------------------

def assert_not_using(func, *modules: str, names: tuple[str, ...] = ()) -> None:
    """Fail when ``func`` (or a helper it calls from the same namespace) uses one of ``modules`` or one of ``names``.

    Static: follows the names the code refers to (co_names, nested code objects) through ``func.__globals__``.
    Works for a module ``submission`` and for a notebook cell alike.
    """
    seen: set = set()

    def forbidden(obj) -> str | None:
        mod = obj.__name__ if _type(obj) is _ModuleType else getattr(obj, "__module__", None)
        if _type(mod) is str:
            for m in modules:
                if mod == m or mod.startswith(m + "."):
                    return mod
        return None

    def visit(code, g, where: str) -> None:
        if id(code) in seen:
            return
        seen.add(id(code))
        for n in code.co_names:
            for m in modules:
                if n == m or n.startswith(m + "."):
                    raise CheckFailed(f"{where} 导入了 {n}：本题要求自己实现，不能调用 (must not use) {m}")
            if n in names:
                raise CheckFailed(f"{where} 用到了 {n}：本题要求自己实现 (must not use {n})")
            if n in g:
                inspect_value(n, g[n], g, where)
        for c in code.co_consts:
            if _type(c) is _CodeType:
                visit(c, g, where)

    def inspect_value(n, obj, g, where: str) -> None:
        bad = forbidden(obj)
        if bad:
            raise CheckFailed(f"{where} 用到了 {n} (来自 {bad})：本题要求自己实现，不能调用 (must not use) "
                              f"{', '.join(modules)}")
        if _type(obj) is _FunctionType and obj.__globals__ is g:
            visit_function(obj, f"{obj.__name__}()")
        elif _type(obj) is builtins.type:
            for v in vars(obj).values():
                if _type(v) is _FunctionType and v.__globals__ is g:
                    visit_function(v, f"{obj.__name__}.{v.__name__}()")

    def visit_function(fn, where: str) -> None:
        for name, cell in _zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                inspect_value(name, cell.cell_contents, fn.__globals__, where)
            except ValueError:   # an empty cell
                pass
        visit(fn.__code__, fn.__globals__, where)

    if _type(func) is builtins.type:
        for v in vars(func).values():
            if _type(v) is _FunctionType:
                visit_function(v, f"{func.__name__}.{v.__name__}()")
        return
    if _type(func) is not _FunctionType:
        raise CheckFailed(f"期望一个 Python 函数 (function)，得到 {_type_name(_type(func))}")
    visit_function(func, f"{func.__name__}()")


# ---- live jobs: several gloo processes -------------------------------------------------------------------------

class LearnerError(RuntimeError):
    """An exception raised inside the learner's code in a worker process (its traceback is in the message)."""


def run_workers(target, world_size: int, args: tuple = (), timeout: float = 20.0) -> list:
    """Run ``target(rank, world_size, *args)`` on ``world_size`` gloo processes; return each rank's return value.

    Uses the course's launcher (``course.live.launch``: warm zygote, deadlock detection within seconds) when every
    function involved is importable; functions defined in a notebook cell (``__main__``) cannot reach its workers,
    so those jobs are forked from this process instead.  A deadlock or a job slower than ``timeout`` fails the
    check with a clear message and no worker survives; a worker exception becomes a LearnerError with its traceback.
    """
    if _all_importable((target,) + tuple(args)):
        from course.live import launcher  # noqa: PLC0415  (torch only when a live check runs)
        try:
            return launcher.launch(target, world_size, args, timeout, echo=False)
        except launcher.JobTimeout as e:
            kind = "死锁 (deadlock)" if _type(e) is launcher.DeadlockDetected else f"超时 (timeout, {timeout:g} s)"
            raise CheckFailed(f"{kind}：作业没有完成，已终止所有进程 (killed)。各 rank 当时在做什么：\n{e}\n" + _DEADLOCK_HINT) \
                from None
        except launcher.WorkerError as e:
            raise LearnerError(str(e)[-3000:]) from None
    return _fork_workers(target, world_size, args, timeout)


_DEADLOCK_HINT = ("  提示 (hint): 每个 send 都要有对应的 recv；两个进程都先做阻塞的 (blocking) send 或 recv 会互相等待。"
                  "发送用 dist.isend，在这一步结束前 wait()。")


def _all_importable(objs) -> bool:
    return all(getattr(o, "__module__", None) not in (None, "__main__") and "<locals>" not in o.__qualname__
               for o in objs if callable(o))


def _fork_workers(target, world_size: int, args: tuple, timeout: float) -> list:
    """Fork ``world_size`` workers from this process (works for notebook-defined functions)."""
    import pickle
    import tempfile
    import multiprocessing
    from multiprocessing.connection import wait

    # torch imports this lazily on the first backward(gradient) (~2 s): once here, not once per forked worker.
    import torch.fx.experimental.symbolic_shapes  # noqa: F401
    ctx = multiprocessing.get_context("fork")
    store = tempfile.mkdtemp(prefix="pp-gloo-")
    conns, procs = [], []
    for rank in _range(world_size):
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_worker, args=(target, rank, world_size, args, store, timeout, send), daemon=True)
        proc.start()
        send.close()
        conns.append(recv)
        procs.append(proc)
    results: dict = {}
    deadline = _monotonic() + timeout
    try:
        while _len(results) < world_size:
            left = deadline - _monotonic()
            ready = wait([c for r, c in enumerate(conns) if r not in results], timeout=max(left, 0))
            if not ready:
                waiting = [r for r in _range(world_size) if r not in results]
                raise CheckFailed(f"死锁 (deadlock) 或太慢：rank {waiting} 在 {timeout:g} 秒内没有完成，"
                                  f"已终止所有进程 (killed)。\n{_DEADLOCK_HINT}")
            for c in ready:
                rank = conns.index(c)
                try:
                    status, payload = pickle.loads(c.recv_bytes())
                except (EOFError, OSError):
                    procs[rank].join(2)
                    raise LearnerError(f"rank {rank} 的进程退出了 (exited, code {procs[rank].exitcode})，没有返回结果")
                if status == "error":
                    raise LearnerError(f"rank {rank} 出错 (raised):\n{payload}")
                results[rank] = payload
        return [results[r] for r in _range(world_size)]
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.kill()
            proc.join(5)
        for c in conns:
            c.close()
        import shutil
        shutil.rmtree(store, ignore_errors=True)


def _worker(target, rank, world_size, args, store, timeout, conn) -> None:
    import pickle
    import traceback
    from datetime import timedelta
    try:
        import torch
        import torch.distributed as dist
        torch.set_num_threads(1)
        dist.init_process_group("gloo", init_method=f"file://{store}/store", rank=rank, world_size=world_size,
                                timeout=timedelta(seconds=timeout + 30))
        try:
            out = ("ok", target(rank, world_size, *args))
        finally:
            dist.destroy_process_group()
    except BaseException as e:  # noqa: BLE001  (everything goes back to the parent)
        out = ("error", "".join(traceback.format_exception(_type(e), e, e.__traceback__, limit=-6))[-3000:])
    conn.send_bytes(pickle.dumps(out))
    conn.close()
    os._exit(0)   # skip atexit handlers inherited from the forking parent


from time import monotonic as _monotonic  # noqa: E402


# ---- the live 1F1B exercise: a learner's per-stage step against a single-process reference ----------------------

def check_pipeline_step(train_step, world_size: int, m: int, seed: int, timeout: float = 30.0,
                        hidden: int = 8, rows: int = 3) -> None:
    """Run ``train_step`` on ``world_size`` gloo processes (one Linear+Tanh stage each) and check it.

    Checks, per rank: the parameter gradients equal a single-process reference of the whole model (the batch
    loss is the mean over micro-batches, so each micro-batch's loss is scaled by 1/m); the order of forwards and
    backwards is 1F1B's; the last rank returns the batch loss.  A deadlock fails fast, after ``timeout``.
    """
    out = run_workers(_pipeline_worker, world_size, (train_step, m, seed, hidden, rows), timeout)
    what = f"p={world_size}, m={m}, seed={seed}"
    ref_grads, ref_loss = out[0]["reference"]
    for rank, res in enumerate(out):
        warm = min(world_size - rank - 1, m)
        order = ["F"] * warm + ["F", "B"] * (m - warm) + ["B"] * warm
        if res["log"] != order:
            raise CheckFailed(f"rank {rank} 的执行顺序不是 1F1B ({what})：期望 (expected) {''.join(order)}，"
                              f"得到 (got) {''.join(res['log'])}\n  提示 (hint): rank r 先做 min(p-r-1, m) 个 forward，"
                              "再一个 forward 一个 backward 交替，最后做完剩下的 backward")
        for k, (got, want) in enumerate(_zip(res["grads"], ref_grads[rank])):
            if got is None:
                raise CheckFailed(f"rank {rank} 的参数 {k} 没有梯度 (grad is None) ({what})：backward 没有做到这个 stage")
            hint = "loss 要除以 m (loss scaling)：整个 batch 的 loss 是各 micro-batch loss 的平均"
            ratio = _grad_ratio(got, want)
            assert_tensor_close(got, want, f"rank {rank} 参数 {k} 的梯度 (gradient) ({what})",
                                hint if ratio and _isclose(ratio, m, rel_tol=1e-3) else
                                "对照单进程的参考梯度：send/recv 的是不是对应的 micro-batch？梯度有没有传回上一个 stage？",
                                atol=1e-9, rtol=1e-7)
    last = out[-1]["loss"]
    if _type(last) is not float or not _isclose(last, ref_loss, rel_tol=1e-7, abs_tol=1e-12):
        raise CheckFailed(f"最后一个 rank 应返回整个 batch 的 loss (float) {ref_loss!r}，得到 {show(last)} ({what})")


def _grad_ratio(got, want):
    T = _torch_primitives()
    den = T["item"](T["amax"](T["abs"](want)))
    return T["item"](T["amax"](T["abs"](got))) / den if den else None


def _pipeline_problem(world_size: int, m: int, seed: int, hidden: int, rows: int):
    import torch
    gen = torch.Generator().manual_seed(seed)
    stages = []
    for _ in _range(world_size):
        lin = torch.nn.Linear(hidden, hidden, dtype=torch.float64)
        with torch.no_grad():
            lin.weight.copy_(torch.randn(hidden, hidden, generator=gen, dtype=torch.float64) / hidden ** 0.5)
            lin.bias.copy_(torch.randn(hidden, generator=gen, dtype=torch.float64) * 0.1)
        stages.append(torch.nn.Sequential(lin, torch.nn.Tanh()))
    inputs = [torch.randn(rows, hidden, generator=gen, dtype=torch.float64) for _ in _range(m)]
    targets = [torch.randn(rows, hidden, generator=gen, dtype=torch.float64) for _ in _range(m)]
    return stages, inputs, targets


def _pipeline_worker(rank, world_size, train_step, m, seed, hidden, rows):
    import torch
    stages, inputs, targets = _pipeline_problem(world_size, m, seed, hidden, rows)
    stage, log = stages[rank], []

    def on_forward(module, args, output):
        log.append("F")
        if output.requires_grad:
            output.register_hook(lambda grad: log.append("B"))

    stage.register_forward_hook(on_forward)
    loss = train_step(stage, rank, world_size, m, (rows, hidden), inputs if rank == 0 else None,
                      targets if rank == world_size - 1 else None, torch.nn.functional.mse_loss)
    result = {"log": log, "loss": loss if _type(loss) in (float, type(None)) else f"<{_type_name(_type(loss))}>",
              "grads": [None if q.grad is None else q.grad.detach().clone() for q in stage.parameters()]}
    if rank == 0:   # the single-process reference, computed here so the parent never runs torch before forking
        ref_stages, ref_inputs, ref_targets = _pipeline_problem(world_size, m, seed, hidden, rows)
        model = torch.nn.Sequential(*ref_stages)
        total = sum(torch.nn.functional.mse_loss(model(x), y) for x, y in _zip(ref_inputs, ref_targets)) / m
        total.backward()
        result["reference"] = ([[q.grad.detach().clone() for q in s.parameters()] for s in ref_stages],
                               total.item())
    return result
