"""Closed forms against the simulator: the issue's required facts, sweeps of (p, m, F, B, W) inside each formula's
assumptions, the assumptions' edges, and the published tables (where they agree with the simulator and where not)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from course.costs import Costs
from course.formulas import OutsideAssumptions, dualpipe_table, predict, published_bubble
from course.schedules import build
from course.sim import simulate

UNIT = Costs(f=1, b=1, w=1)
FAST = settings(max_examples=60, deadline=None)
times = st.sampled_from([0.25, 0.5, 1.0, 1.5, 2.0, 3.0])


def check(name, p, m, costs, v=None):
    """The closed form and the simulation agree on every metric."""
    pred = predict(name, p, m, costs, v=v)
    tl = simulate(build(name, p, m, v=v), costs)
    assert tl.makespan == pytest.approx(pred.makespan), "makespan"
    assert tl.idle == pytest.approx(list(pred.idle), abs=1e-9), "idle per rank"
    assert tl.busy == pytest.approx(list(pred.busy)), "busy per rank"
    assert tl.peak_activations == pytest.approx(list(pred.peak_activations)), "peak activations"
    assert tl.bubble_ratio == pytest.approx(pred.bubble_ratio, abs=1e-12), "bubble ratio"
    return pred, tl


# ---- the required facts (F = B = W = 1, p = 4, m = 8) ---------------------------------------------------

def test_1f1b_facts():
    pred, tl = check("1f1b", 4, 8, UNIT)
    assert tl.makespan == 33 and tl.idle[0] == 9 == (4 - 1) * (1 + 1 + 1)


def test_zb_h1_facts():
    pred, tl = check("zb-h1", 4, 8, UNIT)
    assert tl.makespan == 27 and tl.idle[0] == 3 == (4 - 1) * (1 + 1 - 1)
    assert max(tl.peak_activations) <= 4


def test_zb_h2_facts():
    pred, tl = check("zb-h2", 4, 8, UNIT)
    assert tl.makespan == 27 and tl.idle == [0, 0, 0, 0]
    assert max(tl.peak_activations) <= 2 * 4 - 1
    assert published_bubble("zb-h2", 4, UNIT) == 0 == (4 - 1) * (1 + 1 - 2 * 1)


def test_zbv_facts():
    pred, tl = check("zbv", 4, 8, UNIT)
    assert tl.makespan == 25.5 and tl.idle == [0, 0, 0, 0]
    # 25.5 is a lower bound: every rank works m(F+B+W) = 24 and the last one cannot start before 3 half-stage F's
    assert tl.makespan == max(tl.busy) + 3 * 0.5


def test_interleaved_facts():
    costs = Costs(f=1, b=1, w=1)          # F = 1, full backward B = b + w = 2
    pred, tl = check("interleaved", 4, 8, costs, v=2)
    assert Fraction(tl.bubble_ratio).limit_denominator(1000) == Fraction(3, 19) == Fraction(4 - 1, 2 * 8 + 4 - 1)


# ---- sweeps inside each formula's assumptions ---------------------------------------------------------------------

@FAST
@given(name=st.sampled_from(["gpipe", "1f1b"]), p=st.integers(1, 8), m=st.integers(1, 20), f=times, b=times, w=times)
def test_gpipe_and_1f1b_any_costs(name, p, m, f, b, w):
    check(name, p, m, Costs(f=f, b=b, w=w))


@FAST
@given(p=st.integers(1, 6), k=st.integers(1, 4), v=st.integers(2, 4), f=times, b=times, w=times)
def test_interleaved_any_costs(p, k, v, f, b, w):
    check("interleaved", p, k * p, Costs(f=f, b=b, w=w), v=v)


@FAST
@given(p=st.integers(1, 8), extra=st.integers(0, 12), f=times, b=times, w=times)
def test_zb_h1_any_costs(p, extra, f, b, w):
    check("zb-h1", p, p + extra, Costs(f=f, b=b, w=w))


@FAST
@given(p=st.integers(1, 8), extra=st.integers(0, 12), f=times, b=times, w=times)
def test_zb_h2_any_costs(p, extra, f, b, w):
    check("zb-h2", p, 2 * p - 1 + extra, Costs(f=f, b=b, w=w))


def test_zb_h2_has_no_idle_when_w_covers_the_backward():
    for costs in (UNIT, Costs(f=2, b=1, w=1.5), Costs(f=1, b=1, w=3)):
        assert predict("zb-h2", 5, 12, costs).idle == (0,) * 5


@FAST
@given(p=st.integers(1, 8), extra=st.integers(0, 12), t=times)
def test_zbv_equal_costs(p, extra, t):
    check("zbv", p, 2 * p + extra, Costs(f=t, b=t, w=t))


@FAST
@given(half=st.integers(1, 5), extra=st.integers(0, 6), t=times)
def test_dualpipe_equal_costs(half, extra, t):
    p = 2 * half
    check("dualpipe", p, 2 * p + 2 * extra, Costs(f=t, b=t, w=t))


@FAST
@given(p=st.integers(1, 8), extra=st.integers(0, 12), t=times)
def test_dualpipev_equal_costs(p, extra, t):
    check("dualpipev", p, 2 * p + extra, Costs(f=t, b=t, w=t))


# ---- the assumptions are real: just outside them the simulator differs ---------------------------------------------

@pytest.mark.parametrize("name, p, m, costs, why", [
    ("zb-h1", 4, 3, UNIT, "m >= p"),
    ("zb-h2", 4, 6, UNIT, "m >= 2p-1"),
    ("zbv", 4, 8, Costs(f=1, b=2, w=1), "F = B = W"),
    ("zbv", 4, 6, UNIT, "m >= 2p"),
    ("dualpipe", 4, 8, Costs(f=1, b=2, w=1), "F = B = W and overlap = 1"),
    ("dualpipev", 4, 8, Costs(overlap=0.5), "F = B = W and overlap = 1"),
])
def test_outside_the_assumptions_no_formula_is_claimed(name, p, m, costs, why):
    with pytest.raises(OutsideAssumptions, match=why.replace("+", r"\+")):
        predict(name, p, m, costs)


@pytest.mark.parametrize("name, m, costs", [
    ("zb-h1", 3, UNIT), ("zb-h2", 6, UNIT), ("zbv", 8, Costs(f=1, b=2, w=1)), ("zbv", 6, UNIT),
    ("dualpipe", 8, Costs(f=1, b=2, w=1))])
def test_the_formula_would_be_wrong_outside(monkeypatch, name, m, costs):
    """What the guard protects against: the formula with its checks switched off gets makespan or idle wrong."""
    from course import formulas
    monkeypatch.setattr(formulas, "_need", lambda *a, **k: None)
    pred, tl = predict(name, 4, m, costs), simulate(build(name, 4, m), costs)
    assert (tl.makespan, tl.idle) != (pytest.approx(pred.makespan), pytest.approx(list(pred.idle)))


def test_uneven_or_communicating_pipelines_have_no_closed_form():
    with pytest.raises(OutsideAssumptions, match="scalar f"):
        predict("1f1b", 2, 4, Costs(f=[1, 2]))
    with pytest.raises(OutsideAssumptions, match="comm = 0"):
        predict("1f1b", 2, 4, Costs(comm=0.1))
    with pytest.raises(ValueError, match="no closed form for 'nope'"):
        predict("nope", 2, 4)
    with pytest.raises(ValueError, match="m must be a positive integer"):
        predict("1f1b", 2, 0)
    with pytest.raises(ValueError, match="v >= 2"):
        predict("interleaved", 2, 4, v=1)
    with pytest.raises(ValueError, match="zb-h1 does not take v"):
        predict("zb-h1", 2, 4, v=2)
    assert predict("1f1b", 2, 4, Costs(mb_scale=[2, 2, 2, 2])).makespan == simulate(
        build("1f1b", 2, 4), Costs(mb_scale=[2, 2, 2, 2])).makespan


# ---- the published tables ---------------------------------------------------------------------------------------

def rect_bubble(name, p, m, costs):
    tl = simulate(build(name, p, m), costs)
    return max(tl.makespan - b for b in tl.busy)


@FAST
@given(p=st.integers(2, 8), extra=st.integers(0, 8), f=times, b=times, w=times)
def test_published_1f1b_and_zb1p_rows_match(p, extra, f, b, w):
    costs = Costs(f=f, b=b, w=w)
    assert rect_bubble("1f1b", p, p + extra, costs) == pytest.approx(published_bubble("1f1b", p, costs))
    costs = Costs(f=f, b=b, w=min(w, f, b))      # the paper's W <= F, W <= B
    assert rect_bubble("zb-h1", p, p + extra, costs) == pytest.approx(published_bubble("zb-h1", p, costs))


def test_published_zero_bubble_rows_where_they_break():
    """ZB-H1 with W > F idles (p-1)B on rank 0, not (p-1)(F+B-W); ZB-H2 with B > F idles (p-1)(B-F), not 0."""
    costs = Costs(f=1, b=2, w=3)
    tl = simulate(build("zb-h1", 4, 8), costs)
    assert tl.idle[0] == 3 * 2 != published_bubble("zb-h1", 4, costs) == 3 * (1 + 2 - 3)
    costs = Costs(f=1, b=2, w=2)
    tl = simulate(build("zb-h2", 4, 8), costs)
    assert tl.idle[0] == 3 * (2 - 1) != published_bubble("zb-h2", 4, costs) == 0
    costs = Costs(f=3, b=1, w=1)                  # W <= F: the paper's ZB-H2 value on rank 0
    assert simulate(build("zb-h2", 4, 8), costs).idle[0] == published_bubble("zb-h2", 4, costs) == 3 * (3 + 1 - 2)


@FAST
@given(name=st.sampled_from(["dualpipe", "dualpipev"]), half=st.integers(1, 5), extra=st.integers(0, 4), t=times,
       overlap=st.sampled_from([1.0, 0.8, 0.5]))
def test_published_dualpipe_bubble_holds_without_w(name, half, extra, t, overlap):
    """(PP/2-1)(F&B+B-3W) is exact when F = B and W = 0, for both DualPipe and DualPipeV (PP = 2p chunks)."""
    p = 2 * half
    costs = Costs(f=t, b=t, w=0, overlap=overlap)
    assert rect_bubble(name, p, 2 * p + 2 * extra, costs) == pytest.approx(published_bubble(name, p, costs))


@pytest.mark.parametrize("name, p", [("dualpipe", 4), ("dualpipe", 8), ("dualpipev", 4), ("dualpipev", 8)])
def test_published_dualpipe_bubble_overstates_ours_when_w_runs_apart(name, p):
    """With F = B = W the course's simulator finds half the published bubble: it sends dX before computing dW."""
    half = p // 2 if name == "dualpipe" else p
    scale = 1 if name == "dualpipe" else 0.5
    assert rect_bubble(name, p, 2 * p, UNIT) == pytest.approx((half - 1) * 1 * scale)
    assert published_bubble(name, p, UNIT) == pytest.approx(2 * (half - 1) * scale)


def test_dualpipe_table_reproduced():
    rows = {r["method"]: r for r in dualpipe_table(8, 32, Costs(f=1, b=1, w=0))}
    assert set(rows) == {"1F1B", "ZB1P", "DualPipe", "DualPipeV"}
    for r in rows.values():
        assert r["bubble_simulated"] == pytest.approx(r["bubble_published"]), r["method"]
        assert r["parameters_simulated"] == r["parameters_published"], r["method"]
        assert r["activations_simulated"] == pytest.approx(r["activations_published"]), r["method"]
    assert rows["DualPipe"]["parameters_simulated"] == 2 and rows["DualPipe"]["activations_simulated"] == 9
    assert rows["DualPipe"]["bubble_simulated"] < rows["ZB1P"]["bubble_simulated"] <= rows["1F1B"]["bubble_simulated"]
