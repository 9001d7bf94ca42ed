"""Checks the exercise tests use (practice/problems/*/test_*.py, and the nbgrader cells made from them).

A test imports these names BEFORE it imports the learner's code, so every primitive used here is bound
before learner code runs: replacing ``math.isclose``, ``numpy.testing`` or ``pytest.approx`` afterwards changes
nothing.  Values are compared by exact type first, so an object that claims to equal everything (a custom
``__eq__``, a subclass of int) fails instead of passing.  Failure messages come in the course's language
(``course.i18n``: Chinese with English terms, or English) and never call the learner's ``__repr__``/``__eq__``.
"""

from __future__ import annotations

import builtins
import math
import os
import sys
import types

from course.i18n import tr

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
        s = tr(f"<{_type_name(t)} 对象 (object)>", f"<{_type_name(t)} object>")
    return s if _len(s) <= limit else s[:limit] + "..."


def _type_name(t) -> str:
    name = t.__dict__.get("__qualname__") if _type(t.__dict__) is dict else None
    return name if _type(name) is str else builtins.type.__dict__["__qualname__"].__get__(t)


def _first_difference(got, exp, path: str, rel: float, abs_tol: float) -> str | None:
    """Where ``got`` differs from the trusted ``exp`` (types compared exactly), or None."""
    te, tg = _type(exp), _type(got)
    if te is float:
        if tg not in (float, int):
            return tr(f"{path}: 期望 float，得到 {_type_name(tg)}", f"{path}: expected a float, got {_type_name(tg)}")
        if _isnan(exp):
            return None if tg is float and _isnan(got) else tr(f"{path}: 期望 nan，得到 {show(got)}",
                                                                f"{path}: expected nan, got {show(got)}")
        if tg is float and _isnan(got) or not _isclose(float(got), exp, rel_tol=rel, abs_tol=abs_tol):
            return _expected_got(path, exp, got)
        return None
    if tg is not te:
        return tr(f"{path}: 期望类型 (expected type) {_type_name(te)}，得到 {_type_name(tg)}",
                  f"{path}: expected type {_type_name(te)}, got {_type_name(tg)}")
    if te in (list, tuple):
        if _len(got) != _len(exp):
            return tr(f"{path}: 期望长度 (length) {_len(exp)}，得到 {_len(got)}",
                      f"{path}: expected length {_len(exp)}, got {_len(got)}")
        for i in _range(_len(exp)):
            d = _first_difference(got[i], exp[i], f"{path}[{i}]", rel, abs_tol)
            if d:
                return d
        return None
    if te is dict:
        gk, ek = list(dict.keys(got)), list(dict.keys(exp))
        bad = [k for k in gk if _type(k) not in _SCALARS]
        if bad:
            return tr(f"{path}: 键 (key) 的类型不对：{_type_name(_type(bad[0]))}",
                      f"{path}: a key of the wrong type: {_type_name(_type(bad[0]))}")
        if set(gk) != set(ek):
            missing = _sorted(set(ek) - set(gk), key=_repr)[:5]
            extra = _sorted(set(gk) - set(ek), key=_repr)[:5]
            return tr(f"{path}: 键 (keys) 不对：缺少 (missing) {missing}，多出 (extra) {extra}",
                      f"{path}: wrong keys: missing {missing}, extra {extra}")
        for k in ek:
            d = _first_difference(dict.__getitem__(got, k), exp[k], f"{path}[{k!r}]", rel, abs_tol)
            if d:
                return d
        return None
    if te in _SCALARS:
        return None if got == exp else _expected_got(path, exp, got)
    raise TypeError(f"assert_equal cannot compare expected values of type {_type_name(te)}")


def _expected_got(path: str, exp, got) -> str:
    return tr(f"{path}: 期望 (expected) {exp!r}，得到 (got) {show(got)}", f"{path}: expected {exp!r}, got {show(got)}")


def _hint(hint: str) -> str:
    """The hint line that ends a failure message ("" without a hint)."""
    return tr(f"\n  提示 (hint): {hint}", f"\n  hint: {hint}") if hint else ""


def assert_equal(got, expected, what: str | None = None, hint: str = "", *,
                 rel: float = 1e-9, abs_tol: float = 1e-9) -> None:
    """Exact types and values (floats within ``rel``/``abs_tol``), recursing through list, tuple and dict."""
    what = tr("返回值 (return value)", "the return value") if what is None else what
    d = _first_difference(got, expected, what, rel, abs_tol)
    if d:
        full = (d + tr(f"\n  完整期望 (expected): {show(expected, 600)}",
                       f"\n  expected in full: {show(expected, 600)}")
                if d.split(":")[0] != what else d)
        raise CheckFailed(full + _hint(hint))


def assert_close(got, expected: float, what: str | None = None, hint: str = "", *,
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
        raise CheckFailed(tr(f"{call} 应该抛出 (should raise) {exc_type.__name__}，却抛出了 {_type_name(_type(e))}",
                             f"{call} should raise {exc_type.__name__}, but raised {_type_name(_type(e))}")
                          + _hint(hint)) from e
    raise CheckFailed(tr(f"{call} 应该抛出 (should raise) {exc_type.__name__}，却正常返回了 (returned normally)",
                         f"{call} should raise {exc_type.__name__}, but returned normally") + _hint(hint))


# ---- the boundary to the learner's process (practice/checker.py) -------------------------------------------------

class Remote:
    """Base of the judge's stand-ins for a learner's function that lives in another process (practice/checker.py).

    ``not_using(modules, names)`` runs the static analysis there; ``run_with(runner, args)`` calls the library
    function ``runner`` there with the learner's function as its first argument.  Both return plain data.
    """

    def not_using(self, modules: tuple, names: tuple):
        raise NotImplementedError

    def run_with(self, runner: str, args: tuple):
        raise NotImplementedError


def in_learner(runner: str, func, *args):
    """``runner(func, *args)`` where the learner's code lives, for a check that must run the learner's code in
    several processes (live-1f1b).  ``runner`` is ``"course.module:function"``; its result must be plain data
    (practice/wire.py).  In the judge ``func`` is a Remote and this runs in the learner's process; in a notebook it
    runs here."""
    if isinstance(func, Remote):
        return func.run_with(runner, args)
    import importlib
    module, _, name = runner.partition(":")
    return getattr(importlib.import_module(module), name)(func, *args)


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


def assert_tensor_close(got, expected, what: str | None = None, hint: str = "", *,
                        atol: float = 1e-6, rtol: float = 1e-5) -> None:
    """A torch.Tensor (exact type) with the expected shape and dtype, elementwise within atol + rtol*|expected|."""
    T = _torch_primitives()
    what = tr("张量 (tensor)", "the tensor") if what is None else what
    suffix = _hint(hint)
    if _type(got) is not T["Tensor"]:
        raise CheckFailed(tr(f"{what}: 期望 torch.Tensor，得到 {_type_name(_type(got))}",
                             f"{what}: expected a torch.Tensor, got {_type_name(_type(got))}") + suffix)
    gs, es = tuple(T["shape"](got)), tuple(T["shape"](expected))
    if gs != es:
        raise CheckFailed(tr(f"{what}: 期望形状 (shape) {es}，得到 {gs}",
                             f"{what}: expected shape {es}, got {gs}") + suffix)
    if T["dtype"](got) is not T["dtype"](expected):
        raise CheckFailed(tr(f"{what}: 期望 dtype {T['dtype'](expected)}，得到 {T['dtype'](got)}",
                             f"{what}: expected dtype {T['dtype'](expected)}, got {T['dtype'](got)}") + suffix)
    if gs and 0 in gs:
        return
    g, e = got.detach(), expected.detach()
    diff = T["abs"](T["sub"](g, e))
    tol = atol + rtol * T["item"](T["amax"](T["abs"](e)))
    worst = T["item"](T["amax"](diff))
    if not T["item"](T["all"](T["isfinite"](g))) or not worst <= tol:
        raise CheckFailed(tr(f"{what}: 最大误差 (max abs error) {worst:.3g} 超过容差 (tolerance) {tol:.3g}",
                             f"{what}: the largest error {worst:.3g} exceeds the tolerance {tol:.3g}") + suffix)


# ---- "don't call the library that already does the whole job" ---------------------------------------------------

def assert_not_using(func, *modules: str, names: tuple[str, ...] = ()) -> None:
    """Fail when ``func`` (or a helper it calls from the same namespace) uses one of ``modules`` or one of ``names``.

    Static: follows the names the code refers to (co_names, nested code objects) through ``func.__globals__``.
    Works for a module ``submission`` and for a notebook cell alike.  For the judge's stand-in of a learner's
    function (a ``Remote``) the analysis runs in the learner's process, where the function lives; there the
    judge also makes the functions of ``modules`` raise while the learner's code runs.
    """
    message = func.not_using(modules, names) if isinstance(func, Remote) else not_using_message(func, *modules,
                                                                                                 names=names)
    if message is not None:
        raise CheckFailed(message if _type(message) is str else "assert_not_using: malformed answer")


def not_using_message(func, *modules: str, names: tuple[str, ...] = ()) -> str | None:
    """What ``assert_not_using`` would fail with, or None (runs where ``func`` lives)."""
    try:
        _not_using(func, modules, names)
    except CheckFailed as e:
        return str(e)
    return None


def _unwrap(obj, limit: int = 100):
    """The function under decorators that keep it as ``__wrapped__`` (functools.wraps, lru_cache, cache)."""
    while limit and _type(obj) is not _FunctionType and _type(obj) is not builtins.type:
        inner = getattr(obj, "__wrapped__", None) if not isinstance(obj, _ModuleType) else None
        if inner is None:
            break
        obj, limit = inner, limit - 1
    return obj


def _not_using(func, modules: tuple[str, ...], names: tuple[str, ...]) -> None:
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
                    raise CheckFailed(tr(f"{where} 导入了 {n}：本题要求自己实现，不能调用 (must not use) {m}",
                                         f"{where} imports {n}: this exercise is to be done by hand, without {m}"))
            if n in names:
                raise CheckFailed(tr(f"{where} 用到了 {n}：本题要求自己实现 (must not use {n})",
                                     f"{where} uses {n}: this exercise is to be done by hand, without {n}"))
            if n in g:
                inspect_value(n, g[n], g, where)
        for c in code.co_consts:
            if _type(c) is _CodeType:
                visit(c, g, where)

    def inspect_value(n, obj, g, where: str) -> None:
        obj = _unwrap(obj)
        bad = forbidden(obj)
        if bad:
            raise CheckFailed(tr(f"{where} 用到了 {n} (来自 {bad})：本题要求自己实现，不能调用 (must not use) "
                                 f"{', '.join(modules)}", f"{where} uses {n} (from {bad}): this exercise is to be "
                                 f"done by hand, without {', '.join(modules)}"))
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

    func = _unwrap(func)
    if _type(func) is builtins.type:
        for v in vars(func).values():
            if _type(v) is _FunctionType:
                visit_function(v, f"{func.__name__}.{v.__name__}()")
        return
    if _type(func) is not _FunctionType:
        raise CheckFailed(tr(f"期望一个 Python 函数 (function)，得到 {_type_name(_type(func))}",
                             f"expected a Python function, got {_type_name(_type(func))}"))
    visit_function(func, f"{func.__name__}()")
