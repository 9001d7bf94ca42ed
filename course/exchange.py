"""nbgrader's file exchange with private submissions (the hub's nbgrader_config.py selects it; it runs in a student's
Jupyter server when they press Submit, never in a kernel).

nbgrader copies a submission into the course's ``inbound`` folder readable by everyone (files 0644, folder 0777):
other students cannot list ``inbound``, but whoever knows a submission's name can read it.  ``inbound`` is setgid
to the group of the account that released the assignment (the course's grader), so what a student creates there
belongs to that group: here every file of the copy is created that way, then the copy is closed to everyone else.
Between nbgrader's copy and these changes there is a moment in which a student who knew the new folder's exact name
(timestamp and random suffix included) could open it.
"""

from __future__ import annotations

import os

from nbgrader.exchange.default.submit import ExchangeSubmit


class PrivateSubmit(ExchangeSubmit):
    """nbgrader's submit; the copy in the exchange is then readable by its owner and the graders' group only."""

    def do_copy(self, src, dest, log=None):
        if os.path.dirname(dest) != self.inbound_path:   # the student's own cache
            return super().do_copy(src, dest, log)
        # copytree gives the copy's folder the mode of the student's folder, which drops its setgid bit (and a
        # student outside the graders' group cannot set it again): the files nbgrader writes next into it
        # (timestamp.txt, submission_secret.txt) would be the student's group.  So: copy aside, then move the
        # files into a fresh folder, which inherits the group and the setgid bit from inbound.
        staging = f"{dest}.copying"
        super().do_copy(src, staging, log)
        os.mkdir(dest)
        for name in os.listdir(staging):
            os.rename(os.path.join(staging, name), os.path.join(dest, name))
        os.rmdir(staging)

    def copy_files(self):
        super().copy_files()
        dest = os.path.join(self.inbound_path, self.assignment_filename)
        for folder, _, files in os.walk(dest):
            for name in files:
                os.chmod(os.path.join(folder, name), 0o640)
            os.chmod(folder, 0o750)
        os.chmod(dest, 0o770)   # the graders may remove it, as nbgrader lets them
