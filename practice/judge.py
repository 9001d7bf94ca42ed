#!/usr/bin/env python3
"""The course's local judge.

    python practice/judge.py                      grade every exercise in practice/workspace/ (scoreboard)
    python practice/judge.py list [--json]        the exercises
    python practice/judge.py start SLUG           copy the starter to practice/workspace/SLUG.py, print the statement
    python practice/judge.py test SLUG [FILE]     run public and hidden tests (exit 0 only when all pass)
    python practice/judge.py check                every solution passes, every starter fails (CI)
    python practice/judge.py doctor               what can run here (torch, gloo, cores)
    python practice/judge.py sync                 regenerate starters and test checksums from the sources

Each test file runs in its own ``python -I`` process (practice/harness.py) in a new process group, with a time
limit and resource limits; on timeout the whole group is killed.  Verdicts come back as HMAC-signed lines on a
private pipe, never from the child's stdout or exit code.  Test files are read (and checked against
problems/SHA256SUMS) before any learner code runs, and the child gets its own copy; the harness fingerprints what
the tests rely on before the learner's import and reports tampering.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import hmac
import json
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

PRACTICE = Path(__file__).resolve().parent
REPO = PRACTICE.parent
HARNESS = PRACTICE / "harness.py"
TEST_FILES = ("test_public.py", "test_hidden.py")
DEFAULT_TIMEOUT = 10.0
OUTPUT_SHOWN = 1500          # characters of learner output shown per test file
OUTPUT_FILE_LIMIT = 32 << 20  # RLIMIT_FSIZE: the learner cannot fill the disk
MEMORY_LIMIT = 4 << 30        # RLIMIT_AS per process
VERDICTS = ("passed", "failed", "error", "timeout", "crashed")
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


# ---- exercises -------------------------------------------------------------------------------------------------

@dataclass
class Problem:
    slug: str
    title: str
    chapter: int
    points: int
    requires: list[str]
    timeout: float
    statement: str
    dir: Path
    solution: Path

    @property
    def starter(self) -> Path:
        return self.dir / "starter.py"

    def to_json(self) -> dict:
        return {"slug": self.slug, "title": self.title, "chapter": self.chapter, "points": self.points,
                "requires": self.requires, "timeout": self.timeout}


def parse_front_matter(text: str, where: str) -> tuple[dict, str]:
    """``---`` / ``key: value`` lines / ``---`` then the body.  Values: int, float, [a, b] lists or strings."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---" or "---" not in [ln.strip() for ln in lines[1:]]:
        raise ValueError(f"{where}: expected front matter between two '---' lines at the top")
    end = 1 + [ln.strip() for ln in lines[1:]].index("---")
    meta = {}
    for ln in lines[1:end]:
        if not ln.strip():
            continue
        key, sep, value = ln.partition(":")
        if not sep:
            raise ValueError(f"{where}: front matter line {ln!r} is not 'key: value'")
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            meta[key.strip()] = [v.strip().strip("'\"") for v in value[1:-1].split(",") if v.strip()]
        elif re.fullmatch(r"-?\d+", value):
            meta[key.strip()] = int(value)
        elif re.fullmatch(r"-?\d+\.\d*", value):
            meta[key.strip()] = float(value)
        else:
            meta[key.strip()] = value.strip("'\"")
    return meta, "\n".join(lines[end + 1:]).strip() + "\n"


def load_problem(directory: Path, solutions: Path) -> Problem:
    where = f"{directory.name}/problem.md"
    meta, body = parse_front_matter((directory / "problem.md").read_text(encoding="utf-8"), where)
    for key, kind in (("title", str), ("chapter", int), ("points", int), ("requires", list)):
        if not isinstance(meta.get(key), kind):
            raise ValueError(f"{where}: front matter needs {key} ({kind.__name__}), got {meta.get(key)!r}")
    if not 1 <= meta["chapter"] <= 8:
        raise ValueError(f"{where}: chapter must be 1..8, got {meta['chapter']}")
    return Problem(directory.name, meta["title"], meta["chapter"], meta["points"], meta["requires"],
                   float(meta.get("timeout", DEFAULT_TIMEOUT)), body, directory, solutions / f"{directory.name}.py")


def load_problems(problems: Path, solutions: Path) -> list[Problem]:
    """Every exercise, by chapter then slug."""
    found = [load_problem(d, solutions) for d in sorted(problems.iterdir()) if (d / "problem.md").is_file()]
    return sorted(found, key=lambda p: (p.chapter, p.slug))


def make_starter(solution_source: str) -> str:
    """The starter: the solution with each BEGIN/END SOLUTION block replaced by ``raise NotImplementedError``."""
    out, inside = [], False
    for n, line in enumerate(solution_source.splitlines(), 1):
        marker = line.strip()
        if marker == BEGIN:
            if inside:
                raise ValueError(f"line {n}: {BEGIN} inside another solution block")
            indent = line[:len(line) - len(line.lstrip())]
            out.append(f"{indent}raise NotImplementedError  # TODO: your code here")
            inside = True
        elif marker == END:
            if not inside:
                raise ValueError(f"line {n}: {END} without {BEGIN}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{BEGIN} is never closed")
    return "\n".join(out) + "\n"


def checksums(problems: list[Problem]) -> str:
    lines = []
    for p in problems:
        for name in TEST_FILES:
            digest = hashlib.sha256((p.dir / name).read_bytes()).hexdigest()
            lines.append(f"{digest}  {p.slug}/{name}")
    return "\n".join(lines) + "\n"


def stale_sources(problems: list[Problem], problems_dir: Path) -> list[str]:
    """What ``sync`` would change: out-of-date starters and test checksums (also tampered test files)."""
    stale = []
    for p in problems:
        if not p.solution.is_file():
            stale.append(f"{p.slug}: missing solution {p.solution}")
        elif not p.starter.is_file() or p.starter.read_text() != make_starter(p.solution.read_text()):
            stale.append(f"{p.slug}/starter.py is not derived from solutions/{p.slug}.py")
    sums = problems_dir / "SHA256SUMS"
    if not sums.is_file() or sums.read_text() != checksums(problems):
        stale.append(f"{sums.name} does not match the test files")
    return stale


def read_tests(problem: Problem, problems_dir: Path) -> dict[str, str]:
    """The test files' sources, verified against SHA256SUMS, read once before any learner code runs."""
    sums = {}
    sums_file = problems_dir / "SHA256SUMS"
    if sums_file.is_file():
        for ln in sums_file.read_text().splitlines():
            digest, _, name = ln.partition("  ")
            sums[name] = digest
    sources = {}
    for name in TEST_FILES:
        data = (problem.dir / name).read_bytes()
        if sums.get(f"{problem.slug}/{name}") != hashlib.sha256(data).hexdigest():
            raise JudgeError(f"测试文件被改动过 (test file modified): {problem.dir / name}；"
                             f"请恢复它 (git checkout -- {problem.dir / name})。出题人改了测试请运行 judge.py sync")
        sources[name] = data.decode("utf-8")
    return sources


class JudgeError(Exception):
    """A problem with the judge's own inputs (unknown slug, missing file, modified tests)."""


# ---- running one test file -------------------------------------------------------------------------------------

@dataclass
class Result:
    file: str          # "public" or "hidden"
    name: str
    verdict: str
    message: str = ""

    def to_json(self) -> dict:
        return {"file": self.file, "name": self.name, "verdict": self.verdict, "message": self.message}


@dataclass
class FileRun:
    results: list[Result]
    output: str
    seconds: float


def run_test_file(problem: Problem, test_name: str, test_source: str, submission: Path) -> FileRun:
    """Run one test file against ``submission`` in an isolated child; every test gets exactly one verdict."""
    kind = "public" if "public" in test_name else "hidden"
    names = [n.name for n in ast.parse(test_source).body
             if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    work = Path(tempfile.mkdtemp(prefix=f"judge-{problem.slug}-"))
    start = time.monotonic()
    try:
        shutil.copyfile(submission, work / "submission.py")
        (work / test_name).write_text(test_source, encoding="utf-8")
        key, nonce = os.urandom(32), os.urandom(16).hex()
        read_fd, write_fd = os.pipe()
        out = open(work / ".output", "wb+")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work), "OMP_NUM_THREADS": "1",
               "PYTHONHASHSEED": "random", "LANG": "C.UTF-8"}
        child = subprocess.Popen([sys.executable, "-I", str(HARNESS)], cwd=work, stdin=subprocess.PIPE, stdout=out,
                                 stderr=subprocess.STDOUT, pass_fds=(write_fd,), start_new_session=True, env=env)
        os.close(write_fd)
        _limit(child.pid, problem.timeout)
        header = {"key": key.hex(), "nonce": nonce, "fd": write_fd, "test": test_name, "root": str(REPO)}
        try:
            child.stdin.write(json.dumps(header).encode())
            child.stdin.close()
        except BrokenPipeError:
            pass
        records, timed_out = _collect(child, read_fd, key, nonce, problem.timeout)
        os.close(read_fd)
        out.seek(0)
        output = out.read().decode("utf-8", "replace")
        out.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results = _verdicts(kind, names, records, timed_out, child.returncode, problem.timeout)
    return FileRun(results, _truncate(output), time.monotonic() - start)


def _limit(pid: int, timeout: float) -> None:
    """Resource limits on the child (inherited by anything it starts)."""
    limits = [(resource.RLIMIT_CPU, int(timeout * 4) + 10), (resource.RLIMIT_FSIZE, OUTPUT_FILE_LIMIT),
              (resource.RLIMIT_AS, MEMORY_LIMIT), (resource.RLIMIT_CORE, 0), (resource.RLIMIT_NOFILE, 1024)]
    for which, value in limits:
        try:
            resource.prlimit(pid, which, (value, value))
        except (ValueError, OSError, AttributeError):
            pass   # not every platform lets us; the wall-clock kill below still holds


def _collect(child: subprocess.Popen, fd: int, key: bytes, nonce: str, timeout: float) -> tuple[list[dict], bool]:
    """Signed records from the pipe until the child exits (or the deadline: then kill its whole group)."""
    deadline = time.monotonic() + timeout
    buf, records, timed_out = b"", [], False
    open_ = True
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        if open_:
            ready, _, _ = select.select([fd], [], [], min(left, 0.2))
            if ready:
                chunk = os.read(fd, 65536)
                if chunk:
                    buf += chunk
                else:
                    open_ = False
        if child.poll() is not None:
            if open_:   # drain what is already there, without waiting on grandchildren holding the pipe
                while select.select([fd], [], [], 0)[0]:
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        break
                    buf += chunk
            break
        if not open_:
            time.sleep(0.02)
    _kill_group(child)
    seq = 0
    for line in buf.split(b"\n"):
        try:
            envelope = json.loads(line)
            body = envelope["body"]
            good = hmac.compare_digest(hmac.new(key, body.encode(), "sha256").hexdigest(), envelope["mac"])
            record = json.loads(body) if good else None
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if record and record.get("nonce") == nonce and record.get("seq") == seq:
            records.append(record)
            seq += 1
    return records, timed_out


def _kill_group(child: subprocess.Popen) -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)   # the child leads its own group: this also ends its workers
    except (ProcessLookupError, PermissionError):
        pass
    child.wait()


def _verdicts(kind: str, names: list[str], records: list[dict], timed_out: bool, returncode: int,
              timeout: float) -> list[Result]:
    got = {r["test"]: r for r in records if r.get("event") == "result"}
    started = [r["test"] for r in records if r.get("event") == "start"]
    done = any(r.get("event") == "done" for r in records)
    running = started[-1] if started and started[-1] not in got else None
    if timed_out:
        verdict, why = "timeout", f"超时 (timeout)：超过 {timeout:g} 秒被终止 (killed)。死循环 (infinite loop) 或死锁？"
    elif not done:
        how = (f"信号 (signal) {signal.Signals(-returncode).name}" if returncode and returncode < 0
               else f"exit code {returncode}")
        verdict, why = "crashed", f"进程提前退出 (crashed, {how})：提交的代码调用了 os._exit/sys.exit 或崩溃了。"
    results = []
    for name in names:
        if name in got:
            results.append(Result(kind, name, got[name]["verdict"], got[name]["message"]))
        elif name == running or (not started and not got and name == names[0]):
            results.append(Result(kind, name, verdict, why))
        else:
            results.append(Result(kind, name, verdict, f"没有运行 (not run)：{why}"))
    return results


def _truncate(text: str) -> str:
    if len(text) <= OUTPUT_SHOWN:
        return text
    half = OUTPUT_SHOWN // 2
    return f"{text[:half]}\n... [截断 (truncated) {len(text) - OUTPUT_SHOWN} 个字符] ...\n{text[-half:]}"


# ---- grading -----------------------------------------------------------------------------------------------------

@dataclass
class Grade:
    problem: Problem
    runs: list[FileRun]

    @property
    def results(self) -> list[Result]:
        return [r for run in self.runs for r in run.results]

    @property
    def passed(self) -> int:
        return sum(r.verdict == "passed" for r in self.results)

    @property
    def failed(self) -> int:
        return len(self.results) - self.passed

    @property
    def score(self) -> float:
        total = len(self.results)
        return round(self.problem.points * self.passed / total, 1) if total else 0.0

    def to_json(self) -> dict:
        return {**self.problem.to_json(), "passed": self.passed, "failed": self.failed, "score": self.score,
                "seconds": round(sum(r.seconds for r in self.runs), 2),
                "results": [r.to_json() for r in self.results],
                "output": "\n".join(r.output for r in self.runs if r.output)}


def grade(problem: Problem, submission: Path, problems_dir: Path, pool: ThreadPoolExecutor | None = None) -> Grade:
    if not submission.is_file():
        raise JudgeError(f"没有找到提交的文件 (no such file): {submission}")
    sources = read_tests(problem, problems_dir)
    jobs = [(name, sources[name]) for name in TEST_FILES]
    if pool is None:
        runs = [run_test_file(problem, n, s, submission) for n, s in jobs]
    else:
        runs = list(pool.map(lambda job: run_test_file(problem, job[0], job[1], submission), jobs))
    return Grade(problem, runs)


def print_grade(g: Grade) -> None:
    p = g.problem
    print(f"== {p.slug} · 第 {p.chapter} 章 · {p.title} ==")
    for run in g.runs:
        for r in run.results:
            print(f"  [{r.file}] {r.name} {'.' * max(2, 44 - len(r.name))} {r.verdict}")
            if r.verdict != "passed" and r.message:
                print("\n".join("      " + ln for ln in r.message.splitlines()))
        if run.output.strip() and any(r.verdict != "passed" for r in run.results):
            print("  程序输出 (your program's output, truncated):")
            print("\n".join("    | " + ln for ln in run.output.rstrip().splitlines()))
    print(f"  得分 (score): {g.score:g}/{p.points}")


# ---- commands ----------------------------------------------------------------------------------------------------

def find(problems: list[Problem], slug: str) -> Problem:
    for p in problems:
        if p.slug == slug:
            return p
    raise JudgeError(f"没有这道题 (unknown exercise) {slug!r}；可选 (known): {', '.join(p.slug for p in problems)}")


def cmd_list(problems, args) -> int:
    if args.json:
        print(json.dumps([p.to_json() for p in problems], ensure_ascii=False, indent=1))
        return 0
    for p in problems:
        req = f"  (needs {', '.join(p.requires)})" if p.requires else ""
        print(f"ch{p.chapter}  {p.slug:<22} {p.points:>3} 分  {p.title}{req}")
    return 0


def cmd_start(problems, args) -> int:
    p = find(problems, args.slug)
    target = args.workspace / f"{p.slug}.py"
    print(f"# {p.title}  (第 {p.chapter} 章, {p.points} 分)\n\n{p.statement}")
    if target.exists():
        print(f"{target} 已经存在 (already exists)，没有覆盖 (not overwritten)。")
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p.starter, target)
        print(f"已创建 (created) {target}")
    print(f"写完后运行 (then run): python practice/judge.py test {p.slug}")
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
    print(f"{g.passed} passed, {g.failed} failed")
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
            score = f"{g.score:g}/{p.points}" if g else "未开始 (not started)"
            print(f"{p.slug:<24}{p.chapter:>3}  {tests:>7}  {score:>9}")
        total = sum(g.score for g in grades.values())
        print(f"总分 (total): {total:g}/{sum(p.points for p in problems)}"
              + ("" if grades else "；用 `python practice/judge.py start SLUG` 开始一道题"))
    passed, failed = sum(g.passed for g in grades.values()), sum(g.failed for g in grades.values())
    print(f"{passed} passed, {failed} failed")
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
    sources = {p.slug: read_tests(p, args.problems) for p in problems}
    slowest_first = sorted(problems, key=lambda p: -p.timeout)   # long (torch, live) files first: a shorter tail
    with ThreadPoolExecutor(args.jobs) as pool:
        runs = {(p.slug, who, name): pool.submit(run_test_file, p, name, sources[p.slug][name], path)
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
    for p in problems:
        text = make_starter(p.solution.read_text(encoding="utf-8"))
        if not p.starter.is_file() or p.starter.read_text(encoding="utf-8") != text:
            p.starter.write_text(text, encoding="utf-8")
            print(f"wrote {p.starter}")
    sums = args.problems / "SHA256SUMS"
    text = checksums(problems)
    if not sums.is_file() or sums.read_text() != text:
        sums.write_text(text)
        print(f"wrote {sums}")
    return 0


def cmd_doctor(problems, args) -> int:
    print(f"python   {sys.version.split()[0]} ({sys.executable})")
    print(f"cores    {os.cpu_count()}")
    probe = ("import torch, torch.distributed as d; print(torch.__version__, d.is_available() and d.is_gloo_available())")
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
    parser.add_argument("--problems", type=Path, default=PRACTICE / "problems", help=argparse.SUPPRESS)
    parser.add_argument("--solutions", type=Path, default=REPO / "solutions", help=argparse.SUPPRESS)
    parser.add_argument("--workspace", type=Path, default=PRACTICE / "workspace",
                        help="where your solutions live (default practice/workspace)")
    parser.add_argument("-j", "--jobs", type=int, default=max(1, os.cpu_count() or 1),
                        help="test files run at once (default: cores)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--timeout", type=float, help="seconds per test file, for every exercise "
                        "(default: each exercise's own limit)")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("list", help="the exercises").add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    sub.add_parser("start", help="copy a starter into the workspace").add_argument("slug")
    t = sub.add_parser("test", help="run an exercise's public and hidden tests")
    t.add_argument("slug")
    t.add_argument("file", nargs="?", help="the file to grade (default practice/workspace/SLUG.py)")
    t.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    c = sub.add_parser("check", help="every solution passes and every starter fails")
    c.add_argument("slugs", nargs="*", help="only these exercises")
    sub.add_parser("sync", help="regenerate starters and test checksums")
    sub.add_parser("doctor", help="what can run here")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        parser.error("--timeout must be a positive number of seconds")
    try:
        problems = load_problems(args.problems, args.solutions)
        for p in problems if args.timeout else ():
            p.timeout = args.timeout
        command = {"list": cmd_list, "start": cmd_start, "test": cmd_test, "check": cmd_check, "sync": cmd_sync,
                   "doctor": cmd_doctor, None: cmd_scoreboard}[args.command]
        return command(problems, args)
    except (JudgeError, ValueError, OSError) as e:
        print(f"judge: {e}", file=sys.stderr)
        print("0 passed, 1 failed")
        return 2


if __name__ == "__main__":
    sys.exit(main())
