"""nbgrader's folder exchange with the checks a class of strangers needs: plain names,
private submissions, no links followed.

nbgrader lets a course replace each exchange step through its documented plug point,
``c.ExchangeFactory.<step>``; the course's ``nbgrader_config.py`` (``layout.py``) and the
students' (``hub_config.py``) name these classes::

    CheckedRelease   release_assignment: as nbgrader's, and the inbound folder gets the
                     sticky bit, so no student can rename or delete another's entry
    CheckedSubmit    submit: refuses a student id, lesson or course id that is not a plain
                     name (``layout.check_plain_name``) before anything is written; the
                     submission is then readable by its student and the grader's group
                     only (nbgrader leaves it readable by everyone who can guess its name)
    CheckedCollect   collect: an inbound entry is refused, reported in one line (which
                     entry, why) and skipped when its student id is not a plain name, it
                     is not this lesson's, its time does not parse, it is a link or holds
                     one (or a device, a pipe), or, with ``check_owner``, another OS user
                     owns it; the others are collected. Files are copied without
                     following links, so nothing outside the entry is ever read.

Why: nbgrader builds ``inbound/{student}+{lesson}+{time}+{random}`` and
``submitted/{student}/{lesson}`` from these names, so a student id ``../x`` wrote outside
the course's folders; and its collect copies through links, so a link in a submission
could bring the grader's own files (the answer key) into a student's feedback.

What it must not do: change what nbgrader does for a well-formed submission (which one is
the latest, where it lands, the cache a student's *Fetch Feedback* reads), or read an
entry it refused.
"""

import datetime
import os
import shutil
import stat
import sys

from nbgrader.exchange.default import ExchangeCollect, ExchangeReleaseAssignment, ExchangeSubmit
from nbgrader.utils import get_username, ignore_patterns, parse_utc, self_owned

from .layout import check_plain_name

try:
    import pwd
except ImportError:   # not on Windows: there the owner check is off, as in nbgrader
    pwd = None

# A submission: its student and the grader's group read it; nobody else may even look.
SUBMISSION_DIR_MODE, SUBMISSION_FILE_MODE = 0o770, 0o640


def check_names(exchange, student_id=None):
    """Fails the step (nbgrader's ExchangeError, shown in the Assignments panel) unless the
    course id, the lesson and, if given, the student id are plain names."""
    coursedir = exchange.coursedir
    try:
        check_plain_name(coursedir.course_id, "course id")
        check_plain_name(coursedir.assignment_id, "lesson")
        if student_id is not None:
            check_plain_name(student_id, "student id")
    except ValueError as refused:
        exchange.fail(str(refused))


def report_refused(exchange, entry, why):
    """One line for an entry collect skips, on the teacher's terminal and in nbgrader's log."""
    line = f"collect: refused {entry!r}: {why}"
    exchange.log.warning(line)
    print(line, file=sys.stderr, flush=True)


class CheckedRelease(ExchangeReleaseAssignment):
    """nbgrader's release_assignment, then the sticky bit on the inbound folder it made."""

    def init_dest(self):
        check_names(self)
        super().init_dest()
        if self_owned(self.inbound_path):
            mode = os.stat(self.inbound_path).st_mode
            os.chmod(self.inbound_path, stat.S_IMODE(mode) | stat.S_ISVTX)


class CopyWithoutLinks:
    """An exchange step whose copies never follow a link (``copy_without_links``) and keep
    the group a set-group-id folder gives: nbgrader's copy (``shutil.copytree``) sets the
    copy's modes from its source, which drops the inherited set-group-id bit, and no
    student may set it back on a folder of the grader's group."""

    def do_copy(self, src, dest, log=None):
        ignore = ignore_patterns(exclude=self.coursedir.ignore, include=self.coursedir.include,
                                 max_file_size=self.coursedir.max_file_size, log=self.log)
        copy_without_links(src, dest, ignore, self.log)


class CheckedSubmit(CopyWithoutLinks, ExchangeSubmit):
    """nbgrader's submit, refusing names that are not plain and keeping the copy private."""

    def init_dest(self):
        student = self.coursedir.student_id
        check_names(self, get_username() if student == "*" else student)
        super().init_dest()

    def copy_files(self):
        super().copy_files()
        # nbgrader's inbound folder is set-group-id (the grader's group), so the entry just
        # written belongs to that group: owner and group keep access, the others lose it.
        inbound = os.stat(self.inbound_path)
        if inbound.st_mode & stat.S_ISGID:
            self.set_perms(os.path.join(self.inbound_path, self.assignment_filename),
                           fileperms=SUBMISSION_FILE_MODE, dirperms=SUBMISSION_DIR_MODE)


class CheckedCollect(CopyWithoutLinks, ExchangeCollect):
    """nbgrader's collect, refusing (one line each) and skipping the entries it cannot trust."""

    def init_src(self):
        self.refused = []
        super().init_src()
        self.src_records = [record for record in self.src_records if not record.get("refused")]
        lesson = f"+{self.coursedir.assignment_id}+"
        for name in sorted(os.listdir(self.inbound_path)):   # nbgrader's glob skips these
            if name.startswith(".") and lesson in name:
                self.refused.append((name, self._refusal(os.path.join(self.inbound_path, name))))
        for entry, why in self.refused:
            report_refused(self, entry, why)

    def _path_to_record(self, path):
        why = self._refusal(path)
        if why is None:
            return super()._path_to_record(path)
        entry = os.path.basename(path)
        self.refused.append((entry, why))
        # a group of its own, dropped by init_src once nbgrader has sorted the rest
        return {"username": "\0" + entry, "filename": entry, "refused": True,
                "timestamp": datetime.datetime.min}

    def _refusal(self, path):
        """Why the inbound entry at ``path`` cannot be collected, or None."""
        parts = os.path.basename(path).rsplit("+", 3)
        if len(parts) < 3:
            return "not a submission's name (student+lesson+time+random)"
        try:
            check_plain_name(parts[0], "student id")
        except ValueError as refused:
            return str(refused)
        if parts[1] != self.coursedir.assignment_id:
            return f"not a submission of {self.coursedir.assignment_id}"
        try:
            parse_utc(parts[2])
        except Exception:  # noqa: BLE001 (dateutil raises several kinds)
            return f"its time {parts[2]!r} does not parse"
        found = os.lstat(path)
        if not stat.S_ISDIR(found.st_mode):
            return "not a folder (a link or a file)"
        odd = _first_link_or_special(path)
        if odd:
            return f"holds {odd!r}, which is a link or not a regular file"
        if self.check_owner and pwd is not None:
            try:
                owner = pwd.getpwuid(found.st_uid).pw_name
            except KeyError:
                owner = f"uid {found.st_uid}"
            if owner != parts[0]:
                return f"made by the OS user {owner!r}, not by the student it names"
        return None


def _first_link_or_special(root):
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            mode = os.lstat(os.path.join(folder, name)).st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                return os.path.relpath(os.path.join(folder, name), root)
    return None


def copy_without_links(src, dest, ignore, log):
    """Copies the folder ``src`` to ``dest`` (new) opening every name relative to its own
    folder without following links, so an entry changed into a link after it was checked
    still cannot make the grader read outside it; such a name is skipped with a warning.

    Args:
        ignore: ``shutil.copytree``'s ``ignore(folder, names)`` (nbgrader's patterns).
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_DIRECTORY", 0)
    fd = os.open(src, flags)
    try:
        _copy_folder(fd, src, dest, ignore, log)
    finally:
        os.close(fd)


def _copy_folder(fd, src, dest, ignore, log):
    os.makedirs(dest)
    names = sorted(entry.name for entry in os.scandir(fd))
    skipped = set(ignore(src, names)) if ignore else set()
    for name in names:
        if name in skipped:
            continue
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
        try:
            mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                child = os.open(name, flags | getattr(os, "O_DIRECTORY", 0), dir_fd=fd)
                try:
                    _copy_folder(child, os.path.join(src, name), os.path.join(dest, name),
                                 ignore, log)
                finally:
                    os.close(child)
                continue
            if stat.S_ISREG(mode):
                with open(os.open(name, flags, dir_fd=fd), "rb") as reader:
                    if stat.S_ISREG(os.fstat(reader.fileno()).st_mode):
                        with open(os.path.join(dest, name), "xb") as writer:
                            shutil.copyfileobj(reader, writer)
                        continue
        except OSError:   # changed into a link (ELOOP, ENOTDIR) or gone since it was listed
            pass
        log.warning("not copied (a link or not a regular file): %s", os.path.join(src, name))
