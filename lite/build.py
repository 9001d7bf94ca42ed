"""Build the browser edition: the whole course as an offline JupyterLite site in ``_lite/`` (``make lite``).

    python lite/build.py                 # -> _lite/ ; serve it with: python -m http.server -d _lite
    python lite/build.py --out DIR --add extra.ipynb

Nothing is fetched but packages, from their registries: the Pyodide runtime from npm (``npm pack``), the wheels
the kernel loads from PyPI (``pip download``), JupyterLite itself from PyPI into a tool environment of its own
(``.lite-cache/tools``).  JupyterLite's kernel extension works only in JupyterLite, and JupyterLab loads every
front-end extension it finds in its environment (disabled ones too), so it must not be installed beside the
course's Lab.  Versions: Pyodide is pinned in ``[tool.course.lite]``, JupyterLite in the ``lite`` extra (both in
pyproject.toml); a wheel Pyodide's lock names is taken at the version the lock names; every other wheel at the
version installed here, so the browser runs the same ipywidgets as the desktop.

The site holds:
- ``static/pyodide/``: the runtime, the wheels, and a ``pyodide-lock.json`` rewritten to be true for them: the
  npm package ships no wheels and Pyodide rebuilds even pure ones, so each entry gets the PyPI file's name and
  sha256, and the lock lists exactly the wheels shipped (an ``import numpy`` fails at once instead of fetching);
- the ``course`` package as a wheel (with its chapter sources and recordings), preloaded with ipywidgets;
- ``files/``: every chapter notebook of every edition and the glossary, in the folder layout of
  ``course/chapters`` (relative links keep working), and ``exercises/``: each chapter's exercises with their
  public self-checks (nbgrader's student version; hidden tests and grading stay with the judge and nbgrader).

Three failures that otherwise leave a kernel that never starts are checked after the build, each named in one
line: a stale doit cache that skipped writing ``pyodideUrl``, a wheel missing from the lock (or a lock entry
without its wheel), and ipywidgets without jupyterlab_widgets beside it (the PyPI fallback is off).
"""

from __future__ import annotations

import argparse
import contextlib
import email.parser
import fcntl
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "course" / "chapters"
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"
KERNELSPEC = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}
# What the Pyodide kernel loads when it starts (see its worker: micropip, then ipykernel, comm, pyodide-kernel,
# jedi, ipython) and what the course needs besides: preloaded from the lock in one go.
PRELOAD = ("micropip", "comm", "jedi", "ipython", "ipywidgets", "course")
# Wheels that are not in Pyodide's lock: taken at the version installed in this (the desktop) environment.
EXTRA = ("comm", "ipywidgets", "jupyterlab-widgets", "widgetsnbextension", "ipython-pygments-lexers")
# The front-end extensions the site needs (the kernel, the widget manager); nbgrader's needs a server.
KERNEL_EXTENSION = "@jupyterlite/pyodide-kernel-extension"
WIDGETS_EXTENSION = "@jupyter-widgets/jupyterlab-manager"


class BuildError(Exception):
    """A build that cannot be made, or a site that would not start; the message says which and what to do."""


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def pins() -> dict:
    try:
        return _project()["tool"]["course"]["lite"]
    except KeyError:
        raise BuildError("pyproject.toml has no [tool.course.lite] table (the pinned Pyodide version)") from None


def tools(cache: Path) -> Path:
    """The build's own environment (JupyterLite and its Pyodide kernel, the ``lite`` extra's pins); its prefix.

    Made on first use and again when the pins change; pip's cache makes a rebuild quick."""
    try:
        wanted = _project()["project"]["optional-dependencies"]["lite"]
    except KeyError:
        raise BuildError("pyproject.toml has no 'lite' extra (the pinned JupyterLite packages)") from None
    prefix = cache / "tools"
    stamp = prefix / "course-lite-pins.json"
    if stamp.is_file() and json.loads(stamp.read_text(encoding="utf-8")) == wanted:
        return prefix
    shutil.rmtree(prefix, ignore_errors=True)
    run([sys.executable, "-m", "venv", str(prefix)], "creating the build environment")
    run([str(prefix / "bin" / "python"), "-m", "pip", "install", "--quiet", *wanted],
        f"installing {' '.join(wanted)} into {prefix}")
    stamp.write_text(json.dumps(wanted), encoding="utf-8")
    return prefix


def run(cmd: list[str], what: str, cwd: Path | None = None) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if done.returncode:
        # both streams: jupyter lite prints its failing task on stdout, warnings on stderr
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-8:])
        raise BuildError(f"{what} failed ({' '.join(cmd[:3])} ... exit {done.returncode}):\n{tail}")
    return done.stdout


# ---- the pieces ---------------------------------------------------------------------------------------------------
def pyodide_runtime(version: str, cache: Path) -> Path:
    """The npm package ``pyodide@version``, unpacked (cached)."""
    unpacked = cache / f"pyodide-{version}"
    if (unpacked / "pyodide-lock.json").exists():
        return unpacked
    if shutil.which("npm") is None:
        raise BuildError("npm is needed to fetch the Pyodide runtime (the npm package pyodide); install Node.js")
    tgz = cache / f"pyodide-{version}.tgz"
    if not tgz.exists():
        run(["npm", "pack", f"pyodide@{version}", "--pack-destination", str(cache), "--silent"],
            f"npm pack pyodide@{version}")
    tmp = Path(tempfile.mkdtemp(dir=cache))
    with tarfile.open(tgz) as tar:
        tar.extractall(tmp, filter="data")
    (tmp / "package").rename(unpacked)
    tmp.rmdir()
    return unpacked


def download(requirement: str, wheels: Path) -> Path:
    """A pure-Python wheel from PyPI (cached): ``pip download --no-deps``."""
    name, version = requirement.split("==")
    stem = canonical(name).replace("-", "_")
    found = [w for w in wheels.glob("*.whl") if canonical(w.name.split("-")[0]).replace("-", "_") == stem
             and w.name.split("-")[1] == version]
    if not found:
        run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", "3.14",
             "--platform", "any", "--implementation", "py", "--quiet", "--dest", str(wheels), requirement],
            f"pip download {requirement}")
        found = [w for w in wheels.glob("*.whl") if canonical(w.name.split("-")[0]).replace("-", "_") == stem
                 and w.name.split("-")[1] == version]
    if not found or not found[0].name.endswith("-none-any.whl"):
        raise BuildError(f"no pure-Python wheel of {requirement} on PyPI: the browser cannot load it")
    return found[0]


def course_wheel(out: Path) -> Path:
    """The course package as a wheel (with package data: chapter sources, recordings)."""
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(out), str(ROOT)],
        "building the course wheel")
    (wheel,) = out.glob("course-*.whl")
    return wheel


def wheel_facts(wheel: Path) -> dict:
    """Name, version, top-level imports and unconditional requirements (as Pyodide's lock records them)."""
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = email.parser.Parser().parsestr(z.read(meta_name).decode())
        top = next((n for n in names if n.endswith(".dist-info/top_level.txt")), None)
        imports = (z.read(top).decode().split() if top else
                   sorted({n.split("/")[0] for n in names if "/" in n and n.split("/")[1] == "__init__.py"}))
    requires = []
    for req in meta.get_all("Requires-Dist") or []:
        spec, _, marker = req.partition(";")
        if marker and not _marker_true(marker):
            continue
        requires.append(canonical(re.split(r"[\s<>=!~\[(]", spec.strip(), maxsplit=1)[0]))
    return {"name": canonical(meta["Name"]), "version": meta["Version"], "imports": imports, "requires": requires}


def _marker_true(marker: str) -> bool:
    """Evaluate an environment marker for Pyodide (CPython 3.14 on emscripten); extras never apply."""
    from packaging.markers import Marker

    env = {"python_version": "3.14", "python_full_version": "3.14.2", "sys_platform": "emscripten",
           "platform_system": "Emscripten", "platform_machine": "wasm32", "os_name": "posix",
           "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": ""}
    return Marker(marker.strip()).evaluate(env)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_lock(runtime: Path, dest: Path, wheels: Path, course: Path, shims: Path) -> dict:
    """Write Pyodide's runtime and a lock that lists exactly the wheels shipped beside it, with their real files."""
    upstream = json.loads((runtime / "pyodide-lock.json").read_text(encoding="utf-8"))
    known = {canonical(k): v for k, v in upstream["packages"].items()}
    dest.mkdir(parents=True)
    for item in runtime.iterdir():
        if item.suffix not in (".map", ".ts") and item.name not in ("package.json", "README.md"):
            shutil.copy2(item, dest / item.name)
    entries: dict[str, dict] = {}
    todo = list(PRELOAD)
    while todo:
        name = canonical(todo.pop())
        if name in entries:
            continue
        if name == "course":
            wheel = course
        elif name == "widgetsnbextension":      # the kernel's own stand-in, as it installs it itself
            wheel = next(shims.glob("widgetsnbextension-4.*-py3-none-any.whl"))
        elif name in known:
            wheel = download(f"{name}=={known[name]['version']}", wheels)
        elif name in EXTRA:
            wheel = download(f"{name}=={metadata.version(name)}", wheels)
        else:
            raise BuildError(f"{name} is needed in the browser but is neither in Pyodide's lock nor in lite/build.py's "
                             f"EXTRA list (wheels taken at this environment's version): add it there")
        facts = wheel_facts(wheel)
        depends = sorted(set(facts["requires"]) | {canonical(d) for d in known.get(name, {}).get("depends", [])})
        if name == "course":
            depends = ["ipywidgets"]              # the desktop's numpy, torch, ... are what the browser goes without
        shutil.copy2(wheel, dest / wheel.name)
        entries[name] = {"name": name, "version": facts["version"], "file_name": wheel.name, "install_dir": "site",
                         "sha256": sha256(wheel), "package_type": "package", "imports": facts["imports"],
                         "depends": depends, "unvendored_tests": False}
        todo += depends
    lock = {"info": upstream["info"], "packages": dict(sorted(entries.items()))}
    (dest / "pyodide-lock.json").write_text(json.dumps(lock, indent=1) + "\n", encoding="utf-8")
    return lock


def labextension(name: str, prefix: Path) -> Path:
    """Where a front-end extension is installed in an environment; a clear error when it is not."""
    path = prefix / "share" / "jupyter" / "labextensions" / name
    if not (path / "package.json").exists():
        raise BuildError(f"the front-end extension {name} is not installed in {prefix}")
    return path


def exercises_notebooks(out: Path) -> list[str]:
    """Each chapter's exercises with their public self-checks: nbgrader's student version of the instructor
    notebook (solutions stubbed, hidden tests removed); exercises that need torch are named, not run."""
    import nbformat
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

    sys.path.insert(0, str(ROOT / "instructor"))
    import generate

    by_chapter: dict[int, list] = {}
    for e in generate.read_exercises(ROOT / "practice" / "problems", ROOT / "solutions"):
        by_chapter.setdefault(e.chapter, []).append(e)
    written = []
    out.mkdir(parents=True, exist_ok=True)
    for chapter, exercises in sorted(by_chapter.items()):
        runnable = [e for e in exercises if "torch" not in e.requires]
        desktop = [e for e in exercises if "torch" in e.requires]
        nb = generate.chapter_notebook(chapter, runnable) if runnable else nbformat.v4.new_notebook()
        nb, _ = ClearSolutions(code_stub={"python": "raise NotImplementedError()"}).preprocess(nb, {})
        nb, _ = ClearHiddenTests().preprocess(nb, {})
        if desktop:
            names = ", ".join(f"`{e.slug}`" for e in desktop)
            nb.cells.insert(1 if runnable else 0, nbformat.v4.new_markdown_cell(
                f"需要 torch 的练习只能在桌面版里做 (these need torch: desktop edition only): {names}。"
                f"用 `python practice/judge.py start SLUG` 开始。"))
        nb.metadata["kernelspec"] = KERNELSPEC
        path = out / f"ch{chapter:02d}.ipynb"
        nbformat.write(nb, path)
        written.append(path.name)
    return written


def contents(files: Path, extra: list[Path]) -> None:
    """Every chapter notebook (every edition) and the glossary, in course/chapters' layout; then ``extra``."""
    shutil.copytree(CHAPTERS, files / "chapters",
                    ignore=shutil.ignore_patterns("_src", ".ipynb_checkpoints", "__pycache__", "*.py"))
    for nb in (files / "chapters").rglob("*.ipynb"):
        data = json.loads(nb.read_text(encoding="utf-8"))
        data.setdefault("metadata", {})["kernelspec"] = KERNELSPEC   # the Pyodide kernel, no "select kernel"
        nb.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    exercises_notebooks(files / "exercises")
    for item in extra:
        (shutil.copytree if item.is_dir() else shutil.copy2)(item, files / item.name)


# ---- the build and its checks ---------------------------------------------------------------------------------------
def verify(site: Path) -> None:
    """The three ways a built site fails to start a kernel without saying why, each named."""
    config = json.loads((site / "jupyter-lite.json").read_text(encoding="utf-8"))
    kernel = config.get("jupyter-config-data", {}).get("litePluginSettings", {}).get(KERNEL_PLUGIN, {})
    url = kernel.get("pyodideUrl", "")
    if not url.startswith("./") or not (site / url).is_file():
        raise BuildError(f"{site}/jupyter-lite.json has no pyodideUrl pointing at the local runtime ({url!r}): the "
                         "kernel would never start; a stale doit cache (.jupyterlite.doit.db) skips that step: delete "
                         "it and build again")
    runtime = (site / url).parent
    lock = json.loads((runtime / "pyodide-lock.json").read_text(encoding="utf-8"))["packages"]
    for name, entry in lock.items():
        wheel = runtime / entry["file_name"]
        if not wheel.is_file() or sha256(wheel) != entry["sha256"]:
            raise BuildError(f"pyodide-lock.json lists {name} as {entry['file_name']}, but that file is "
                             f"{'missing' if not wheel.is_file() else 'different'}: the kernel would hang loading it")
        missing = [d for d in entry["depends"] if d not in lock]
        if missing:
            raise BuildError(f"{name} depends on {', '.join(missing)}, which the lock does not list: the kernel would "
                             "hang at start; add the wheel (lite/build.py EXTRA)")
    preload = kernel.get("loadPyodideOptions", {}).get("packages", [])
    absent = [p for p in preload if canonical(p) not in lock]
    if absent:
        raise BuildError(f"the kernel preloads {', '.join(absent)}, which pyodide-lock.json does not list: it would "
                         "hang at start")
    if "ipywidgets" in lock and ("jupyterlab-widgets" not in lock or
                                 not (site / "extensions" / "@jupyter-widgets" / "jupyterlab-manager").is_dir()):
        raise BuildError("ipywidgets is shipped without jupyterlab_widgets (its wheel in the lock and its front-end "
                         "extension): with the PyPI fallback off it cannot install; both must be in the site")


@contextlib.contextmanager
def only_build(cache: Path):
    """One build at a time per cache: two would unpack, download and install into the same folders."""
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)   # released when the file closes, also if the build dies
        yield


def build(out: Path, cache: Path, extra: list[Path]) -> None:
    with only_build(cache):
        _build(out, cache, extra)


def _build(out: Path, cache: Path, extra: list[Path]) -> None:
    pinned = pins()
    (cache / "wheels").mkdir(exist_ok=True)
    runtime = pyodide_runtime(pinned["pyodide"], cache)
    lite = tools(cache)
    # the kernel's extension from the build environment, the widget manager from this one (the desktop's version)
    extensions = [labextension(KERNEL_EXTENSION, lite), labextension(WIDGETS_EXTENSION, Path(sys.prefix))]
    # A fresh staging folder every time: no doit cache (.jupyterlite.doit.db) survives from an earlier build.
    with tempfile.TemporaryDirectory(prefix="lite-build-") as tmp:
        stage = Path(tmp)
        course = course_wheel(stage / "dist")
        make_lock(runtime, stage / "static" / "pyodide", cache / "wheels", course, extensions[0] / "static" / "pypi")
        contents(stage / "files", extra)
        (stage / "jupyter-lite.json").write_text(json.dumps({"jupyter-lite-schema-version": 0, "jupyter-config-data": {
            "appName": "Pipeline parallelism, hands-on (browser edition)",
            "litePluginSettings": {KERNEL_PLUGIN: {"disablePyPIFallback": True,
                                                   "loadPyodideOptions": {"packages": list(PRELOAD)}}}}},
                                                   indent=1), encoding="utf-8")
        target = out.with_name(out.name + ".partial")
        shutil.rmtree(target, ignore_errors=True)
        (stage / "jupyter_lite_config.json").write_text(json.dumps({"LiteBuildConfig": {
            "contents": [str(stage / "files")], "output_dir": str(target), "no_sourcemaps": True,
            "federated_extensions": [str(e) for e in extensions],
            "ignore_sys_prefix": ["federated_extensions"]}}, indent=1), encoding="utf-8")
        run([str(lite / "bin" / "jupyter-lite"), "build", "--lite-dir", str(stage)],
            "jupyter lite build", cwd=stage)
        verify(target)
        shutil.rmtree(out, ignore_errors=True)
        target.rename(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_lite", help="the site folder (default: _lite)")
    parser.add_argument("--cache", type=Path, default=ROOT / ".lite-cache",
                        help="downloads kept between builds (default: .lite-cache)")
    parser.add_argument("--add", type=Path, action="append", default=[], metavar="PATH",
                        help="an extra notebook or folder for the site's file tree (tests use it)")
    args = parser.parse_args(argv)
    try:
        build(args.out.resolve(), args.cache.resolve(), [p.resolve() for p in args.add])
    except BuildError as err:
        print(f"lite: {err}", file=sys.stderr)
        return 1
    size = sum(f.stat().st_size for f in args.out.rglob("*") if f.is_file())
    print(f"built {args.out} ({size / 1e6:.0f} MB); serve it with: python -m http.server -d {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
