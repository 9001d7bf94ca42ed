"""The walls around graded code: its own pid, mount, IPC (and network) namespaces, a minimal read-only view of the
file system, private /tmp and /dev/shm, and an identity of its own.

``enter(view)`` is called by a fresh process that is about to run untrusted code (the judge's learner process,
an nbgrader kernel), before it reads or runs any of it.  It returns in a new process, three levels down:

    the calling process (outside)    waits, then exits as the graded process did; its death kills everything below
      init (pid 1 of a new pid ns)   reaps orphans; when the graded process ends, kills everything left and exits
        the graded process (pid 2)   enter() returns here: sees only ``view``, holds no capability

Where the caller is root, the graded process gets an unused uid and gid (``view["uid"]``), so it owns nothing and
can signal nothing outside; without root an unprivileged user namespace gives the same namespaces, with the
caller's uid mapped to itself.  Either way, from inside:

- no process outside the namespace can be seen or signalled (init itself ignores every signal from inside);
- the file system is an empty read-only tmpfs holding only the paths in ``view`` (bound read-only, or masked by an
  empty tmpfs), a fresh /proc of the namespace, a minimal /dev, and /tmp and /dev/shm as small tmpfs mounts that
  disappear with the namespace;
- with ``view["network"]`` false, a network namespace whose only interface is its own loopback;
- capabilities, the bounding set and setuid binaries give nothing back (no_new_privs, securebits locked).

``mode()`` says which of "root" and "user" works on this machine (tried for real, once per process), or "" when
neither does: the caller then runs the code unconfined and says so.  Linux only; standard library only (ctypes on
libc: Python 3.11 has no os.unshare).

Run as a program it is the nbgrader kernel's jail (``course/autograde.py``): ``python contain.py kernel VIEW_JSON
-- ARGV...`` enters the view, copies the kernel's connection file into the private /tmp, and execs ARGV.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import platform
import signal
import socket
import struct
import subprocess
import sys
import threading

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER = 0x00020000, 0x08000000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_SET_NO_NEW_PRIVS = 1, 4, 24, 28, 38
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217, "i686": 217,
                  "armv7l": 218}
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys/devices/system/cpu")
DEVICES = ("null", "zero", "full", "random", "urandom")
UID_BASE = 1 << 30   # graded uids (as root): far above any system or login range


class ContainError(OSError):
    """The namespaces or the view could not be set up."""


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    libc.unshare.argtypes = [ctypes.c_int]
    return libc


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise ContainError(code, f"{what}: {os.strerror(code)}")


# ---- what works here ----------------------------------------------------------------------------------------------

_MODE: list[str] = []   # the answer, once known
_MODE_LOCK = threading.Lock()


def mode() -> str:
    """"root", "user" or "" (see the module docstring): a real ``enter`` in a child process, tried once (every
    thread that asks meanwhile waits for the answer)."""
    with _MODE_LOCK:
        if not _MODE:
            _MODE.append(_probe_mode())
    return _MODE[0]


def _probe_mode() -> str:
    if not sys.platform.startswith("linux"):
        return ""
    import tempfile

    root_dir = tempfile.mkdtemp(prefix="contain-probe-")
    try:
        probe = subprocess.run([sys.executable, "-I", "-S", os.path.abspath(__file__), "probe", root_dir],
                               capture_output=True, text=True, timeout=60)
        return probe.stdout.strip() if probe.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""
    finally:
        os.rmdir(root_dir)


def unused_uid() -> int:
    """A uid (also used as gid) no account and no running process has: the graded process owns nothing."""
    import pwd

    used = set()
    for entry in os.listdir("/proc"):
        try:
            used.add(os.stat(f"/proc/{entry}").st_uid)
        except (OSError, ValueError):
            pass
    while True:
        uid = UID_BASE + int.from_bytes(os.urandom(3), "big")
        try:
            pwd.getpwuid(uid)
        except KeyError:
            if uid not in used:
                return uid


_PATHS: list[list[str]] = []


def interpreter_paths() -> list[str]:
    """What this interpreter needs to start and import its libraries when run with ``-I`` (as graded processes
    are): its prefixes, its executable's directory and its isolated sys.path.  Asked once, in a child process."""
    with _MODE_LOCK:
        if not _PATHS:
            out = subprocess.run([sys.executable, "-I", os.path.abspath(__file__), "paths"], capture_output=True,
                                 text=True, timeout=60, check=True)
            _PATHS.append(json.loads(out.stdout))
    return _PATHS[0]


def _own_paths() -> list[str]:
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable)), os.path.dirname(os.path.abspath(sys.executable))}
    paths.update(p for p in sys.path if p and os.path.isabs(p) and os.path.exists(p))
    return sorted(paths)


def visible(paths, hidden) -> list[str]:
    """``paths`` without those inside a ``hidden`` tree, except the interpreter's own (a virtual environment kept
    in the repository stays visible)."""
    return [p for p in paths if p == sys.prefix or _inside(p, sys.prefix)
            or not any(p == h or _inside(p, h) for h in hidden)]


# ---- entering -----------------------------------------------------------------------------------------------------

def enter(view: dict) -> str:
    """Set up the walls and return in the contained process (see the module docstring).  ``view``:

    ``root``: an empty directory to mount the new root on (in the private mount namespace only);
    ``read_only``: paths shown at the same place, read-only; ``hidden``: paths masked by an empty tmpfs where they
    lie inside a read-only path (what ``read_only`` lists inside them is shown again);
    ``tmp_bytes``, ``shm_bytes``: sizes of /tmp and /dev/shm; ``network``: keep the caller's network;
    ``uid``: the identity to take as root; ``nproc``: RLIMIT_NPROC then; ``cwd``: where to start.
    Raises ContainError before anything has changed when the namespaces cannot be created."""
    libc = _libc()
    root = os.geteuid() == 0
    outside_uid, outside_gid = os.getuid(), os.getgid()
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | (0 if view.get("network") else CLONE_NEWNET)
    _check(libc.unshare(flags | (0 if root else CLONE_NEWUSER)), "unshare")
    if not root:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{outside_uid} {outside_uid} 1")
        _write("/proc/self/gid_map", f"{outside_gid} {outside_gid} 1")
    status_r, status_w = os.pipe()
    init = os.fork()
    if init:
        _outside(init, status_r, status_w)
    os.close(status_r)
    try:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)   # (getppid() is 0 here: the parent is outside)
        _build(libc, view)
        if not view.get("network"):
            _loopback_up()
    except BaseException as e:  # noqa: BLE001  (reported by the graded process, which is what the caller waits on)
        _report_and_exit(status_w, e)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)   # before the fork: the graded process can never ptrace init
    graded = os.fork()
    if graded:
        if not root:   # init of a user namespace needs nothing (root keeps CAP_KILL to end a job of another uid)
            _drop_capabilities(libc)
        _init(graded, status_w)
    os.close(status_w)
    os.chdir(view.get("cwd") or "/")   # before the identity goes: the directory may be closed to the new uid
    _drop_identity(libc, view if root else None)
    return "root" if root else "user"


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _report_and_exit(status_w: int, error: BaseException) -> None:
    os.write(2, f"contain: {error}\n".encode())
    os.write(status_w, b"exit 70\n")
    os._exit(70)


def _outside(init: int, status_r: int, status_w: int) -> None:
    """The calling process: hold nothing, wait for init, then end as the graded process ended."""
    os.close(status_w)
    os.dup2(status_r, 3)
    os.closerange(4, 65536)
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # a kernel interrupt goes to the group: only the graded process acts
    os.waitpid(init, 0)
    try:
        kind, value = os.read(3, 64).decode().split()
    except ValueError:
        kind, value = "exit", "70"
    if kind == "signal":
        signal.signal(int(value), signal.SIG_DFL)
        os.kill(os.getpid(), int(value))
    os._exit(int(value))


def _init(graded: int, status_w: int) -> None:
    """pid 1: reap every orphan; once the graded process has ended, kill what is left and report how it ended."""
    os.dup2(status_w, 3)
    os.closerange(4, 65536)
    for fd in (0, 1, 2):
        os.dup2(os.open(os.devnull, os.O_RDWR), fd)
    ended = None
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if pid == graded:
            ended = status
            try:
                os.kill(-1, signal.SIGKILL)   # everything else in the namespace (never init itself)
            except ProcessLookupError:
                pass
    if ended is not None and os.WIFSIGNALED(ended):
        os.write(3, f"signal {os.WTERMSIG(ended)}\n".encode())
    else:
        os.write(3, f"exit {os.waitstatus_to_exitcode(ended) if ended is not None else 70}\n".encode())
    os._exit(0)


def _build(libc, view: dict) -> None:
    """The new root: a read-only tmpfs holding the view, a fresh /proc, /dev, /tmp, /dev/shm; then pivot_root."""
    _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
    new = view["root"]
    _mount_tmpfs(libc, new, "size=4m,nr_inodes=4096,mode=0755")
    tmp_options = "size={},nr_inodes=65536,mode=1777"
    ro = [p for p in view.get("read_only", ()) if os.path.lexists(p)]
    masks = [h for h in view.get("hidden", ()) if any(_inside(h, p) for p in ro)]
    # a path already shown by a read-only ancestor is bound again only when a mask lies between them
    entries = [(p, "ro") for p in ro if not any(_inside(p, a) and not any(_inside(m, a) and _inside(p, m)
                                                                            for m in masks) for a in ro)]
    entries += [(m, "mask") for m in masks]
    entries += [("/proc", "proc"), ("/dev", "dev"), ("/dev/shm", tmp_options.format(view.get("shm_bytes", 64 << 20))),
                ("/tmp", tmp_options.format(view.get("tmp_bytes", 256 << 20)))]
    read_only_mounts = [new]
    for path, kind in sorted(entries, key=lambda e: (e[0].count("/"), e[0])):
        target = new + path
        if kind == "ro" and os.path.islink(path):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if not os.path.lexists(target):
                os.symlink(os.readlink(path), target)
            continue
        is_dir = kind != "ro" or os.path.isdir(path)
        _mountpoint(target, is_dir)
        if kind == "ro":
            _check(libc.mount(path.encode(), target.encode(), None, MS_BIND, None), f"bind {path}")
            _check(libc.mount(None, target.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY | _locked(path), None),
                   f"read-only {path}")
        elif kind == "mask":
            _mount_tmpfs(libc, target, "size=4k,nr_inodes=64,mode=0755")
            read_only_mounts.append(target)
        elif kind == "proc":
            _check(libc.mount(b"proc", target.encode(), b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mount /proc")
        elif kind == "dev":
            _mount_tmpfs(libc, target, "size=64k,nr_inodes=64,mode=0755")
            for name in DEVICES:
                _mountpoint(f"{target}/{name}", False)
                _check(libc.mount(f"/dev/{name}".encode(), f"{target}/{name}".encode(), None, MS_BIND, None),
                       f"bind /dev/{name}")
            for name, link in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                               ("stderr", "/proc/self/fd/2")):
                os.symlink(link, f"{target}/{name}")
            read_only_mounts.append(target)
        else:
            _mount_tmpfs(libc, target, kind, MS_NOSUID | MS_NODEV)
    for target in read_only_mounts:   # every mount point exists now: nothing more can be created there
        _check(libc.mount(None, target.encode(), None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None),
               f"read-only {target}")
    os.chdir(new)
    number = SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise ContainError(errno.ENOSYS, f"pivot_root: unknown system call number on {platform.machine()}")
    _check(libc.syscall(number, b".", b"."), "pivot_root")
    _check(libc.umount2(b".", MNT_DETACH), "detach the old root")
    os.chdir("/")


def _inside(path: str, ancestor: str) -> bool:
    return path.startswith(ancestor.rstrip("/") + "/")


def _mount_tmpfs(libc, target: str, options: str, flags: int = MS_NOSUID | MS_NODEV) -> None:
    _check(libc.mount(b"tmpfs", target.encode(), b"tmpfs", flags, options.encode()), f"tmpfs on {target}")


def _mountpoint(target: str, is_dir: bool) -> None:
    if is_dir:
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))


def _locked(path: str) -> int:
    """The flags of the mount holding ``path`` that a remount must keep (a user namespace may not clear them)."""
    f = os.statvfs(path).f_flag
    flags = MS_NOSUID | MS_NODEV
    for st, ms in ((os.ST_NOEXEC, MS_NOEXEC), (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME),
                   (os.ST_RELATIME, MS_RELATIME)):
        if f & st:
            flags |= ms
    return flags


def _loopback_up() -> None:
    """The new network namespace's loopback, up: graded code can talk to itself (gloo on 127.0.0.1), not out."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH14x", b"lo", 0)
        current = struct.unpack("16sH14x", fcntl.ioctl(s, 0x8913, request))[1]            # SIOCGIFFLAGS
        fcntl.ioctl(s, 0x8914, struct.pack("16sH14x", b"lo", current | 0x1 | 0x40))    # SIOCSIFFLAGS: UP, RUNNING


def _drop_identity(libc, as_root: dict | None) -> None:
    """No capability, no way back; as root also another uid and gid and no supplementary group."""
    for cap in range(64):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    if as_root is not None:
        uid = as_root["uid"]
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)   # from uid 0 to another: every capability is gone
        if "nproc" in as_root:
            import resource
            resource.setrlimit(resource.RLIMIT_NPROC, (as_root["nproc"], as_root["nproc"]))
    else:
        _drop_capabilities(libc)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)   # cleared by the uid change; init is the parent


def _drop_capabilities(libc) -> None:
    _check(libc.prctl(PR_SET_SECUREBITS, 0x2F, 0, 0, 0), "securebits")   # NOROOT, NO_SETUID_FIXUP (+ locked)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)   # _LINUX_CAPABILITY_VERSION_3, this process
    _check(libc.capset(header, (ctypes.c_uint32 * 6)()), "drop capabilities")


def without_namespaces() -> None:
    """Where no namespace can be made: no new privileges and, as root, no capability (the judge and the checker
    stay out of ptrace's and /proc's reach).  Files, signals and the network are as open as the user's."""
    if not sys.platform.startswith("linux"):
        return
    libc = _libc()
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if os.geteuid() == 0:
        for cap in range(64):
            libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
        _drop_capabilities(libc)


# ---- the probe and the kernel jail --------------------------------------------------------------------------------

def system_view(root_dir: str, hidden: list[str]) -> dict:
    """The system directories and this interpreter, read-only, with nothing else."""
    return {"root": root_dir, "read_only": [*SYSTEM_PATHS, *visible(_own_paths(), hidden)], "hidden": hidden}


def _probe(root_dir: str) -> int:
    try:
        how = enter({**system_view(root_dir, []), "uid": UID_BASE - 1, "network": False})
    except ContainError:
        return 1
    # contained: nothing of the old root is left, /proc is the namespace's own, /tmp writable, /usr not
    ok = (not os.path.exists(root_dir) and os.getpid() == 2 and os.path.isdir("/proc/self")
          and os.access("/tmp", os.W_OK) and not os.access("/usr", os.W_OK))
    print(how if ok else "", flush=True)
    os._exit(0 if ok else 1)


def _kernel(argv: list[str]) -> None:
    """Enter VIEW_JSON (plus the system, this interpreter and the current directory), then exec the kernel with
    its connection file copied into the private /tmp; where no namespace can be made, exec it as it is."""
    import tempfile

    view, command = json.loads(argv[0]), argv[argv.index("--") + 1:]
    if not mode():
        print("contain: no namespace can be made here: the kernel runs unconfined", file=sys.stderr, flush=True)
        os.execvp(command[0], command)
    connection = command.index("-f") + 1 if "-f" in command else None
    text = open(command[connection]).read() if connection else None
    cwd = os.getcwd()
    view.update(root=os.path.join(tempfile.gettempdir(), f"course-jail-{os.getuid()}"), cwd=cwd,
                read_only=[*SYSTEM_PATHS, *visible(_own_paths(), view.get("hidden", [])), *view["read_only"], cwd])
    os.makedirs(view["root"], mode=0o755, exist_ok=True)   # an empty mount point, shared by every jail
    if os.geteuid() == 0:
        view["uid"] = unused_uid()
    enter(view)
    if connection:
        command[connection] = "/tmp/kernel.json"
        fd = os.open(command[connection], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, text.encode())
        os.close(fd)
    os.environ.update(HOME="/tmp", TMPDIR="/tmp", IPYTHONDIR="/tmp/.ipython", MPLCONFIGDIR="/tmp/.matplotlib",
                      JUPYTER_RUNTIME_DIR="/tmp/.jupyter")
    os.environ.pop("JPY_PARENT_PID", None)   # its parent here is init (pid 1): ipykernel would take it for gone
    os.execvp(command[0], command)


if __name__ == "__main__":
    if sys.argv[1:2] == ["probe"]:
        sys.exit(_probe(sys.argv[2]))
    if sys.argv[1:2] == ["paths"]:
        print(json.dumps(_own_paths()))
        sys.exit(0)
    if sys.argv[1:2] == ["kernel"]:
        _kernel(sys.argv[2:])
    sys.exit("usage: contain.py probe ROOT_DIR | paths | kernel VIEW_JSON -- ARGV...")
