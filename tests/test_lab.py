"""course/lab.py: the learner's copies of the chapters (made once, kept when edited, following the course when not),
`lab-reset`, and the pieces of the Lab's configuration that need no server.  The running Lab (contents API,
terminals, kernels) is tested in tests/browser/test_lab_server.py."""

import json
import os
import sys
from types import SimpleNamespace

import pytest

from course import lab


@pytest.fixture
def course(tmp_path):
    """A course/chapters-like folder: two editions, a glossary, sources that are not the learner's."""
    chapters = tmp_path / "chapters"
    for rel, text in (("01_bubble.ipynb", "zh 1"), ("02_sim.ipynb", "zh 2"), ("glossary.md", "terms"),
                      ("_src/01_bubble.py", "source"), (".ipynb_checkpoints/01_bubble-checkpoint.ipynb", "x")):
        (chapters / rel).parent.mkdir(parents=True, exist_ok=True)
        (chapters / rel).write_text(text)
    return chapters, tmp_path / "workspace"


def text(workspace, rel):
    return (workspace / "chapters" / rel).read_text()


def test_the_first_run_mirrors_the_course_without_its_sources(course):
    chapters, workspace = course
    said = lab.sync(chapters, workspace)
    copies = sorted(p.relative_to(workspace / "chapters").as_posix()
                    for p in (workspace / "chapters").rglob("*") if p.is_file())
    assert copies == ["01_bubble.ipynb", "02_sim.ipynb", "glossary.md"]
    assert len(said) == 3 and all(line.startswith("copied ") for line in said)
    assert lab.sync(chapters, workspace) == []          # nothing new: nothing to say, nothing written


def test_edited_copies_are_kept_untouched_ones_follow_the_course_new_files_appear(course):
    chapters, workspace = course
    lab.sync(chapters, workspace)
    (workspace / "chapters" / "01_bubble.ipynb").write_text("my notes")     # the learner's work
    (chapters / "01_bubble.ipynb").write_text("zh 1, fixed")                # a git pull changed both chapters
    (chapters / "02_sim.ipynb").write_text("zh 2, fixed")
    (chapters / "en").mkdir()                                               # an edition that appeared since
    (chapters / "en" / "01_bubble.ipynb").write_text("en 1")
    said = lab.sync(chapters, workspace)
    assert text(workspace, "01_bubble.ipynb") == "my notes"
    assert text(workspace, "02_sim.ipynb") == "zh 2, fixed"
    assert text(workspace, "en/01_bubble.ipynb") == "en 1"                 # same relative place: links work
    assert any("kept your" in line and "make lab-reset CHAPTER=01_bubble" in line for line in said), said
    assert any(line.startswith("updated ") and "02_sim" in line for line in said), said
    assert any(line.startswith("copied ") and "en/01_bubble" in line for line in said), said


def test_reset_restores_one_chapter_and_keeps_the_learners_copy_beside_it(course):
    chapters, workspace = course
    lab.sync(chapters, workspace)
    (workspace / "chapters" / "01_bubble.ipynb").write_text("my notes")
    (workspace / "chapters" / "02_sim.ipynb").write_text("other notes")
    said = lab.reset("01", chapters, workspace)
    assert text(workspace, "01_bubble.ipynb") == "zh 1" and text(workspace, "01_bubble.ipynb.bak") == "my notes"
    assert text(workspace, "02_sim.ipynb") == "other notes"                 # only the one named
    assert said[-1].startswith("restored ")
    assert lab.sync(chapters, workspace) == []
    (chapters / "01_bubble.ipynb").write_text("zh 1, fixed")
    (chapters / "02_sim.ipynb").write_text("zh 2, fixed")
    said = lab.sync(chapters, workspace)
    assert text(workspace, "01_bubble.ipynb") == "zh 1, fixed"             # the reset copy follows the course
    assert text(workspace, "02_sim.ipynb") == "other notes" and "kept your" in said[-1]


@pytest.mark.parametrize("name, rel", [("01", "01_bubble.ipynb"), ("01_bubble", "01_bubble.ipynb"),
                                       ("01_bubble.ipynb", "01_bubble.ipynb"), ("en/01", "en/01_bubble.ipynb"),
                                       ("glossary", "glossary.md"), ("glossary.md", "glossary.md")])
def test_a_chapter_is_named_as_a_learner_would(course, name, rel):
    chapters, _ = course
    (chapters / "en").mkdir()
    (chapters / "en" / "01_bubble.ipynb").write_text("en 1")
    assert lab.resolve(name, chapters) == rel


def test_an_unknown_chapter_lists_the_known_ones(course, capsys, monkeypatch):
    chapters, workspace = course
    with pytest.raises(ValueError, match="no chapter '99'.*01_bubble, 02_sim, glossary"):
        lab.resolve("99", chapters)
    monkeypatch.setattr(lab, "reset", lambda name: lab.resolve(name, chapters))
    assert lab.main(["--reset", "99"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lab: no chapter '99'") and err.count("\n") == 1


def test_a_copy_that_is_a_link_is_never_written_through(course, tmp_path):
    chapters, workspace = course
    outside = tmp_path / "outside.ipynb"
    outside.write_text("not the learner's")
    (workspace / "chapters").mkdir(parents=True)
    (workspace / "chapters" / "01_bubble.ipynb").symlink_to(outside)
    said = lab.sync(chapters, workspace)
    assert outside.read_text() == "not the learner's" and any("symbolic link" in line for line in said)


def test_the_manifest_records_what_was_copied(course):
    chapters, workspace = course
    lab.sync(chapters, workspace)
    manifest = json.loads((workspace / lab.MANIFEST).read_text())
    assert set(manifest) == {"01_bubble.ipynb", "02_sim.ipynb", "glossary.md"}
    (workspace / lab.MANIFEST).write_text("{not json")                     # damaged: every copy counts as edited
    (chapters / "02_sim.ipynb").write_text("zh 2, fixed")
    lab.sync(chapters, workspace)
    assert text(workspace, "02_sim.ipynb") == "zh 2"


def test_saving_into_the_tracked_chapters_is_refused_with_the_learners_copy_named():
    from tornado.web import HTTPError

    manager = SimpleNamespace(root_dir=str(lab.REPO))
    with pytest.raises(HTTPError) as refused:
        lab.refuse_tracked_chapters(model={}, path="course/chapters/01_bubble.ipynb", contents_manager=manager)
    assert refused.value.status_code == 403 and "workspace/chapters/01_bubble.ipynb" in refused.value.log_message
    for allowed in ("workspace/chapters/01_bubble.ipynb", "course/chapters/_src/01_bubble.py", "notes.ipynb"):
        lab.refuse_tracked_chapters(model={}, path=allowed, contents_manager=manager)


def test_the_server_gets_this_python_first_and_the_course_configuration(monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", "/mine")
    env = lab.environment()
    assert env["PATH"].split(os.pathsep)[0] == os.path.dirname(sys.executable)
    assert env["JUPYTER_CONFIG_PATH"].split(os.pathsep) == [str(lab.JUPYTER_CONFIG), str(lab.INSTRUCTOR), "/mine"]
    assert (lab.JUPYTER_CONFIG / "jupyter_server_config.py").is_file()
    page = json.loads((lab.JUPYTER_CONFIG / "labconfig" / "page_config.json").read_text())
    assert page["disabledExtensions"] == {"@jupyterlab/apputils-extension:announcements": True}   # no news pop-up


def test_lab_opens_the_index_when_there_is_one(tmp_path):
    copies = tmp_path / "chapters"
    copies.mkdir()
    (copies / "02_sim.ipynb").write_text("")
    (copies / "01_bubble.ipynb").write_text("")
    assert lab.first_page(tmp_path) == copies / "01_bubble.ipynb"
    (copies / "index.ipynb").write_text("")
    assert lab.first_page(tmp_path) == copies / "index.ipynb"
    assert lab.lab_command(["--no-browser"], tmp_path)[-2:] == [str(copies / "index.ipynb"), "--no-browser"]


def test_a_copy_made_before_the_manifest_that_matches_the_course_is_adopted(course):
    chapters, workspace = course
    (workspace / "chapters").mkdir(parents=True)
    (workspace / "chapters" / "01_bubble.ipynb").write_text("zh 1")          # same as the course's
    (workspace / "chapters" / "02_sim.ipynb").write_text("my notes")         # the learner's
    said = lab.sync(chapters, workspace)
    assert not any("01_bubble" in line for line in said)
    assert any("kept your" in line and "02_sim" in line for line in said)
    (chapters / "01_bubble.ipynb").write_text("zh 1, fixed")
    assert lab.sync(chapters, workspace)[0].startswith("updated ") and text(workspace, "01_bubble.ipynb") == \
        "zh 1, fixed"
