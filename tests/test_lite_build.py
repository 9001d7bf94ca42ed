"""lite/build.py: its checks of a built site name the three start-up failures (not left to hang a kernel); builds on one
cache take turns."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("lite_build", REPO / "lite" / "build.py")
lite = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lite)


def fake_site(tmp_path: Path, url="./static/pyodide/pyodide.mjs", packages=("ipywidgets", "jupyterlab-widgets"),
              preload=("ipywidgets",), widget_extension=True) -> Path:
    site = tmp_path / "site"
    runtime = site / "static" / "pyodide"
    runtime.mkdir(parents=True)
    (runtime / "pyodide.mjs").write_text("//")
    lock = {}
    for name in packages:
        wheel = runtime / f"{name}-1.0-py3-none-any.whl"
        wheel.write_bytes(name.encode())
        lock[name] = {"file_name": wheel.name, "sha256": hashlib.sha256(name.encode()).hexdigest(),
                      "depends": []}
    (runtime / "pyodide-lock.json").write_text(json.dumps({"packages": lock}))
    if widget_extension:
        (site / "extensions" / "@jupyter-widgets" / "jupyterlab-manager").mkdir(parents=True)
    settings = {"loadPyodideOptions": {"packages": list(preload)}}
    if url:
        settings["pyodideUrl"] = url
    (site / "jupyter-lite.json").write_text(json.dumps({"jupyter-config-data": {"litePluginSettings": {
        lite.KERNEL_PLUGIN: settings}}}))
    return site


def test_a_sound_site_passes(tmp_path):
    lite.verify(fake_site(tmp_path))


def test_a_stale_doit_cache_that_skipped_pyodide_url_is_named(tmp_path):
    with pytest.raises(lite.BuildError, match=r"no pyodideUrl.*\.jupyterlite\.doit\.db"):
        lite.verify(fake_site(tmp_path, url=None))


def test_a_wheel_missing_from_the_lock_or_from_disk_is_named(tmp_path):
    with pytest.raises(lite.BuildError, match="preloads course, which pyodide-lock.json does not list"):
        lite.verify(fake_site(tmp_path, preload=("ipywidgets", "course")))
    site = fake_site(tmp_path / "b")
    (site / "static" / "pyodide" / "ipywidgets-1.0-py3-none-any.whl").unlink()
    with pytest.raises(lite.BuildError, match="lists ipywidgets .* missing"):
        lite.verify(site)
    site = fake_site(tmp_path / "c")
    lock_path = site / "static" / "pyodide" / "pyodide-lock.json"
    lock = json.loads(lock_path.read_text())
    lock["packages"]["ipywidgets"]["depends"] = ["comm"]
    lock_path.write_text(json.dumps(lock))
    with pytest.raises(lite.BuildError, match="depends on comm, which the lock does not list"):
        lite.verify(site)


def test_ipywidgets_without_jupyterlab_widgets_is_named(tmp_path):
    with pytest.raises(lite.BuildError, match="without jupyterlab_widgets"):
        lite.verify(fake_site(tmp_path, packages=("ipywidgets",)))
    with pytest.raises(lite.BuildError, match="without jupyterlab_widgets"):
        lite.verify(fake_site(tmp_path / "b", widget_extension=False))


def test_wheel_facts_read_what_the_lock_needs(tmp_path):
    import zipfile

    wheel = tmp_path / "demo_pkg-1.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("demo_pkg/__init__.py", "")
        z.writestr("demo_pkg-1.2.dist-info/METADATA", "Metadata-Version: 2.1\nName: Demo_Pkg\nVersion: 1.2\n"
                   "Requires-Dist: comm>=0.1\nRequires-Dist: pexpect; sys_platform != 'emscripten'\n"
                   "Requires-Dist: pytest; extra == 'test'\nRequires-Dist: typing_extensions; python_version < '3.12'\n"
                   "Requires-Dist: Jupyterlab_Widgets~=3.0\n")
    facts = lite.wheel_facts(wheel)
    # Pyodide is CPython 3.14 on emscripten: markers false there, and extras, are not requirements
    assert facts == {"name": "demo-pkg", "version": "1.2", "imports": ["demo_pkg"],
                     "requires": ["comm", "jupyterlab-widgets"]}


def test_two_builds_on_one_cache_take_turns(tmp_path):
    """Two builds at once (two test workers, two terminals) would unpack Pyodide into one folder: the second waits."""
    import threading

    entered = threading.Event()

    def second():
        with lite.only_build(tmp_path):
            entered.set()

    with lite.only_build(tmp_path):
        waiting = threading.Thread(target=second)
        waiting.start()
        assert not entered.wait(0.5), "a second build entered the cache while the first held it"
    assert entered.wait(10), "the second build never got the cache after the first let it go"
    waiting.join()
