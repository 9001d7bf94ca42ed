"""Prepare this machine for the course's local JupyterHub; every step is skipped when it is already done.

    sudo .venv/bin/python instructor/hub/provision.py                 # everything (what `make hub` runs first)
    sudo .venv/bin/python instructor/hub/provision.py --system-only   # steps 1-3, 6, 7, once per machine (`make test`)
    sudo .venv/bin/python instructor/hub/provision.py --setting-only  # steps 4, 5 and PP_HUB_HOMES (the tests: a
                                                                      # private exchange and course each)

1. Debian packages it needs and lacks: ``acl`` (setfacl), ``nodejs`` and ``npm``.
2. The proxy: configurable-http-proxy from npm, pinned in package.json / package-lock.json, installed in
   ``instructor/hub/node_modules`` (never globally).
3. Real system users (hub.py names them): the instructor and the demo students, who log in, and the grader account
   that runs the course service and owns the course directory.  Students are also in the Unix group
   ``pp-students``, every one of them in ``pp-hub``; home directories are private (0700).
4. The exchange, as nbgrader documents it for JupyterHub: one directory everybody may write (``NBGRADER_EXCHANGE``,
   default nbgrader's ``/usr/local/share/nbgrader/exchange``).
5. The course directory of the grader account (``PP_HUB_COURSE``), private to it: ``nbgrader_config.py`` loads
   ``instructor/nbgrader_config.py``, ``source`` links to ``instructor/source``.
6. Access to this clone: the hub's accounts run its Python environment, so every directory above the clone and the
   interpreter must let them through (granted to ``pp-hub`` with an ACL where it does not let everyone through: with
   Python under /root, that lets them open what /root holds for everyone by name); students may reach the
   environment, the ``course`` package and the hub's Jupyter settings and nothing else of the clone (the reference
   solutions, the hidden tests, the instructor's sources, the git history), denied to ``pp-students`` by ACLs.
7. A check, as each account, that it can import what its server needs, and, as a student, that a solution is
   out of reach.

Exit status 0, or 1 with one line saying what failed.
"""

from __future__ import annotations

import argparse
import grp
import json
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

HUB = Path(__file__).resolve().parent
sys.path.insert(0, str(HUB))
import hub  # noqa: E402  (instructor/hub/hub.py: the names and paths)

REPO = hub.REPO
# What a student's server reads in the clone (everything else of the clone is denied to pp-students).
STUDENT_READABLE = [hub.PYTHON_PREFIX, REPO / "course", hub.JUPYTER_CONFIG]


class ProvisionError(Exception):
    pass


def run(*cmd, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise ProvisionError(f"{' '.join(map(str, cmd))} failed: {(result.stderr or result.stdout).strip()[-300:]}")
    return result


def say(text: str) -> None:
    print(f"provision: {text}", flush=True)


def debian_packages() -> None:
    missing = [package for package, program in (("acl", "setfacl"), ("nodejs", "node"), ("npm", "npm"))
               if shutil.which(program) is None]
    if not missing:
        return
    if shutil.which("apt-get") is None:
        raise ProvisionError(f"the hub needs {', '.join(missing)} (Debian packages): install them")
    say(f"installing Debian packages: {' '.join(missing)}")
    run("apt-get", "update", "-q")
    run("apt-get", "install", "-y", "-q", "--no-install-recommends", *missing,
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})


def proxy() -> None:
    pinned = json.loads((HUB / "package.json").read_text())["dependencies"]["configurable-http-proxy"]
    installed = HUB / "node_modules" / "configurable-http-proxy" / "package.json"
    if installed.is_file() and json.loads(installed.read_text()).get("version") == pinned:
        return
    say(f"installing configurable-http-proxy {pinned} from npm into {HUB / 'node_modules'}")
    run("npm", "ci", "--no-audit", "--no-fund", "--prefix", str(HUB))


def group(name: str) -> None:
    try:
        grp.getgrnam(name)
    except KeyError:
        say(f"creating group {name}")
        run("groupadd", "--system", name)


def user(name: str, groups: list[str]) -> None:
    try:
        pwd.getpwnam(name)
    except KeyError:
        say(f"creating user {name}")
        run("useradd", "--create-home", "--shell", "/bin/bash", "--user-group", name)
    have = {g.gr_name for g in grp.getgrall() if name in g.gr_mem}
    if set(groups) - have:
        run("usermod", "--append", "--groups", ",".join(groups), name)
    home = Path(pwd.getpwnam(name).pw_dir)
    if home.stat().st_mode & 0o077:
        home.chmod(0o700)


def working_directories(homes: Path) -> None:
    """PP_HUB_HOMES: one private working directory per login, in place of their home directories."""
    for name in [*hub.INSTRUCTORS, *hub.STUDENTS]:
        account = pwd.getpwnam(name)
        path = homes / name
        path.mkdir(parents=True, exist_ok=True)
        os.chown(path, account.pw_uid, account.pw_gid)
        path.chmod(0o700)


def exchange(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    if root.stat().st_mode & 0o777 != 0o777:
        say(f"exchange {root}: everybody may write (nbgrader's setup for JupyterHub)")
        root.chmod(0o777)


def course_directory(course: Path) -> None:
    grader = pwd.getpwnam(hub.GRADER)
    course.mkdir(parents=True, exist_ok=True)
    config = course / "nbgrader_config.py"
    text = (f'"""The course directory of the hub\'s course service (written by instructor/hub/provision.py)."""\n\n'
            f"c = get_config()  # noqa: F821\nload_subconfig({str(REPO / 'instructor' / 'nbgrader_config.py')!r})"
            "  # noqa: F821\n"
            "# the course's settings, but this folder is the course directory (the one above names its own folder)\n"
            f"c.CourseDirectory.root = {str(course)!r}\n")
    if not config.is_file() or config.read_text() != text:
        config.write_text(text)
    source = course / "source"
    if not source.is_symlink() or source.readlink() != REPO / "instructor" / "source":
        if source.is_symlink():
            source.unlink()
        source.symlink_to(REPO / "instructor" / "source")
    for path in [course, *course.rglob("*")]:
        if not path.is_symlink() and (path.stat().st_uid, path.stat().st_gid) != (grader.pw_uid, grader.pw_gid):
            os.chown(path, grader.pw_uid, grader.pw_gid)
    course.chmod(0o700)


def acl(entry: str, path: Path) -> bool:
    """Add ``entry`` to ``path``'s ACL; False when it was there already."""
    if entry in run("getfacl", "--omit-header", "--absolute-names", str(path)).stdout.split():
        return False
    run("setfacl", "-m", entry, str(path))
    return True


def clone_access() -> None:
    """Every directory above the clone and the interpreter lets the hub's accounts through; students reach
    STUDENT_READABLE only."""
    interpreter = hub.PYTHON.resolve()
    for parent in sorted({p for path in (REPO, Path(sys.base_prefix), interpreter) for p in path.parents}):
        if not parent.stat().st_mode & 0o001 and acl("group:pp-hub:--x", parent):
            say(f"{parent}: the hub's accounts (group pp-hub) may now pass through, to reach {REPO} and "
                f"{interpreter}")
    for keep in STUDENT_READABLE:
        if not keep.is_relative_to(REPO):
            continue
        # at each level from the clone down to `keep`: pass through, no listing, every other entry denied
        level = REPO
        for part in keep.relative_to(REPO).parts:
            acl("group:pp-students:--x", level)
            for entry in level.iterdir():
                if entry.name != part and not any(k.is_relative_to(entry) for k in STUDENT_READABLE):
                    acl("group:pp-students:---", entry)
            level = level / part


def check_accounts() -> None:
    imports = "import course.checks, course.notebook_setup, nbgrader, jupyterhub, jupyterlab"
    checks = {name: subprocess.Popen(["runuser", "-u", name, "--", str(hub.PYTHON), "-c", imports], cwd="/",
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
              for name in [*hub.INSTRUCTORS, *hub.STUDENTS, hub.GRADER]}   # all at once: each import takes seconds
    for name, check in checks.items():
        _, err = check.communicate()
        if check.returncode != 0:
            raise ProvisionError(f"{name} cannot run the course's Python ({hub.PYTHON}): "
                                 f"{err.strip().splitlines()[-1:]}")
    probe = REPO / "solutions"
    if probe.exists():
        peek = subprocess.run(["runuser", "-u", hub.STUDENTS[0], "--", "ls", str(probe)], capture_output=True)
        if peek.returncode == 0:
            raise ProvisionError(f"{hub.STUDENTS[0]} can read {probe}: the ACLs did not take (does the file system "
                                 "support them?)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--system-only", action="store_true",
                       help="packages, proxy, accounts and access to the clone; no exchange, no course directory")
    which.add_argument("--setting-only", action="store_true",
                       help="the exchange, the course directory and PP_HUB_HOMES, for accounts made before")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("provision: the hub runs real system users: run this as root (sudo); to skip the hub's tests: "
              "pytest -m 'not hub'", file=sys.stderr)
        return 1
    try:
        if not args.setting_only:
            debian_packages()
            proxy()
            for name in ("pp-hub", "pp-students"):
                group(name)
            for name in hub.INSTRUCTORS:
                user(name, ["pp-hub"])
            for name in hub.STUDENTS:
                user(name, ["pp-hub", "pp-students"])
            user(hub.GRADER, ["pp-hub"])
        if not args.system_only:
            exchange(hub.exchange_root())
            course_directory(hub.course_directory())
            if os.environ.get("PP_HUB_HOMES"):
                working_directories(Path(os.environ["PP_HUB_HOMES"]))
        if not args.setting_only:
            clone_access()
            check_accounts()
    except (ProvisionError, OSError) as e:
        print(f"provision: {e}", file=sys.stderr)
        return 1
    except KeyError as e:   # pwd/grp: an account or group of the hub is missing
        print(f"provision: no account {e}: run instructor/hub/provision.py (or --system-only) first", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
