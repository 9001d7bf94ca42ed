#!/usr/bin/env python3
"""The course's local judge.

    python practice/judge.py                      grade every exercise in workspace/ (scoreboard)
    python practice/judge.py list [--json]        the exercises
    python practice/judge.py start SLUG           copy the starter to workspace/SLUG.py, print the statement
    python practice/judge.py test SLUG [FILE]     run public and hidden tests (exit 0 only when all pass)
    python practice/judge.py check                every solution passes, every starter fails (CI)
    python practice/judge.py doctor               what can run here (torch, gloo, cores)
    python practice/judge.py sync [--check]       regenerate starters and checksums (--check: only name what is stale)
    python practice/judge.py sync --stamp SLUG    record that SLUG's Chinese and English statements say the same

--lang zh|en (default: COURSE_LANG, else the locale, else zh) sets the language of statements, verdicts, hints and
the score line; the checker and learner processes are given it (COURSE_LANG in their environment).

The exercises are read by practice/exercises.py; each test file runs in a trusted checker process while the
submission runs in a separate, contained learner process (practice/sandbox.py, practice/checker.py,
practice/learner.py).  This file is the command line only.

The learner's files live in the learner folder ``workspace/`` (git-ignored, beside the chapter copies that
``make lab`` makes there: ``course.lab``).  Files an older version left in ``practice/workspace/`` are moved there
once, each move said on stderr.  Every run ends with the line ``N passed, N failed``; with ``--json`` it goes to
stderr, so that stdout is exactly one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # the repository: `practice` and `course`

from course.command import finite_float, positive_int
from course.files import write_file
from course.i18n import LANGS, set_language, tr
from course.lab import WORKSPACE
from practice import sandbox
from practice.exercises import (
    PRACTICE,
    PROBLEMS,
    SOLUTIONS,
    TEST_FILES,
    JudgeError,
    TestFile,
    checksums,
    find,
    load_problems,
    make_starter,
    read_tests,
    stale_sources,
    stamp_statement,
)
from practice.sandbox import Grade, grade, print_grade, run_test_file

# ---- commands ----------------------------------------------------------------------------------------------------

OLD_WORKSPACE = PRACTICE / "workspace"   # the learner's folder before it moved to workspace/


def summary(args, passed: int, failed: int) -> None:
    """The last line of every run: on stderr under --json, so that stdout holds one JSON document."""
    print(f"{passed} passed, {failed} failed", file=sys.stderr if getattr(args, "json", False) else sys.stdout)


def shown(path: Path) -> str:
    """``path`` relative to the current folder when it is below it (as a learner would type it)."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def move_old_workspace(old_folder: Path, workspace: Path) -> None:
    """Move what the learner wrote in practice/workspace/ into the learner folder, once, saying so."""
    for old in sorted(old_folder.glob("*.py")) if old_folder.is_dir() else ():
        new = workspace / old.name
        if new.exists() or new.is_symlink():
            print(tr(f"judge: {shown(old)} 没有移动 (left where it is)：{shown(new)} 已经存在，评测的是它 "
                     "(exists and is the one graded)", f"judge: {shown(old)} left where it is: {shown(new)} exists "
                     "and is the one graded"), file=sys.stderr)
            continue
        workspace.mkdir(parents=True, exist_ok=True)
        os.replace(old, new)
        print(tr(f"judge: 已移动 (moved) {shown(old)} -> {shown(new)}（练习文件现在放在 workspace/：the learner "
                 "folder is now workspace/）", f"judge: moved {shown(old)} -> {shown(new)} (the learner folder is "
                 "now workspace/)"), file=sys.stderr)


def cmd_list(problems, args) -> int:
    if args.json:
        print(json.dumps([p.to_json() for p in problems], ensure_ascii=False, indent=1))
        return 0
    for p in problems:
        req = f"  (needs {', '.join(p.requires)})" if p.requires else ""
        print(f"ch{p.chapter}  {p.slug:<26} {p.points:>3} {tr('分', 'pt')}  {p.stars}  {p.kind:<9}  {p.title}{req}")
    return 0


def cmd_start(problems, args) -> int:
    p = find(problems, args.slug)
    target = args.workspace / f"{p.slug}.py"
    print(f"# {p.title}\n\n{p.header}\n\n{p.statement}")
    if target.is_symlink():
        raise JudgeError(tr(f"{target} 是一个符号链接 (symlink)：不会通过它写文件 (not written through a link)",
                            f"{target} is a symlink: nothing is written through a link"))
    if target.exists():
        print(tr(f"{shown(target)} 已经存在 (already exists)，没有覆盖 (not overwritten)。",
                 f"{shown(target)} already exists, not overwritten."))
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(p.starter.read_text(encoding="utf-8"))
        print(tr(f"已创建 (created) {shown(target)}", f"created {shown(target)}"))
    print(tr("写完后运行 (then run)", "when it is written, run") + f": python practice/judge.py test {p.slug}")
    return 0


def cmd_test(problems, args) -> int:
    p = find(problems, args.slug)
    submission = Path(args.file) if args.file else args.workspace / f"{p.slug}.py"
    with ThreadPoolExecutor(args.jobs) as pool:
        g = grade(p, submission, args.problems, pool)
    if args.json:
        print(json.dumps(g.to_json(), ensure_ascii=False, indent=1))
    else:
        print_grade(g)
    summary(args, g.passed, g.failed)
    return 0 if g.failed == 0 else 1


def cmd_scoreboard(problems, args) -> int:
    started = [p for p in problems if (args.workspace / f"{p.slug}.py").is_file()]
    with ThreadPoolExecutor(args.jobs) as pool:
        grades = {p.slug: grade(p, args.workspace / f"{p.slug}.py", args.problems, pool) for p in started}
    if args.json:
        print(json.dumps([g.to_json() for g in grades.values()], ensure_ascii=False, indent=1))
    else:
        print(f"{'exercise':<24}{'ch':>3}  {'tests':>7}  {'score':>9}")
        for p in problems:
            g = grades.get(p.slug)
            tests = f"{g.passed}/{g.passed + g.failed}" if g else "-"
            score = f"{g.score:g}/{p.points}" if g else tr("未开始 (not started)", "not started")
            print(f"{p.slug:<24}{p.chapter:>3}  {tests:>7}  {score:>9}")
        total = sum(g.score for g in grades.values())
        print(tr("总分 (total)", "total") + f": {total:g}/{sum(p.points for p in problems)}"
              + ("" if grades else tr("；用 `python practice/judge.py start SLUG` 开始一道题",
                                      "; start an exercise with `python practice/judge.py start SLUG`")))
    summary(args, sum(g.passed for g in grades.values()), sum(g.failed for g in grades.values()))
    return 0


def cmd_check(problems, args) -> int:
    """Every solution passes all its tests, every starter passes none, starters and checksums are current."""
    t0 = time.monotonic()
    failures = [f"sync: {s}" for s in stale_sources(problems, args.problems)]
    problems = [find(problems, s) for s in args.slugs] if args.slugs else problems
    if failures:   # modified tests or stale starters: grading them would mean nothing
        for f in failures:
            print(f"FAIL {f}  (run: python practice/judge.py sync)")
        print(f"0 passed, {len(failures)} failed")
        return 1
    tests = {p.slug: {name: TestFile(name, source) for name, source in read_tests(p, args.problems).items()}
             for p in problems}
    slowest_first = sorted(problems, key=lambda p: -p.timeout)   # long (torch, live) files first: a shorter tail
    with ThreadPoolExecutor(args.jobs) as pool:
        runs = {(p.slug, who, name): pool.submit(run_test_file, p, tests[p.slug][name], path)
                for p in slowest_first for who, path in (("solution", p.solution), ("starter", p.starter))
                for name in TEST_FILES}
        passed = 0
        for p in problems:
            sol, start = (Grade(p, [runs[(p.slug, who, name)].result() for name in TEST_FILES])
                          for who in ("solution", "starter"))
            ok_sol, ok_start = sol.failed == 0, sol.passed > 0 and start.passed == 0
            secs = sum(r.seconds for r in sol.runs) + sum(r.seconds for r in start.runs)
            status = "ok  " if ok_sol and ok_start else "FAIL"
            print(f"{status} {p.slug:<22} solution {sol.passed}/{len(sol.results)} passed, "
                  f"starter {start.passed}/{len(start.results)} passed  ({secs:.1f} s)")
            for g, ok in ((sol, ok_sol), (start, ok_start)):
                if not ok:
                    for r in g.results:
                        if (r.verdict == "passed") == (g is start):
                            who = "solution" if g is sol else "starter"
                            print(f"     {who} [{r.file}] {r.name}: {r.verdict} {r.message[:400]}")
            passed += ok_sol and ok_start
            failures += [] if ok_sol and ok_start else [p.slug]
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"check: {len(problems)} exercises in {time.monotonic() - t0:.1f} s wall, "
          f"{usage.ru_utime + usage.ru_stime:.1f} s CPU in test processes, gloo workers not counted ({args.jobs} jobs, "
          f"{os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f})")
    print(f"{passed} passed, {len(failures)} failed")
    return 0 if not failures else 1


def cmd_sync(problems, args) -> int:
    if args.stamp:
        for slug in args.stamp:
            stamp_statement(find(problems, slug))
            print(f"stamped {slug}/problem.md")
        return 0
    if args.check:   # write nothing: name what is stale
        stale = stale_sources(problems, args.problems)
        for line in stale:
            print(f"out of date: {line}")
        return 1 if stale else 0
    for p in problems:
        text = make_starter(p.solution.read_text(encoding="utf-8"))
        if not p.starter.is_file() or p.starter.read_text(encoding="utf-8") != text:
            write_file(p.starter, text)
            print(f"wrote {p.starter}")
    sums = args.problems / "SHA256SUMS"
    text = checksums(problems)
    if not sums.is_file() or sums.read_text() != text:
        write_file(sums, text)
        print(f"wrote {sums}")
    return 0


def cmd_doctor(problems, args) -> int:
    print(f"python   {sys.version.split()[0]} ({sys.executable})")
    print(f"cores    {os.cpu_count()}")
    probe = ("import torch, torch.distributed as d; print(torch.__version__, d.is_available() and "
             "d.is_gloo_available())")
    try:
        out = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, timeout=60)
        torch_ok = out.returncode == 0
        version, gloo = out.stdout.split() if torch_ok else ("missing", "False")
    except subprocess.TimeoutExpired:
        torch_ok, version, gloo = False, "import timed out", "False"
    print(f"torch    {version}")
    print(f"gloo     {'yes' if gloo == 'True' else 'no'}")
    course = subprocess.run([sys.executable, "-I", "-c", "import course.checks"], capture_output=True)
    print(f"course   {'importable' if course.returncode == 0 else 'NOT importable: pip install -e . first'}")
    runnable = [p for p in problems if "torch" not in p.requires or torch_ok]
    print(f"{len(runnable)}/{len(problems)} exercises can run here"
          + ("" if torch_ok else " (the others need torch)"))
    fine = course.returncode == 0 and len(runnable) == len(problems) and (gloo == "True")
    print(f"{int(fine)} passed, {int(not fine)} failed")
    return 0 if fine else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="practice/judge.py", description="Grade the course's exercises locally.")
    parser.add_argument("--problems", type=Path, default=PROBLEMS, help=argparse.SUPPRESS)
    parser.add_argument("--solutions", type=Path, default=SOLUTIONS, help=argparse.SUPPRESS)
    parser.add_argument("--workspace", type=Path, default=WORKSPACE,
                        help="where your solutions live (default workspace/)")
    parser.add_argument("-j", "--jobs", type=positive_int, default=max(1, os.cpu_count() or 1),
                        help="test files run at once (default: cores)")
    parser.add_argument("--json", action="store_true", help="machine-readable output: one JSON document on stdout")
    parser.add_argument("--lang", choices=LANGS, help="language of statements and messages "
                        "(default: COURSE_LANG, else the locale, else zh)")
    parser.add_argument("--timeout", type=finite_float, help="seconds per test file, for every exercise "
                        "(default: each exercise's own limit)")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("list", help="the exercises").add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    sub.add_parser("start", help="copy a starter into the workspace").add_argument("slug")
    t = sub.add_parser("test", help="run an exercise's public and hidden tests")
    t.add_argument("slug")
    t.add_argument("file", nargs="?", help="the file to grade (default workspace/SLUG.py)")
    t.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    c = sub.add_parser("check", help="every solution passes and every starter fails")
    c.add_argument("slugs", nargs="*", help="only these exercises")
    sync = sub.add_parser("sync", help="regenerate starters and checksums")
    sync.add_argument("--check", action="store_true", help="write nothing; exit 1 naming what is out of date")
    sync.add_argument("--stamp", nargs="+", metavar="SLUG", help="record that these exercises' zh and en "
                      "statements say the same")
    sub.add_parser("doctor", help="what can run here")
    args = parser.parse_args(argv)
    if args.lang:
        set_language(args.lang)     # practice/sandbox.py gives it to the checker and learner processes
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.timeout is not None and not 0 < args.timeout < 24 * 3600:
        parser.error("--timeout must be a positive number of seconds (below a day)")
    previous = {sig: signal.signal(sig, _interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        problems = load_problems(args.problems, args.solutions)
        for p in problems if args.timeout else ():
            p.timeout = args.timeout
        command = {"list": cmd_list, "start": cmd_start, "test": cmd_test, "check": cmd_check, "sync": cmd_sync,
                   "doctor": cmd_doctor, None: cmd_scoreboard}[args.command]
        if command in (cmd_start, cmd_test, cmd_scoreboard) and args.workspace == WORKSPACE:
            move_old_workspace(OLD_WORKSPACE, WORKSPACE)
        if command in (cmd_test, cmd_check, cmd_scoreboard):
            sandbox.remove_stale_directories()
        return command(problems, args)
    except KeyboardInterrupt:
        sandbox.abort_all()
        print("judge: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:          # the reader went away (e.g. `judge.py list | head`): nothing left to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (JudgeError, ValueError, OSError) as e:
        print(f"judge: {e}", file=sys.stderr)
        summary(args, 0, 1)
        return 2
    finally:
        sandbox.sweep(everything=True)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _interrupted(signum, frame) -> None:
    """SIGINT or SIGTERM: kill every learner and checker and remove their directories at once, then unwind."""
    sandbox.abort_all()
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
