"""Writing an output file whole: afterwards the path holds either its old content or all of the new one.

``write_file(path, data)`` writes a temporary file beside ``path`` (same folder, so the same file system), flushes
it to disk and renames it over ``path`` (``os.replace``, atomic on POSIX).  A failed write (a full disk, a file size
limit, an interrupt) removes the temporary file and leaves an existing ``path`` untouched.  Every file the course
writes for its user goes through it: the CLI's ``--png``, ``--trace``, ``--plan-out``, ``course.trace.write_trace``,
the book's HTML, the regrade's CSV, the generated sources and the learner's chapter copies.

A path that exists and is not a regular file (``/dev/full``, a FIFO, a terminal) is written in place: renaming
over a device would replace the device itself.
"""

from __future__ import annotations

import os
import stat
import tempfile


def write_file(path, data: bytes | str) -> None:
    """Replace ``path`` with ``data`` (str is written as UTF-8).  An error names ``path`` (``OSError.filename``)."""
    path = os.fspath(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        if _special(path):
            with open(path, "wb") as f:
                f.write(data)
            return
        folder, name = os.path.split(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    except OSError as e:
        raise OSError(e.errno, e.strerror, path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _mode(path))
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise OSError(e.errno, e.strerror, path) from None
        raise


def _special(path: str) -> bool:
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return False


def _mode(path: str) -> int:
    """The permissions the file had, or what a new file gets under the umask (mkstemp's own 0600 is private)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
