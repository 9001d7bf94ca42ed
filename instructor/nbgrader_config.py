"""nbgrader configuration for the pipeline-parallelism course (run nbgrader from this directory)."""

import os

from course import autograde

c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)

# `.venv/bin/nbgrader ...` works without an activated environment: nbgrader starts `alembic` and the kernel from PATH.
autograde.prefer_own_environment()

c.CourseDirectory.course_id = "pipeline-parallelism"
# The course directory is this file's folder, wherever nbgrader runs from (JupyterLab's formgrader included).
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))

# The exchange (release, fetch, submit, collect, feedback): $NBGRADER_EXCHANGE, else nbgrader's own default, the
# folder a student's nbgrader uses without any configuration.  It must exist and be writable by everyone.
EXCHANGE_DEFAULT = "/usr/local/share/nbgrader/exchange"
c.Exchange.root = os.environ.get("NBGRADER_EXCHANGE") or EXCHANGE_DEFAULT
c.ExchangeFactory.release_assignment = autograde.ReleaseAssignment   # a clear message when it cannot be used
c.ExchangeFactory.release_feedback = autograde.ReleaseFeedback       # hand-placed submissions refused by name

# What a released solution cell holds instead of the reference code.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}

# Time limits. Every test cell carries its exercise's limit in its metadata (written by generate.py from
# problem.md's `timeout`: the live gloo exercise gets minutes, the others seconds); any other cell gets 60 s.
# A cell that runs out is interrupted and scores 0; grading moves on. No cell gets more than 10 minutes.
def cell_timeout(cell):
    try:
        return min(int(cell.metadata.get("timeout", 60)), 600)
    except (TypeError, ValueError):
        return 60


c.Execute.timeout = 60
c.Execute.timeout_func = cell_timeout
c.Execute.interrupt_on_timeout = True

# Autograde runs the notebook with course.autograde.Execute (a cell that ignores its interrupt costs only its own
# points: the kernel is restarted and the rest runs) and records stderr of test cells as output (a correct answer
# that warns keeps its points; failing tests raise). The rest is nbgrader's default list.
c.Autograde.autograde_preprocessors = autograde.preprocessors()
# Edited locked cells get their source back, with nbgrader's "checksum has changed" warning for those alone (an
# unedited test cell only gets its hidden tests back, quietly).
c.Autograde.sanitize_preprocessors = autograde.sanitize_preprocessors()

# A deleted test cell is put back (and run) instead of silently missing from the grade.
c.OverwriteCells.add_missing_cells = True

# Feedback shows each test cell without its hidden tests (as the local judge does: names and messages, no source).
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import ClearHiddenTests, GetGrades  # noqa: E402

c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]
