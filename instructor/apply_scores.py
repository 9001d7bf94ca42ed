"""Write the regrade's trusted scores into nbgrader's gradebook (``python instructor/regrade.py ASSIGNMENT --apply``).

For each student and exercise whose regraded score differs from nbgrader's in-kernel (auto) score, the exercise's
test cell gets the regraded score as its *manual score*, which nbgrader's formgrader, feedback and ``nbgrader
export`` use instead of the auto score, and the exercise's solution cell a comment that says why (marked
``[regrade]``; the grader's own comment text is kept).  A notebook with a suspicious exercise (in-kernel score
above the regrade) is *flagged*, which the formgrader shows in its submission lists.

What it leaves alone: a manual score a grader entered by hand (no ``[regrade]`` comment beside it) is kept and
reported; a student or cell missing from the gradebook (submitted, never autograded) is reported.  Where a later
regrade agrees with nbgrader again, the earlier regrade's manual score and comment are removed.  ``nbgrader
autograde`` run again keeps manual scores (it marks them for review): run ``--apply`` again after it.
"""

from __future__ import annotations

from pathlib import Path

MARK = "[regrade]"


def _without_mark(comment: str | None) -> str:
    return "\n".join(line for line in (comment or "").splitlines() if not line.startswith(MARK)).strip()


def _why(row, auto: float, table: str) -> str:
    if row.flag:
        return (f"{MARK} Regraded outside the notebook kernel: {row.regrade:g}/{row.max:g}, where the kernel gave "
                f"{auto:g}. The code of this notebook changed how its tests ran in the kernel; the regrade runs "
                f"them where it cannot (see {table}).")
    return (f"{MARK} Regraded outside the notebook kernel: {row.regrade:g}/{row.max:g}, where the kernel gave "
            f"{auto:g} (see {table}).")


def apply_scores(course: Path, assignment: str, rows, table: str) -> list[str]:
    """Apply ``rows`` (instructor/regrade.py's ``Row``s of ``assignment``) to ``course``/gradebook.db; return one
    line per change or per row left alone."""
    from nbgrader.api import Gradebook, MissingEntry

    db = course / "gradebook.db"
    if not db.is_file():
        return [f"no {db}: nothing applied (run nbgrader autograde first)"]
    said, changed, flagged = [], 0, set()
    with Gradebook(f"sqlite:///{db}") as gb:
        try:
            notebooks = gb.find_assignment(assignment).notebooks
        except MissingEntry:
            return [f"{assignment} is not in {db}: nothing applied (run nbgrader generate_assignment and autograde)"]
        notebook_of = {cell.name: nb.name for nb in notebooks for cell in nb.grade_cells}
        for row in rows:
            exercise_id = row.exercise.replace("-", "_")
            notebook = notebook_of.get(f"{exercise_id}_tests")
            if row.regrade is None or notebook is None:
                continue
            try:
                grade = gb.find_grade(f"{exercise_id}_tests", notebook, assignment, row.student)
                comment = gb.find_comment(exercise_id, notebook, assignment, row.student)
            except MissingEntry:
                said.append(f"{row.student} {row.exercise}: not in the gradebook (not autograded), left alone")
                continue
            ours = MARK in (comment.manual_comment or "")
            if grade.manual_score is not None and not ours:
                said.append(f"{row.student} {row.exercise}: kept the grader's manual score {grade.manual_score:g} "
                            f"(regrade {row.regrade:g})")
                continue
            kept = _without_mark(comment.manual_comment)
            if grade.auto_score is None or row.regrade == grade.auto_score:
                if ours:                     # an earlier regrade's change, no longer needed
                    grade.manual_score, comment.manual_comment = None, kept or None
                    said.append(f"{row.student} {row.exercise}: regrade agrees with nbgrader again, override removed")
                continue
            if ours and grade.manual_score == row.regrade:   # applied by an earlier run
                continue
            grade.manual_score, grade.needs_manual_grade = row.regrade, False
            comment.manual_comment = "\n\n".join(filter(None, [kept, _why(row, grade.auto_score, table)]))
            changed += 1
            said.append(f"{row.student} {row.exercise}: {grade.auto_score:g} -> {row.regrade:g} of {row.max:g}"
                        + (" (flagged)" if row.flag else ""))
            if row.flag:
                submitted = gb.find_submission_notebook(notebook, assignment, row.student)
                submitted.flagged = True
                flagged.add(row.student)
        gb.db.commit()
    said.append(f"{changed} scores applied to {db}, {len(flagged)} notebooks flagged")
    return said
