"""The learner's copies of the chapters, and JupyterLab opened on them (``make lab``).

    python -m course.lab [FLAGS]           copy what is new into workspace/chapters/, then JupyterLab on it
    python -m course.lab --reset CHAPTER   give one copy back its course version (01_bubble, en/01_bubble, glossary)

The chapters in ``course/chapters/`` are generated and tracked: using the course never writes them.  The learner
works in ``workspace/`` (git-ignored): ``workspace/chapters/`` mirrors ``course/chapters/`` (every file but
``_src/`` and hidden folders: both editions, the glossary, an index), so relative links between them keep working,
and each notebook keeps its file name (a chapter reads its edition's language from it).  The judge's ``start``
writes the exercises into ``workspace/`` too.

``workspace/.copies.json`` records the hash of each copy as it was made, so a later run can tell the learner's
work from the course's files:

- a file new in the course (a chapter, an edition added since) is copied;
- a copy the learner never changed follows the course (refreshed after a ``git pull`` changed it);
- a copy the learner changed is kept, and a newer course version is only named: ``make lab-reset CHAPTER=NAME``
  takes it, keeping the learner's copy beside it as ``NAME.bak``.

JupyterLab then starts with ``course/jupyter/`` and ``instructor/`` on ``JUPYTER_CONFIG_PATH``: the server's
settings (rooted at the repository so that ``practice/`` and the learner folder are both reachable, terminals
with this environment at the repository root, no news pop-up, the tracked chapters refused on save) and
nbgrader's course directory.  Flags are passed on to ``jupyter lab`` (``--no-browser --port 8899``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from .files import write_file

REPO = Path(__file__).resolve().parent.parent
CHAPTERS = REPO / "course" / "chapters"
WORKSPACE = REPO / "workspace"              # the learner folder (git-ignored)
COPIES = WORKSPACE / "chapters"
MANIFEST = ".copies.json"                   # in the learner folder: relative path -> hash of the copy made
JUPYTER_CONFIG = REPO / "course" / "jupyter"
INSTRUCTOR = REPO / "instructor"


def course_files(chapters: Path = CHAPTERS) -> list[str]:
    """The files of ``chapters`` a learner gets, as relative POSIX paths (``_src/`` and hidden folders left out)."""
    found = []
    for path in sorted(chapters.rglob("*")):
        rel = path.relative_to(chapters)
        if path.is_file() and rel.parts[0] != "_src" and not any(p.startswith((".", "__")) for p in rel.parts):
            found.append(rel.as_posix())
    return found


def _hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_manifest(workspace: Path) -> dict[str, str]:
    try:
        data = json.loads((workspace / MANIFEST).read_text(encoding="utf-8"))
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}
    except (OSError, ValueError, AttributeError):
        return {}


def _copy(source: Path, target: Path) -> str:
    target.parent.mkdir(parents=True, exist_ok=True)
    data = source.read_bytes()
    write_file(target, data)
    return hashlib.sha256(data).hexdigest()


def sync(chapters: Path = CHAPTERS, workspace: Path = WORKSPACE) -> list[str]:
    """Bring ``workspace/chapters`` up to date with ``chapters`` without touching what the learner changed; return
    one line per file copied, refreshed or kept back."""
    copies, manifest, said = workspace / "chapters", _read_manifest(workspace), []
    for rel in course_files(chapters):
        source, target = chapters / rel, copies / rel
        made = manifest.get(rel)
        if target.is_symlink():
            said.append(f"kept {target}: a symbolic link, not written through")
        elif not target.exists():
            manifest[rel] = _copy(source, target)
            said.append(f"copied {target}")
        elif (current := _hash(target)) == (latest := _hash(source)):   # already the course's version
            manifest[rel] = latest
        elif current == made:                         # untouched since it was copied, and the course moved on
            manifest[rel] = _copy(source, target)
            said.append(f"updated {target} (you had not changed it)")
        elif latest != made:                          # the learner's own work, and the course moved on
            said.append(f"kept your {target}; the course has a newer version: "
                        f"make lab-reset CHAPTER={_short(rel)}")
            manifest.setdefault(rel, "")
    workspace.mkdir(parents=True, exist_ok=True)
    write_file(workspace / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return said


def reset(name: str, chapters: Path = CHAPTERS, workspace: Path = WORKSPACE) -> list[str]:
    """Give the copy of chapter ``name`` its course version back; the learner's copy is kept as NAME.bak."""
    rel = resolve(name, chapters)
    target, manifest, said = workspace / "chapters" / rel, _read_manifest(workspace), []
    if target.is_symlink():
        raise ValueError(f"{target} is a symbolic link: not written through")
    if target.exists():
        backup = target.with_name(target.name + ".bak")
        os.replace(target, backup)
        said.append(f"your copy is now {backup}")
    manifest[rel] = _copy(chapters / rel, target)
    workspace.mkdir(parents=True, exist_ok=True)
    write_file(workspace / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return said + [f"restored {target} from {chapters / rel}"]


def _short(rel: str) -> str:
    return rel[:-len(".ipynb")] if rel.endswith(".ipynb") else rel


def resolve(name: str, chapters: Path = CHAPTERS) -> str:
    """The course file ``name`` means: its relative path, with or without ``.ipynb`` or ``.md``, or a chapter
    number (``01``, ``en/01``)."""
    files = course_files(chapters)
    wanted = name.strip().strip("/")
    matches = [rel for rel in files if wanted in (rel, _short(rel), rel.rsplit(".", 1)[0])]
    if not matches and wanted:
        folder, _, stem = wanted.rpartition("/")
        matches = [rel for rel in files if rel.rpartition("/")[0] == folder
                   and rel.rpartition("/")[2].startswith(f"{stem}_") and rel.endswith(".ipynb")]
    if len(matches) == 1:
        return matches[0]
    known = ", ".join(_short(rel) for rel in files)
    if not matches:
        raise ValueError(f"no chapter {name!r} in {chapters}; give one of: {known}")
    raise ValueError(f"{name!r} matches {', '.join(matches)}: give one of them")


def first_page(workspace: Path = WORKSPACE) -> Path:
    """What Lab opens: the index notebook when the course has one, else the first chapter."""
    copies = workspace / "chapters"
    index = copies / "index.ipynb"
    return index if index.is_file() else min(copies.glob("[0-9][0-9]_*.ipynb"), default=copies)


def refuse_tracked_chapters(model, path, contents_manager, **kwargs) -> None:
    """Jupyter's pre-save hook: a save into course/chapters/ (the tracked, generated notebooks) is refused with
    the name of the learner's own copy (HTTP 403, shown by Lab's save dialog)."""
    from tornado.web import HTTPError

    target = Path(contents_manager.root_dir, path).resolve()
    if target.suffix == ".ipynb" and target.is_relative_to(CHAPTERS):
        rel = target.relative_to(CHAPTERS).as_posix()
        raise HTTPError(403, f"{CHAPTERS.relative_to(REPO) / rel} is the course's own copy and is never saved: "
                             f"your copy is {(COPIES / rel).relative_to(REPO)} (make lab creates it)")


def environment() -> dict[str, str]:
    """The server's environment: this Python first on PATH (its kernels and terminals inherit it) and the course's
    Jupyter configuration on JUPYTER_CONFIG_PATH (after the user's own, which keeps priority)."""
    env = dict(os.environ)
    here = os.path.dirname(sys.executable)
    env["PATH"] = os.pathsep.join([here] + [p for p in env.get("PATH", "").split(os.pathsep) if p and p != here])
    extra = [str(JUPYTER_CONFIG), str(INSTRUCTOR)]
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(extra + [p for p in env.get("JUPYTER_CONFIG_PATH", "").split(
        os.pathsep) if p and p not in extra])
    return env


def lab_command(flags: list[str], workspace: Path = WORKSPACE) -> list[str]:
    return [sys.executable, "-m", "jupyterlab", str(first_page(workspace)), *flags]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if argv[:1] == ["--reset"]:
            if len(argv) != 2 or not argv[1].strip():
                raise ValueError("name the chapter to restore: make lab-reset CHAPTER=01_bubble (or en/01_bubble, "
                                 "glossary)")
            lines = reset(argv[1])
        else:
            lines = sync()
    except (ValueError, OSError) as e:
        print(f"lab: {e}", file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    if argv[:1] == ["--reset"]:
        return 0
    command = lab_command(argv)
    print("JupyterLab on your copies in workspace/ (the course's own files are never written): " + " ".join(command))
    sys.stdout.flush()
    os.chdir(REPO)
    os.execve(sys.executable, command, environment())


if __name__ == "__main__":
    sys.exit(main())
