"""course.checks: the comparisons exercise tests rely on (exact types, no learner code in messages)."""

import math

import pytest
import torch

from course.checks import (
    CheckFailed,
    assert_close,
    assert_equal,
    assert_not_using,
    assert_raises,
    assert_tensor_close,
    fresh_seed,
    show,
)


class Anything:
    def __eq__(self, other):
        return True

    def __repr__(self):
        raise RuntimeError("a check must never call the learner's __repr__")


class SneakyInt(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


def test_equal_values_pass():
    assert_equal([("F0", 1), {"a": 1.0}], [("F0", 1), {"a": 1.0 + 1e-12}])
    assert_close(1, 1.0)


@pytest.mark.parametrize("got, expected", [
    (Anything(), 3), (SneakyInt(4), 3), (True, 1), (1, True), ("1", 1), ([1, 2], (1, 2)), ((1,), [1]),
    ([1, 2, 3], [1, 2]), ({"a": 1}, {"b": 1}), ([Anything()], [1]), (float("nan"), 1.0), (0.5, 0.25), (None, 0.0),
])
def test_wrong_types_and_values_fail(got, expected):
    with pytest.raises(CheckFailed) as info:
        assert_equal(got, expected, "x")
    assert "x" in str(info.value)


def test_messages_never_run_learner_code():
    assert "Anything" in show(Anything())
    with pytest.raises(CheckFailed, match="Anything"):
        assert_equal([Anything()], [1.0])


def test_checks_keep_the_originals_when_math_is_patched(monkeypatch):
    monkeypatch.setattr(math, "isclose", lambda *a, **k: True)
    with pytest.raises(CheckFailed):
        assert_close(0.123, 0.5)


def test_assert_raises():
    assert isinstance(assert_raises(ValueError, int, "x"), ValueError)
    with pytest.raises(CheckFailed, match="returned normally"):
        assert_raises(ValueError, int, "3")
    with pytest.raises(CheckFailed, match="ZeroDivisionError"):
        assert_raises(ValueError, lambda: 1 / 0)


def test_tensors_compare_type_shape_dtype_and_values():
    a = torch.arange(6.0).reshape(2, 3)
    assert_tensor_close(a.clone(), a)
    for bad, why in [(a.double(), "dtype"), (a.reshape(3, 2), "shape"), (a + 1e-3, "max abs error"),
                     (a.tolist(), "torch.Tensor"), (a * float("nan"), "max abs error")]:
        with pytest.raises(CheckFailed, match=why):
            assert_tensor_close(bad, a)


def _helper():
    import course.sim
    return course.sim


def test_not_using_follows_helpers_and_imports():
    from course.schedules import build

    def direct(p, m):
        return build("1f1b", p, m)

    def via_helper():
        return _helper()

    def clean(x):
        return sorted(x)

    with pytest.raises(CheckFailed, match="course"):
        assert_not_using(direct, "course")
    with pytest.raises(CheckFailed, match="course"):
        assert_not_using(via_helper, "course")
    assert_not_using(clean, "course")
    with pytest.raises(CheckFailed, match="backward"):
        assert_not_using(lambda t: t.backward(), "torch.autograd", names=("backward",))


def test_fresh_seeds_differ():
    assert len({fresh_seed() for _ in range(20)}) > 1


def test_in_learner_runs_in_place_for_a_real_function():
    from course.checks import in_learner
    assert in_learner("course.checks:show", [1, 2]) == "[1, 2]"   # runner(func, *args) with func = [1, 2]


def test_not_using_asks_a_remote_function_where_it_lives():
    from course.checks import Remote

    class Stub(Remote):
        def __init__(self, answer):
            self.answer, self.asked = answer, None

        def not_using(self, modules, names):
            self.asked = (modules, names)
            return self.answer

    ok, bad = Stub(None), Stub("f() 用到了 build (来自 course.schedules)")
    assert_not_using(ok, "course", names=("grad",))
    assert ok.asked == (("course",), ("grad",))
    with pytest.raises(CheckFailed, match="course.schedules"):
        assert_not_using(bad, "course")


def test_wire_round_trips_exactly_and_refuses_what_cannot_cross():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from course.schedules import build
    from practice import wire

    values = [0.1, -0.0, float("inf"), (1, [2, (3,)]), {1: "a", (2, 3): None}, torch.arange(6.0).reshape(2, 3),
              torch.zeros(0, 2, dtype=torch.int64), torch.float64]
    for v in values:
        back = wire.decode(wire.encode(v))
        assert type(back) is type(v)
        assert torch.equal(back, v) if isinstance(v, torch.Tensor) else repr(back) == repr(v)
    plan = build("dualpipev", 2, 4)
    assert wire.decode(wire.encode(plan)).format() == plan.format()
    assert type(wire.decode(wire.encode(torch.nn.Parameter(torch.ones(1))))) is wire.Opaque
    with pytest.raises(wire.WireError):
        wire.encode(lambda: 1, strict=True)
    for bad in ({"$tensor": ["float32", [2], "AAAA"]}, {"$nope": 1}, {"a": 1, "b": 2}, {"$dict": [[[1], 2]]}):
        with pytest.raises(wire.WireError):
            wire.decode(bad)
