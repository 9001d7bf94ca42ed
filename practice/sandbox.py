"""Grading one submission: a trusted checker process per test file, the learner's code in a contained process.

For each test file (``run_test_file``):

1. A fresh temporary directory holds ``checker/test_*.py`` (the verified source), ``learner/submission.py``,
   ``relay/`` (where live-1f1b's checker listens) and ``root/`` (an empty mount point for the learner's view).
2. The checker (practice/checker.py) starts first, under an address-space limit, imports what the test imports,
   and says "ready" on the verdict pipe.  It never imports the learner's code (see its docstring for how
   ``from submission import f`` works).
3. Then the learner process (practice/learner.py) starts: a new session, resource limits set before it reads its
   header (CPU time, address space, file size, open files, processes), its output going to a file.  Before any
   learner code it enters the walls of practice/contain.py (``_view``: its own pid, mount, IPC and network
   namespaces, a read-only view of only the system, the interpreter, ``course/``, its half of ``practice/`` and
   its submission, private /tmp and /dev/shm, an unused uid as root); where this machine makes no namespace
   (``isolation()`` is ""), it only drops its capabilities, and the verdict says so.  It holds only its two pipes
   to the checker.  The judge and the checker are not dumpable, so a process of the same user can neither read
   their memory nor open their pipes through /proc.
4. The judge reads signed records from the checker with a deadline and a bounded buffer, and every 50 ms looks at
   the learner's whole process tree: more than ``MAX_PROCESSES`` processes or ``MAX_RESIDENT`` bytes resident in
   total (its tmpfs included), and the tree is killed (and the largest tree when all test files running at once
   hold more than ``ALL_RESIDENT``); the checker beyond ``CHECKER_RESIDENT``.  Without namespaces the judge is also
   what catches escapers: it is a child subreaper (``PR_SET_CHILD_SUBREAPER``), so a process that calls
   ``setsid()`` and loses its parent is re-parented to the judge and found there.
5. At the end, on every path (normal, timeout, crash, the judge's own SIGINT/SIGTERM): the checker and the
   learner's tree (with it its init, and so everything in its namespaces) are killed, then every process the watch
   saw and every orphan of this run, and the directory is removed.

``grade(problem, path) -> Grade`` grades one source file for one exercise (also used by instructor/regrade.py);
it sweeps its own orphans, whoever calls it.
"""

from __future__ import annotations

import ctypes
import hmac
import json
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import psutil

from course.i18n import language, tr
from course.scoring import partial_points
from practice import contain
from practice.checker import not_run
from practice.exercises import REPO, JudgeError, Problem, TestFile, read_tests

PRACTICE = Path(__file__).resolve().parent
CHECKER, LEARNER = PRACTICE / "checker.py", PRACTICE / "learner.py"
LEARNER_FILES = ("__init__.py", "contain.py", "learner.py", "wire.py")   # all of practice/ the learner sees
VERDICTS = ("passed", "failed", "error", "timeout", "crashed")
OUTPUT_SHOWN = 1500           # characters of learner output shown per test file
OUTPUT_FILE_LIMIT = 32 << 20  # RLIMIT_FSIZE: the learner cannot fill the disk
MEMORY_LIMIT = 4 << 30        # RLIMIT_AS per learner process, and of the checker
MAX_PROCESSES = 64            # processes in one learner's tree at once (the watch kills it beyond)
MAX_RESIDENT = min(6 << 30, psutil.virtual_memory().total // 2)   # bytes resident summed over that tree, with its
TMP_BYTES, SHM_BYTES = 256 << 20, 64 << 20                        # private /tmp and /dev/shm (tmpfs: memory)
CHECKER_RESIDENT = min(2 << 30, psutil.virtual_memory().total // 4)   # the checker's own bytes resident
ALL_RESIDENT = psutil.virtual_memory().total // 2   # ... and over every tree of the test files running at once
NPROC_LIMIT = 1024            # RLIMIT_NPROC: the learner's own uid (as root), else a margin above the user's tasks
RECORDS_LIMIT = 4 << 20       # bytes of verdict records read from one checker
CHECKER_GRACE = 3.0           # seconds the judge waits past the deadline for the checker's own verdict
EXIT_GRACE = 0.5              # seconds a learner process gets to end on its own once its checker is done
WATCH_INTERVAL = 0.05
TEMP_PREFIX = "judge-"


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


@dataclass
class Grade:
    problem: Problem
    runs: list[FileRun]
    isolation: str = ""    # "root", "user" (namespaces, see practice/contain.py) or "" (none could be made)

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
        """The course's one rule (``course.scoring``): points x passed / tests, as nbgrader and the regrade."""
        return partial_points(self.problem.points, self.passed, len(self.results))

    def to_json(self) -> dict:
        return {**self.problem.to_json(), "passed": self.passed, "failed": self.failed, "score": self.score,
                "seconds": round(sum(r.seconds for r in self.runs), 2),
                "results": [r.to_json() for r in self.results], "isolation": self.isolation or "none",
                "output": "\n".join(r.output for r in self.runs if r.output)}


def isolation() -> str:
    """How learner processes are contained here: "root" or "user" (practice/contain.py), or "" (not at all)."""
    return contain.mode()


NOT_CONTAINED = ("注意 (note)：这台机器上不能创建命名空间 (no namespaces can be made here)，你的代码以你的权限运行 "
                 "(your code ran with your rights: it could see and signal your other processes and write your files)",
                 "note: no namespaces can be made on this machine, so your code ran with your rights: it could see "
                 "and signal your other processes and write your files")


def grade(problem: Problem, submission: Path, problems_dir: Path | None = None,
          pool: ThreadPoolExecutor | None = None) -> Grade:
    """Grade the source file ``submission`` for ``problem``: every test of both files gets one verdict.

    Raises JudgeError when the file is missing or a test or judge file differs from SHA256SUMS.  The calling
    process becomes a child subreaper and non-dumpable (see the module docstring), for the rest of its life.
    """
    submission = Path(submission)
    if not submission.is_file():
        raise JudgeError(tr(f"没有找到提交的文件 (no such file): {submission}", f"no such file: {submission}"))
    tests = [TestFile(name, source) for name, source in read_tests(problem, problems_dir).items()]
    started = time.time()
    if pool is None:
        runs = [run_test_file(problem, t, submission) for t in tests]
    else:
        runs = list(pool.map(lambda t: run_test_file(problem, t, submission), tests))
    sweep(since=started)
    return Grade(problem, runs, isolation())


# ---- one test file ------------------------------------------------------------------------------------------------

class _Run:
    """The processes and directory of one test file, known to the judge until they are gone."""

    active: set[_Run] = set()
    lock = threading.RLock()   # reentrant: the judge's signal handler (abort_all) may run inside sweep
    aborting = False

    def __init__(self, problem: Problem):
        self.marker = os.urandom(8).hex()
        self.work = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-{problem.slug}-"))
        self.checker: subprocess.Popen | None = None
        self.learner: subprocess.Popen | None = None
        self.seen: dict[int, float] = {}      # pid -> create time of every process the watch saw in the tree
        self.killed_for = ""
        self.resident = 0                     # bytes resident in the tree (and its tmpfs) at the last watch
        self.contained = bool(isolation())
        self.inner: int | None = None         # a process inside the learner's namespaces (its init)
        with _Run.lock:
            if _Run.aborting:
                shutil.rmtree(self.work, ignore_errors=True)
                raise JudgeError(tr("评测被中断 (interrupted)", "grading was interrupted"))
            _Run.active.add(self)

    def watch(self) -> None:
        """Record the learner's tree; kill it when it holds too many processes or too much memory.  The checker
        (it decodes what the learner sends) is killed beyond its own memory bound."""
        self.watch_checker()
        if self.learner is None or self.killed_for:
            return
        try:
            tree = [psutil.Process(self.learner.pid)] + psutil.Process(self.learner.pid).children(recursive=True)
        except psutil.Error:
            tree = []
        tree += [p for p in _orphans() if _marker(p) == self.marker]
        resident = 0
        for p in tree:
            try:
                if p.pid not in self.seen:
                    self.seen[p.pid] = p.create_time()
                    _SEEN.add((p.pid, self.seen[p.pid]))
                resident += p.memory_info().rss
            except psutil.Error:
                pass
        resident += self.scratch_bytes()
        self.resident = resident
        with _Run.lock:
            runs = list(_Run.active)
        largest = max(runs, key=lambda r: r.resident)
        if len(tree) > MAX_PROCESSES:
            self.killed_for = tr(f"进程太多 (too many processes)：超过 {MAX_PROCESSES} 个，已全部终止 (killed)。"
                                 "fork 炸弹 (fork bomb)？", f"too many processes: more than {MAX_PROCESSES}, all "
                                 "killed.  A fork bomb?")
        elif resident > MAX_RESIDENT:
            self.killed_for = tr(f"内存太多 (out of memory)：所有进程合计超过 {MAX_RESIDENT >> 20} MiB，"
                                 "已全部终止 (killed)。", f"out of memory: more than {MAX_RESIDENT >> 20} MiB over "
                                 "all its processes, all killed.")
        elif sum(r.resident for r in runs) > ALL_RESIDENT and not largest.killed_for:
            largest.killed_for = tr(f"内存太多 (out of memory)：同时运行的测试合计超过 {ALL_RESIDENT >> 20} MiB，"
                                    "占用最多的这一个已全部终止 (killed)。", "out of memory: the test files running "
                                    f"at once held more than {ALL_RESIDENT >> 20} MiB together; this one, the "
                                    "largest, was killed.")
            largest.kill_learner()
        if self.killed_for:
            self.kill_learner()

    def watch_checker(self) -> None:
        if self.checker is None or self.killed_for:
            return
        try:
            resident = psutil.Process(self.checker.pid).memory_info().rss
        except psutil.Error:
            return
        if resident > CHECKER_RESIDENT:
            self.killed_for = tr(f"评测进程 (checker) 内存太多 (out of memory)：超过 {CHECKER_RESIDENT >> 20} MiB，"
                                 "已终止 (killed)。返回值太大 (a reply too large to judge)？", "the checker ran out of "
                                 f"memory: more than {CHECKER_RESIDENT >> 20} MiB, killed.  A reply too large to "
                                 "judge?")
            self.checker.kill()
            self.kill_learner()

    def scratch_bytes(self) -> int:
        """Bytes written to the learner's private /tmp and /dev/shm: tmpfs, memory no process's resident size
        shows.  Read through its init's root, once that root is the namespace's own (the sizes tell)."""
        if not self.contained or self.learner is None:
            return 0
        if self.inner is None:
            try:
                children = psutil.Process(self.learner.pid).children()
            except psutil.Error:
                return 0
            if not children:
                return 0
            self.inner = children[0].pid
        used = 0
        for where, size in (("tmp", TMP_BYTES), ("dev/shm", SHM_BYTES)):
            try:
                st = os.statvfs(f"/proc/{self.inner}/root/{where}")
            except OSError:
                continue
            if st.f_blocks * st.f_frsize == size:
                used += (st.f_blocks - st.f_bfree) * st.f_frsize
        return used

    def kill_learner(self) -> None:
        """SIGKILL the learner's group, every process the watch saw, every descendant and marked orphan, until none
        is left (a fork bomb's children are caught in later rounds; orphans come back to the judge)."""
        for _ in range(50):
            victims = []
            if self.learner is not None:
                try:
                    os.killpg(self.learner.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                try:
                    victims += psutil.Process(self.learner.pid).children(recursive=True)
                except psutil.Error:
                    pass
            for pid, created in list(self.seen.items()):   # another run's watch may kill this one
                try:
                    p = psutil.Process(pid)
                    if p.create_time() == created:
                        victims.append(p)
                except psutil.Error:
                    pass
            victims += [p for p in _orphans() if _marker(p) == self.marker]
            alive = [p for p in victims if _running(p)]
            for p in alive:
                try:
                    p.kill()
                except psutil.Error:
                    pass
            _reap(victims)
            if not alive:
                self.resident = 0
                return
            time.sleep(0.01)

    def stop(self, ending: bool = False) -> None:
        """Kill the checker and the learner's whole tree; wait for the two processes we started.  ``ending``: the
        checker is done, the learner process may be ending on its own (its exit status, passed up from inside
        its namespaces, tells how): it gets a moment first."""
        if ending and self.learner is not None:
            try:
                self.learner.wait(EXIT_GRACE)
            except subprocess.TimeoutExpired:
                pass
        for proc in (self.checker, self.learner):
            if proc is not None and proc.poll() is None:
                proc.kill()
        self.kill_learner()
        for proc in (self.checker, self.learner):
            if proc is not None:
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    pass

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.work, ignore_errors=True)
        with _Run.lock:
            _Run.active.discard(self)


def run_test_file(problem: Problem, test: TestFile, submission: Path) -> FileRun:
    """Run one test file against ``submission``: every test in it gets exactly one verdict."""
    _become_subreaper()
    start = time.monotonic()
    deadline = start + problem.timeout
    run = _Run(problem)
    fds: list[int] = []
    try:
        checker_dir, learner_dir, relay_dir = run.work / "checker", run.work / "learner", run.work / "relay"
        for directory in (checker_dir, learner_dir, relay_dir, run.work / "root"):
            directory.mkdir()
        learner_dir.chmod(0o755)
        relay_dir.chmod(0o755)
        scratch = "/tmp" if run.contained else str(learner_dir / "tmp")
        if not run.contained:
            (learner_dir / "tmp").mkdir()
        shutil.copyfile(submission, learner_dir / "submission.py")
        (checker_dir / test.name).write_text(test.source, encoding="utf-8")
        verdict_r, verdict_w = os.pipe()
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        fds += [verdict_r, verdict_w, request_r, request_w, reply_r, reply_w]
        checker_log, output = _private_file(run.work / "checker.log"), _private_file(run.work / "output")
        fds += [checker_log, output]
        key, nonce = os.urandom(32), os.urandom(16).hex()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1",
               "PYTHONHASHSEED": "random", "COURSE_LANG": language()}   # both processes speak the judge's language
        run.checker = subprocess.Popen([sys.executable, "-I", str(CHECKER)], cwd=checker_dir, stdin=subprocess.PIPE,
                                       stdout=checker_log, stderr=subprocess.STDOUT,
                                       env={**env, "HOME": str(checker_dir), "COURSE_RELAY_DIR": str(relay_dir)},
                                       pass_fds=(verdict_w, request_w, reply_r), start_new_session=True)
        _limit_checker(run.checker.pid)
        _close(fds, verdict_w)
        _write(run.checker, {"key": key.hex(), "nonce": nonce, "verdicts": verdict_w, "requests": request_w,
                             "replies": reply_r, "test": str(checker_dir / test.name), "deadline": deadline})
        _close(fds, request_w, reply_r)
        reader = _Records(verdict_r, key, nonce)
        reader.read_until(lambda: reader.ready or reader.done, deadline + CHECKER_GRACE, run)
        if reader.ready and not reader.done:
            run.learner = subprocess.Popen(
                [sys.executable, "-I", "-u", "-B", str(LEARNER)], cwd=learner_dir, stdin=subprocess.PIPE,
                stdout=output, stderr=subprocess.STDOUT, pass_fds=(request_r, reply_w), start_new_session=True,
                env={**env, "HOME": scratch, "TMPDIR": scratch, "PRACTICE_RUN": run.marker})
            _close(fds, request_r, reply_w)
            _limit(run.learner.pid, problem.timeout)
            _write(run.learner, {"requests": request_r, "replies": reply_w,
                                 "view": _view(run, learner_dir, relay_dir) if run.contained else None})
            reader.read_until(lambda: reader.done, deadline + CHECKER_GRACE, run)
        timed_out = not reader.done and not run.killed_for and time.monotonic() >= deadline + CHECKER_GRACE
        run.stop(ending=reader.done)
        shown = _read_output(output) if run.learner is not None else ""
        diagnosis = "" if reader.done else _diagnose(run, checker_log)
    finally:
        for fd in fds:
            os.close(fd)
        run.close()
    results = _verdicts(test, reader.records, timed_out, problem.timeout, run, diagnosis)
    return FileRun(results, _truncate(shown), time.monotonic() - start)


def _view(run: _Run, learner_dir: Path, relay_dir: Path) -> dict:
    """What the learner process sees (practice/contain.py): the system, the interpreter and its libraries, the
    course library and the learner's half of the judge, its submission and the live checks' relay, all read-only;
    a private /tmp and /dev/shm.  Not the rest of the repository (solutions/, the tests, instructor/), not the
    checker's directory."""
    hidden = [str(REPO), str(run.work), *HIDDEN]
    shown = [*contain.SYSTEM_PATHS, *contain.visible(contain.interpreter_paths(), hidden), str(REPO / "course"),
             *(str(PRACTICE / name) for name in LEARNER_FILES), str(learner_dir), str(relay_dir)]
    view = {"root": str(run.work / "root"), "read_only": shown, "hidden": hidden, "tmp_bytes": TMP_BYTES,
            "shm_bytes": SHM_BYTES, "network": False, "cwd": str(learner_dir)}
    if os.geteuid() == 0:
        view.update(uid=contain.unused_uid(), nproc=NPROC_LIMIT)
    return view


HIDDEN: list[str] = []   # more trees the learner must not see, e.g. the course directory of a regrade


def _private_file(path: Path) -> int:
    """A file only the judge can open by name (the learner writes its output through an inherited fd)."""
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)


class _Records:
    """Signed records from the checker's pipe: read with a deadline into a bounded buffer."""

    def __init__(self, fd: int, key: bytes, nonce: str):
        self.fd, self.key, self.nonce = fd, key, nonce
        self.buf, self.records, self.open = b"", [], True

    @property
    def ready(self) -> bool:
        return any(r.get("event") == "ready" for r in self.records)

    @property
    def done(self) -> bool:
        return any(r.get("event") == "done" for r in self.records)

    def read_until(self, condition, deadline: float, run: _Run) -> None:
        while self.open and not condition():
            left = deadline - time.monotonic()
            if left <= 0 or run.killed_for:
                return
            if select.select([self.fd], [], [], min(left, WATCH_INTERVAL))[0]:
                chunk = os.read(self.fd, 65536)
                if not chunk or len(self.buf) + len(chunk) > RECORDS_LIMIT:
                    self.open = False
                else:
                    self.buf += chunk
                    self._parse()
            run.watch()

    def _parse(self) -> None:
        *lines, self.buf = self.buf.split(b"\n")
        for line in lines:
            try:
                envelope = json.loads(line)
                body = envelope["body"]
                good = hmac.compare_digest(hmac.new(self.key, body.encode(), "sha256").hexdigest(), envelope["mac"])
                record = json.loads(body) if good else None
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
            if type(record) is dict and record.get("nonce") == self.nonce and record.get("seq") == len(self.records):
                self.records.append(record)


def _verdicts(test: TestFile, records: list[dict], timed_out: bool, timeout: float, run: _Run,
              diagnosis: str) -> list[Result]:
    got = {r["test"]: r for r in records if r.get("event") == "result"}
    started = [r["test"] for r in records if r.get("event") == "start"]
    running = started[-1] if started and started[-1] not in got else None
    if run.killed_for:
        verdict, why = "crashed", run.killed_for
    elif timed_out:
        verdict, why = "timeout", tr(f"超时 (timeout)：超过 {timeout:g} 秒被终止 (killed)。"
                                     "死循环 (infinite loop) 或死锁？",
                                     f"timeout: killed after {timeout:g} s.  An infinite loop or a deadlock?")
    else:
        verdict, why = "crashed", diagnosis
    results = []
    for name in test.test_names:
        r = got.get(name)
        if r is not None and r.get("verdict") in VERDICTS:
            message = str(r.get("message", ""))
            if r["verdict"] == "crashed" and run.killed_for:
                message = run.killed_for
            elif r["verdict"] == "crashed":
                message += _exit_status(run.learner)
            results.append(Result(test.kind, name, r["verdict"], message))
        elif name == running or (not started and not got and name == test.test_names[0]):
            results.append(Result(test.kind, name, verdict, why))
        else:
            results.append(Result(test.kind, name, verdict, not_run(why)))
    return results


def _diagnose(run: _Run, checker_log: int) -> str:
    """Why the checker stopped without its last record (it is trusted: its own error output is shown)."""
    size = os.fstat(checker_log).st_size
    tail = os.pread(checker_log, 800, max(0, size - 800)).decode("utf-8", "replace").strip()
    code = run.checker.returncode if run.checker else None
    return (tr(f"评测进程 (checker) 意外退出 (exit code {code})", f"the checker exited unexpectedly (exit code {code})")
            + _exit_status(run.learner)
            + (tr("：", ":") + f"\n{tail}" if tail else ""))


def _exit_status(proc: subprocess.Popen | None) -> str:
    if proc is None or proc.returncode is None:
        return ""
    code = proc.returncode
    if code < 0:
        try:
            status = signal.Signals(-code).name
        except ValueError:
            status = f"signal {-code}"
        return tr(f"（学习者进程 learner process: 信号 (signal) {status}）", f" (learner process: {status})")
    return tr(f"（学习者进程 learner process: exit code {code}）", f" (learner process: exit code {code})")


# ---- processes ----------------------------------------------------------------------------------------------------

def _write(proc: subprocess.Popen, header: dict) -> None:
    try:
        proc.stdin.write(json.dumps(header).encode())
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass


def _close(fds: list[int], *which: int) -> None:
    for fd in which:
        fds.remove(fd)
        os.close(fd)


def _limit(pid: int, timeout: float) -> None:
    """Resource limits on the learner process (inherited by everything it starts)."""
    limits = [(resource.RLIMIT_CPU, int(timeout * 4) + 10), (resource.RLIMIT_FSIZE, OUTPUT_FILE_LIMIT),
              (resource.RLIMIT_AS, MEMORY_LIMIT), (resource.RLIMIT_CORE, 0), (resource.RLIMIT_NOFILE, 1024),
              (resource.RLIMIT_NPROC, _user_tasks() + NPROC_LIMIT)]
    for which, value in limits:
        try:
            resource.prlimit(pid, which, (value, value))
        except (ValueError, OSError, AttributeError):
            pass   # not every platform lets us; the watch and the wall-clock kill still hold


def _limit_checker(pid: int) -> None:
    """The checker decodes what the learner sends: its address space is bounded like the learner's."""
    try:
        resource.prlimit(pid, resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ValueError, OSError, AttributeError):
        pass   # the watch still kills it beyond CHECKER_RESIDENT


def _user_tasks() -> int:
    """Tasks (threads) of the judge's user now: RLIMIT_NPROC counts them all, so the learner gets a margin above.
    (It applies to root too, since the learner process drops every capability before it reads its header.)"""
    uid = os.getuid()
    return sum(p.info["num_threads"] or 0 for p in psutil.process_iter(["uids", "num_threads"])
               if p.info["uids"] and p.info["uids"].real == uid)


_subreaper = False


def _become_subreaper() -> None:
    """PR_SET_CHILD_SUBREAPER and PR_SET_DUMPABLE 0 on the judge, once (see the module docstring)."""
    global _subreaper
    if not _subreaper:
        _subreaper = True
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(36, 1, 0, 0, 0)   # PR_SET_CHILD_SUBREAPER
            libc.prctl(4, 0, 0, 0, 0)    # PR_SET_DUMPABLE
        except (OSError, AttributeError):
            pass


def _managed() -> set[int]:
    """The pids of the processes a Popen of ours started (checkers, learners): Popen itself reaps them."""
    return {proc.pid for run in list(_Run.active) for proc in (run.checker, run.learner) if proc is not None}


def _orphans() -> list[psutil.Process]:
    """Processes re-parented to the judge (the subreaper) that no Popen of ours owns."""
    managed = _managed()
    try:
        return [p for p in psutil.Process().children() if p.pid not in managed]
    except psutil.Error:
        return []


def _marker(p: psutil.Process) -> str | None:
    try:
        return p.environ().get("PRACTICE_RUN")
    except (psutil.Error, OSError):
        return None


def _running(p: psutil.Process) -> bool:
    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _reap(processes) -> None:
    """Collect the exit status of our own zombie children among ``processes`` (orphans left to the subreaper).
    Not a Popen's process: reaping it here would leave its Popen an exit code of 0 whatever it was."""
    me, managed = os.getpid(), _managed()
    for p in processes:
        try:
            if p.ppid() == me and p.pid not in managed and p.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(p.pid, os.WNOHANG)
        except (psutil.Error, ChildProcessError, OSError):
            pass


def sweep(everything: bool = False, since: float | None = None) -> None:
    """Kill and reap the orphans left with the judge once no test file runs (only where learners run without a
    pid namespace: inside one, nothing outlives its init): those that carry a run's marker, that a watch saw in a
    learner's tree, or (``since``, grade() itself, whoever calls it) that appeared since then in a session other
    than ours: an escaper that wiped its environment before any watch saw it.  ``everything`` (the CLI, which
    starts no other process) takes every orphan."""
    def ours(p: psutil.Process) -> bool:
        return everything or bool(_marker(p)) or _was_seen(p) or (since is not None and _escaped_since(p, since))

    # The lock is held to the end: a test file of another thread (the regrade grades two students at once) that
    # started meanwhile would have its fresh processes, marked and not yet in _managed(), killed as orphans.
    with _Run.lock:
        if _Run.active:
            return
        for _ in range(20):
            left = [p for p in _orphans() if _running(p) and ours(p)]
            for p in left:
                try:
                    p.kill()
                except psutil.Error:
                    pass
            _reap([p for p in _orphans() if ours(p)])
            if not left:
                return
            time.sleep(0.02)


def _escaped_since(p: psutil.Process, since: float) -> bool:
    try:
        return p.create_time() >= since - 1 and os.getsid(p.pid) != os.getsid(0)
    except (psutil.Error, OSError):
        return False


_SEEN: set[tuple[int, float]] = set()   # (pid, create time) of every process a watch saw, over all runs


def _was_seen(p: psutil.Process) -> bool:
    try:
        return (p.pid, p.create_time()) in _SEEN
    except psutil.Error:
        return False


def abort_all() -> None:
    """The judge was interrupted: kill every running test file's processes and remove its directory now."""
    with _Run.lock:
        _Run.aborting = True
        runs = list(_Run.active)
    for run in runs:
        run.close()


def remove_stale_directories() -> None:
    """Directories of judges that were killed (SIGKILL leaves no chance to clean up) are removed by the next run."""
    for path in Path(tempfile.gettempdir()).glob(f"{TEMP_PREFIX}*-*"):
        pid = path.name[len(TEMP_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _read_output(fd: int) -> str:
    """The learner's output: all of it when short, else OUTPUT_SHOWN bytes from each end (the file may be 32 MiB)."""
    size = os.fstat(fd).st_size
    if size <= 4 * OUTPUT_SHOWN:
        return os.pread(fd, size, 0).decode("utf-8", "replace")
    head = os.pread(fd, OUTPUT_SHOWN, 0).decode("utf-8", "replace")
    tail = os.pread(fd, OUTPUT_SHOWN, size - OUTPUT_SHOWN).decode("utf-8", "replace")
    return f"{head}\n... [" + tr(f"截断 (truncated) {size - 2 * OUTPUT_SHOWN} 个字节",
                                   f"{size - 2 * OUTPUT_SHOWN} bytes cut") + f"] ...\n{tail}"


def _truncate(text: str) -> str:
    if len(text) <= OUTPUT_SHOWN + 200:
        return text
    half = OUTPUT_SHOWN // 2
    return f"{text[:half]}\n... [" + tr(f"截断 (truncated) {len(text) - OUTPUT_SHOWN} 个字符",
                                          f"{len(text) - OUTPUT_SHOWN} characters cut") + f"] ...\n{text[-half:]}"


def print_grade(g: Grade) -> None:
    p = g.problem
    print(f"== {p.slug} · " + tr(f"第 {p.chapter} 章", f"chapter {p.chapter}") + f" · {p.title} ==")
    for run in g.runs:
        for r in run.results:
            print(f"  [{r.file}] {r.name} {'.' * max(2, 44 - len(r.name))} {r.verdict}")
            if r.verdict != "passed" and r.message:
                print("\n".join("      " + ln for ln in r.message.splitlines()))
        if run.output.strip() and any(r.verdict != "passed" for r in run.results):
            print(tr("  程序输出 (your program's output, truncated):", "  your program's output (truncated):"))
            print("\n".join("    | " + ln for ln in run.output.rstrip().splitlines()))
    if not g.isolation:
        print(f"  {tr(*NOT_CONTAINED)}")
    print(tr(f"  得分 (score): {g.score:g}/{p.points}", f"  score: {g.score:g}/{p.points}"))


__all__ = ["Grade", "FileRun", "Result", "grade", "run_test_file", "print_grade", "sweep", "abort_all",
           "remove_stale_directories", "REPO"]
