"""The suite's lanes, and what must not run beside what when it runs in parallel.

Lanes.  ``make quick`` runs ``-m "not slow"``: the library, the CLI and the judge's unit tests.  A test is slow
when it executes a notebook, drives nbgrader, starts torch.distributed workers, a JupyterLab server, a hub or a
browser.  Nobody has to remember to mark one: every test in a file of ``SLOW_FILES`` and every test carrying
one of the markers ``live``, ``browser``, ``lab`` or ``hub`` is marked ``slow`` here.  A slow test in a fast
file carries ``@pytest.mark.slow`` itself (the quick lane's summary names any test that took over
``QUICK_LIMIT_S`` without it).

Parallel.  ``make test`` runs ``-n auto --dist loadgroup -m "not alone"``, then ``-m alone`` by itself:

- a file of ``GROUPS`` runs on one worker, in order: its module-scoped fixture (a graded course, a server, a
  built site) is set up once, and its tests share state that another worker must not touch (the hub's system
  accounts, one Chromium);
- a file of ``ALONE`` runs after the parallel run, with nothing beside it: it counts every process of the
  machine that runs under a graded uid, so any other test's judge would be counted as a learner's left-over.

Everything else is isolated by construction: ``tmp_path`` per test, ports chosen by the OS, one TCPStore per
process, nbgrader exchanges in temporary folders.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

SLOW_FILES = {
    "test_chapters.py",               # executes every chapter, both editions
    "test_chapter_answers.py",        # the judge on each chapter's printed answer
    "test_grade.py",                  # nbgrader autograde of 40 submissions
    "test_judge_generated.py",        # what make check runs: build, generate, sync, recordings
    "test_judge_hostile.py",          # hostile submissions against the walls (processes, memory, time)
    "test_live.py",                   # torch.distributed jobs (marker live)
    "test_live_checks.py",
    "test_search_live.py",
    "test_torchrun.py",
    "test_nbgrader_autograde.py",
    "test_nbgrader_exchange.py",
    "test_nbgrader_generate.py",
    "test_nbgrader_setup.py",
    "test_nbgrader_workflow.py",
    "test_regrade.py",
}
SLOW_MARKERS = ("live", "browser", "lab", "hub")
QUICK_LIMIT_S = 5.0

GROUPS = {
    "test_grade.py": "grade",
    "test_nbgrader_exchange.py": "nbgrader-exchange",
    "test_nbgrader_workflow.py": "nbgrader-workflow",
    "test_regrade.py": "regrade",
    "test_search_live.py": "search-live",
    "test_lite.py": "lite",           # both build the site with one download cache and build environment
    "test_lite_chapters.py": "lite",
    "browser": "browser",             # tests/browser/: a group per file (its module's server or site, and the
                                      # hub's system accounts in test_hub_cycle.py), files side by side
}
ALONE = {"test_judge_hostile.py"}


def _relative(item) -> Path:
    return Path(item.fspath).resolve().relative_to(TESTS)


def _group(path: Path) -> str | None:
    """The ``xdist_group`` of the tests in ``path``, if ``GROUPS`` gives them one."""
    if not path.is_relative_to(TESTS):
        return None
    rel = path.relative_to(TESTS)
    return GROUPS.get(rel.name) or (GROUPS.get(rel.parts[0]) and f"{GROUPS[rel.parts[0]]}-{rel.stem}")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups off the items (its hook is not trylast)
def pytest_collection_modifyitems(config, items):
    for item in items:
        rel = _relative(item)
        if rel.name in SLOW_FILES or any(item.get_closest_marker(m) for m in SLOW_MARKERS):
            item.add_marker(pytest.mark.slow)
        if rel.name in ALONE:
            item.add_marker(pytest.mark.alone)
        group = _group(Path(item.fspath).resolve())
        if group:
            item.add_marker(pytest.mark.xdist_group(group))


def pytest_xdist_node_collection_finished(node, ids):
    """Under ``--dist loadgroup``, every test of a ``GROUPS`` file carries its group, or the run stops.

    xdist passes a test's group to its scheduler as a suffix of the node id; when that suffix is lost (pytest 9.2
    with xdist 3.8 drops it, pytest-xdist#1386) a group's tests are spread over the workers without a word, and a
    module's fixture is set up on each of them, beside tests it must not run beside."""
    if node.config.getoption("dist") != "loadgroup":
        return
    lost = [i for i in ids if "@" not in i and _group(Path(node.config.rootpath, i.split("::")[0]).resolve())]
    if lost:
        pytest.exit(f"--dist loadgroup did not group {len(lost)} tests (first: {lost[0]}): pytest "
                    f"{pytest.__version__} with this pytest-xdist loses the groups; use the versions "
                    "pyproject.toml pins", returncode=3)


def pytest_ignore_collect(collection_path, config):
    """``-m "not slow"`` does not even import the files that hold slow tests only (torch, notebooks: seconds each)."""
    if config.getoption("markexpr") == "not slow":
        rel = collection_path.resolve().relative_to(TESTS) if collection_path.resolve().is_relative_to(TESTS) else None
        if rel is not None and (rel.name in SLOW_FILES or rel.parts[:1] == ("browser",)):
            return True
    return None


_unmarked_slow: list[tuple[str, float]] = []


def pytest_runtest_logreport(report):
    if report.when == "call" and report.duration > QUICK_LIMIT_S and "slow" not in report.keywords:
        _unmarked_slow.append((report.nodeid, report.duration))


def pytest_terminal_summary(terminalreporter):
    if _unmarked_slow:
        terminalreporter.section(f"tests over {QUICK_LIMIT_S:g} s without the slow marker (make quick runs them)")
        for nodeid, seconds in sorted(_unmarked_slow, key=lambda x: -x[1]):
            terminalreporter.write_line(f"{seconds:6.1f} s  {nodeid}")
