"""The course's JupyterLab server (``python -m course.lab`` puts this folder on JUPYTER_CONFIG_PATH).

A user's own ~/.jupyter configuration is read after this file and wins where both set something.
"""

import os
import shutil
import sys

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

from course import lab

c = get_config()  # noqa: F821 (provided by Jupyter when it loads this file)

# Rooted at the repository: the learner folder (workspace/), practice/ and instructor/ are all reachable, and
# nbgrader's course directory (instructor/, set in its nbgrader_config.py) lies inside the root as its
# formgrader requires.  The file browser starts in the learner folder.
c.ServerApp.root_dir = str(lab.REPO)
if lab.WORKSPACE.is_dir():
    c.ContentsManager.preferred_dir = lab.WORKSPACE.name   # an API path, relative to the root
c.ServerApp.allow_root = os.geteuid() == 0      # containers run as root; Jupyter refuses root without it

# Kernels and terminals use this environment: its Python is first on PATH (the kernel spec runs `python`), and a
# terminal is an interactive, non-login bash (a login shell's /etc/profile would reset PATH) that reads the
# user's ~/.bashrc, puts this Python first again and starts at the repository root.
os.environ["COURSE_PYTHON_BIN"] = os.path.dirname(sys.executable)
os.environ["PATH"] = os.pathsep.join([os.environ["COURSE_PYTHON_BIN"], os.environ.get("PATH", "")])
bash = shutil.which("bash")
if bash:
    c.ServerApp.terminado_settings = {"shell_command": [bash, "--rcfile", str(lab.JUPYTER_CONFIG / "bashrc"), "-i"]}


class CourseContentsManager(AsyncLargeFileManager):
    """Jupyter's default contents manager; a save into the tracked chapters (course/chapters/*.ipynb, generated
    from _src/) is refused with the name of the learner's own copy, so opening one by mistake cannot dirty the
    repository.  (A hook registered here, not the pre_save_hook setting, which stays the user's.)"""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.register_pre_save_hook(lab.refuse_tracked_chapters)


c.ServerApp.contents_manager_class = CourseContentsManager

# Nothing fetched from the internet: no news (labconfig/page_config.json also disables the plugin that asks
# about it on first start), no update check.
c.LabApp.news_url = None
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"
