"""course.papers: the published tables are reproduced where the module says so, and its verdicts follow the data
(small cases; benchmarks/bench_papers.py runs the full tables)."""

from __future__ import annotations

from course import papers


def test_zero_bubble_reproduces_table_5_and_the_search_is_never_longer():
    row = papers.zero_bubble(papers.ZB_SETTINGS[:1])[0]
    assert {k: round(v, 4) for k, v in row["bubble"].items()} == row["bubble_published"]
    span, searched = row["makespan"], row["search_makespan"]
    assert searched["p"] <= min(span["zb-h1"], span["zb-1p"]) + 1e-9
    assert searched["2p-1"] <= span["zb-h2"] + 1e-9 and row["search_optimal"]["2p-1"]
    assert row["gain_published"]["zb-2p"] == 14.5 / 11.8          # Table 4, 1.5B, m = 24


def test_the_settings_are_the_papers():
    assert len(papers.ZB_SETTINGS) == 12 and {s.p for s in papers.ZB_SETTINGS} == {8, 16, 32}
    assert round(papers.ZB_SETTINGS[0].w_mem, 4) == 0.3664            # 32h / (34h + 5as), h=2304, a=24, s=1024


def test_controllable_memory_rows():
    rows = {r["schedule"]: r for r in papers.controllable_memory(((4, 8),), exact_time_limit=None)}
    assert rows["1f1b"]["bubble"] == rows["1f1b"]["bubble_published"] == 3 / 11
    assert rows["v-zb"]["bubble"] == 0 and rows["v-zb"]["makespan_bubble"] > 0
    for name in ("v-min", "v-half", "v-zb"):
        assert rows[name]["memory"] <= rows[name]["memory_published"]
        assert rows[name]["search_bubble"] > rows[name]["makespan_bubble"]     # the V placement is shorter
        assert rows[name]["search_bound"] <= rows[name]["search_bubble"] + 1e-12


def test_zb1p_claim_verdicts():
    rows = papers.zb1p_claim(3, 4, cases=((1, 1, 1), (1, 1, 2), (1, 1, 0.5)), w_mems=(1.0, 0.0), time_limit=20)
    verdict = {(r["w"], r["w_mem"]): r["verdict"] for r in rows}
    assert all(r["optimal"] for r in rows)
    assert verdict[1, 1.0] == verdict[1, 0.0] == "optimal"              # F = B = W: the formula is the optimum
    assert verdict[2, 1.0] == verdict[2, 0.0] == "contradicted"         # W > F: claimed 0, no plan idles so little
    assert verdict[0.5, 1.0] == "optimal" and verdict[0.5, 0.0] == "beaten"
    contradicted = next(r for r in rows if r["verdict"] == "contradicted")
    assert contradicted["claimed"] == 0 and contradicted["optimum"] == contradicted["bound"] == 2


def test_markdown():
    text = papers.markdown([{"a": 1.23456, "b": None}], [("A", "a", ".2f"), ("B", "b", "")])
    assert text.splitlines() == ["| A | B |", "|---|---|", "| 1.23 | - |"]
