"""Builds the lessons: notebooks/src/NN_topic.py -> two editions, notebooks/NN_topic.ipynb
(the teacher's: answers and outputs) and notebooks/student/NN_topic.ipynb (blanks).

The lessons are written as plain Python files in jupytext's "percent" format
(which VS Code and PyCharm read too), so that they diff and review like code:

    # %% [markdown]
    # # Lesson 1: Gradients and tapes
    # Text in Markdown, each line behind "# ".

    # %%
    x = ad.Variable(3.0)

    # %% tags=["nbval-ignore-output"]
    print(inspect.getsource(ad.GradientTape.gradient))

Anything above the first ``# %%`` line is the file's own header and is not
part of the notebook; of a cell's metadata only its ``tags`` are kept. Five tags
make the two editions (notebooks/README.md shows an exercise written with them):

    solution   a code cell whose answer lies between "### BEGIN SOLUTION" and
               "### END SOLUTION" lines; the student edition drops that region
               (the line above it is the student's blank, ``my_prediction = ...``)
    check      a code cell of checks (``check(my_prediction, ...)``), after its
               solution cell
    reveal     a code cell right after a check cell (or another reveal cell) that shows
               more of the answer (the tape, the whole gradient): its outputs are
               cleared in the student edition, as a check's are, so nothing on a
               student's screen answers a prediction before the student has made it,
               and a check cell itself prints only its verdict
    teacher    a cell only in the teacher edition
    student    a text cell for the students (how to answer): in the student edition,
               and in the teacher edition too, so that nbgrader's release of it (which
               drops the teacher cells) carries it

The teacher edition carries nbgrader's cell metadata, so ``nbgrader
generate_assignment`` takes it as a source notebook. scripts/lesson_grading.py
decides it from the source: a Predict moment is worth nothing (an "autograded
answer" and a locked read-only check), an exercise's checks are locked
"autograder tests" worth its points, and homework, as the lesson's plan names
it, is worth more.

Building a lesson runs the teacher edition top to bottom in a fresh ``python3``
kernel (with nbclient, as ``jupyter nbconvert --to notebook --execute`` does:
scripts/lesson_kernel.py) and writes it with its outputs, which ``pytest --nbval`` then checks. The
student edition is not run again: it takes the teacher's outputs cell by cell,
except in solution and check cells, whose outputs are cleared. Everything that
could differ between two builds is fixed: cell ids come from the cell's
position in the source, no timing metadata is kept, and printed text goes
through the same sanitizing patterns nbval applies
(notebooks/nbval_sanitize.cfg), so a temporary file name or a random id does
not change between builds.

The notebook metadata is what JupyterLab itself would write. On opening a
notebook, JupyterLab starts its kernel and overwrites ``kernelspec`` and
``language_info`` with what that kernel reports; if that differs from the file
in any field, the document is marked modified (the dot on its tab, "Save
changes?" on close) and saving rewrites it. ipykernel reports
``language_info.version``, its Python version, so lessons stored without it
opened modified everywhere (issue 23). A lesson therefore records the
metadata of the kernel that built it (``lesson_kernel.kernel_metadata``), Python version
included, and opens unmodified wherever the ``python3`` kernel runs that same
Python. All lessons carry the same metadata (``--check`` says when they do
not); ``--metadata`` rewrites it in every lesson from the current ``python3``
kernel without running a lesson.

What needs no kernel needs no run: ``--refresh`` remakes both editions from the
sources (text cells, tags, nbgrader metadata) and the committed teacher editions
(code cells, their outputs, the kernel metadata), and refuses a lesson whose
code differs from its committed run.

Usage (from the repository root):

    python scripts/build_notebooks.py                 # build and execute every lesson
    python scripts/build_notebooks.py 02 04           # only the lessons starting 02, 04
    python scripts/build_notebooks.py --student       # student editions only, from the
                                                      #   committed teacher editions (no kernel)
    python scripts/build_notebooks.py --metadata      # only the kernel metadata of both editions,
                                                      #   from one started python3 kernel (no
                                                      #   lesson runs)
    python scripts/build_notebooks.py --refresh       # text cells, tags and nbgrader metadata
                                                      #   from the sources, code cells and their
                                                      #   outputs from the committed teacher
                                                      #   editions (no kernel; a lesson whose
                                                      #   code changed is refused: build it)
    python scripts/build_notebooks.py --check         # sources and .ipynb agree, and the stored
                                                      #   players are the widgets'? (no kernel)
    python scripts/build_notebooks.py --out DIR ...   # write DIR/NN_*.ipynb and DIR/student/
                                                      #   instead of notebooks/ (with any of the
                                                      #   above but --check)
"""

import argparse
import copy
import json
import re
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))   # scripts/, when imported by path
import lesson_grading  # noqa: E402
from lesson_kernel import (KERNEL_METADATA, KERNEL_NAME, KERNELSPEC,  # noqa: E402
                           LANGUAGE_INFO, execute, kernel_language_info, kernel_metadata,
                           opens_unmodified)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SOURCES = NOTEBOOKS / "src"

EDITIONS = ("teacher", "student")
BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"


def parse(text):
    """The cells of a percent-format source (read by jupytext): ``(cell_type, source, tags)``."""
    import jupytext

    lines = text.splitlines(keepends=True)
    first = next((i for i, line in enumerate(lines) if line.startswith("# %%")), len(lines))
    nb = jupytext.reads("".join(lines[first:]), fmt="py:percent")
    return [(cell.cell_type, cell.source, list(cell.metadata.get("tags", [])))
            for cell in nb.cells]


def without_solutions(source):
    """``source`` with every BEGIN/END SOLUTION region removed, markers included (what
    nbgrader's ClearSolutions does with an empty code stub)."""
    kept, inside = [], False
    for line in source.split("\n"):
        if BEGIN_SOLUTION in line:
            if inside:
                raise ValueError(f"nested {BEGIN_SOLUTION!r} in:\n{source}")
            inside = True
        elif END_SOLUTION in line:
            if not inside:
                raise ValueError(f"{END_SOLUTION!r} without a beginning in:\n{source}")
            inside = False
        elif not inside:
            kept.append(line)
    if inside:
        raise ValueError(f"no {END_SOLUTION!r} in:\n{source}")
    return "\n".join(kept).rstrip()


def build(source_path, edition="teacher"):
    """An unexecuted notebook, one edition of one lesson source."""
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {EDITIONS}, not {edition!r}")
    stem = source_path.stem
    prefix = stem.split("_", 1)[0]
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": dict(LANGUAGE_INFO)}
    cells = parse(source_path.read_text(encoding="utf-8"))
    grading = lesson_grading.nbgrader_cells(prefix, cells, stem) if edition == "teacher" else {}
    for i, (kind, source, tags) in enumerate(cells):
        if "student" in tags and kind != "markdown":
            raise ValueError(f"{stem}: a 'student' cell must be a text cell (the teacher "
                             f"edition carries it for nbgrader's release):\n{source}")
        if edition == "student" and "teacher" in tags:
            continue
        role = next((t for t in ("solution", "check", "reveal") if t in tags), None)
        if role and kind != "code":
            raise ValueError(f"{stem}: a {role!r} cell must be a code cell:\n{source}")
        if role == "reveal" and not (i and {"check", "reveal"} & set(cells[i - 1][2])):
            raise ValueError(f"{stem}: a 'reveal' cell must follow a check cell:\n{source}")
        if role == "solution" and BEGIN_SOLUTION not in source:
            raise ValueError(f"{stem}: a solution cell without {BEGIN_SOLUTION!r}:\n{source}")
        if role != "solution" and BEGIN_SOLUTION in source:
            raise ValueError(f"{stem}: {BEGIN_SOLUTION!r} outside a solution cell:\n{source}")
        if role == "solution" and edition == "student":
            source = without_solutions(source)
        make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        cell = make(source)
        cell.id = f"lesson{prefix}-{i:03d}"
        if tags:
            cell.metadata["tags"] = tags
        if i in grading:
            cell.metadata["nbgrader"] = grading[i]
        nb.cells.append(cell)
    return nb


def student_edition(source_path, teacher):
    """The student edition of a lesson, with the outputs of ``teacher`` (its executed
    teacher edition) in every cell but the solution, check and reveal cells, whose outputs
    are cleared: a student sees the lesson as it ran, and the exercises blank."""
    nb = build(source_path, "student")
    nb.metadata = {key: copy.deepcopy(teacher.metadata[key])
                   for key in KERNEL_METADATA if key in teacher.metadata}
    ran = {cell.id: cell for cell in teacher.cells}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.get("tags", [])
        if {"solution", "check", "reveal", "student"} & set(tags):
            continue
        twin = ran.get(cell.id)
        if twin is None or twin.source != cell.source:
            raise ValueError(f"{source_path.stem}: the teacher edition does not match the "
                             f"source at cell {cell.id}; rebuild it first")
        cell.outputs = twin.outputs
        cell.execution_count = twin.execution_count
    return nb


def cell_summary(nb):
    """What the sources determine: each cell's id, type, source and metadata."""
    return [(c.id, c.cell_type, c.source, dict(c.metadata)) for c in nb.cells]


def sources(prefixes=()):
    found = sorted(SOURCES.glob("[0-9][0-9]_*.py"))
    if prefixes:
        found = [p for p in found if any(p.stem.startswith(x) for x in prefixes)]
    return found


def teacher_path(source_path, out=None):
    """Where the teacher edition of ``source_path`` lies: in ``out``, else notebooks/."""
    return Path(out or NOTEBOOKS) / (source_path.stem + ".ipynb")


def student_path(source_path, out=None):
    """Where the student edition of ``source_path`` lies: in ``out``/student/, else
    notebooks/student/."""
    return Path(out or NOTEBOOKS) / "student" / (source_path.stem + ".ipynb")


def metadata_problems(paths):
    """``{name: why}`` for the teacher editions whose metadata JupyterLab would change on
    opening them: not of the form ``kernel_metadata`` gives (``opens_unmodified``), or not
    that of most of the other lessons (built by another Python: in one installation, one of
    the two opens modified)."""
    found = {}
    for path in paths:
        target = teacher_path(path)
        if target.exists():
            found[target.name] = nbformat.read(target, as_version=4).metadata
    problems = {name: "its metadata is not what a kernel reports (no language_info.version?)"
                for name, metadata in found.items() if not opens_unmodified(metadata)}
    kinds = [json.dumps(metadata, sort_keys=True) for metadata in found.values()]
    usual = max(set(kinds), key=kinds.count, default=None)
    for (name, metadata), kind in zip(found.items(), kinds):
        if kind != usual and name not in problems:
            version = metadata.get("language_info", {}).get("version")
            problems[name] = (f"its kernel metadata (Python {version}) is not that of the "
                              f"other lessons")
    return problems


PLAYER_MARK = '<div class="tp-static"'


def _current_player_code():
    """The tape player's stylesheet and script as the installed widgets inline them now."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from widgets.player.page import html_export

    return html_export.player_css(), html_export._module_body()


def player_skeleton(html):
    """A stored player's HTML without what differs from one player to the next (its id, its
    data, its starting state, its still picture): the stylesheet, the script and the
    wrapper that starts it, which only the widgets' code decides."""
    html = re.sub(r"tp-static-[\w-]+", "tp-static-ID", html)
    html = re.sub(r'<div class="tp-fallback">.*?</div>\n(?=<script type="application/'
                  r'(?:json|gzip-base64)" class="tp-data">)', '<div class="tp-fallback"></div>\n',
                  html, flags=re.DOTALL)
    html = re.sub(r'<script type="application/(?:json|gzip-base64)" class="tp-(data|state)">'
                  r'.*?</script>', r'<script class="tp-\1"></script>', html, flags=re.DOTALL)
    return html


def _current_skeleton():
    """The skeleton of a player the widgets make now (of a one-record tape)."""
    _current_player_code()                      # puts the checkout on sys.path
    import autodiff as ad
    from widgets.player.page import html_export

    x = ad.Variable(2.0)
    with ad.GradientTape() as tape:
        y = x * x
    return player_skeleton(html_export.html_snippet(tape, target=y, sources=x))


def stale_widget_cells(nb):
    """Ids of the code cells of ``nb`` whose stored tape player (the static ``text/html``
    form, which inlines the player's stylesheet and script and the wrapper that starts it)
    is not the one the widgets make now: a notebook built before ``widgets/player/``
    changed.

    nbval does not see this (it masks the static form), and a lesson rebuilt after such a
    change shows the whole new script in its diff; ``--check`` names these notebooks.
    """
    expected = _current_skeleton()
    stale = []
    for cell in nb.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            html = output.get("data", {}).get("text/html", "")
            html = "".join(html) if isinstance(html, list) else html
            if PLAYER_MARK in html and player_skeleton(html) != expected:
                stale.append(cell.id)
                break
    return stale


def check(paths):
    """Names of the notebooks that are missing or do not match their source: a teacher
    edition whose cells differ from the source's, whose metadata is not its kernel's
    (``metadata_problems``) or whose stored tape players carry other widget code than the
    package's (``stale_widget_cells``), or a student edition that differs from the one its
    source and committed teacher edition make."""
    stale = list(metadata_problems(paths))
    for path in paths:
        target = teacher_path(path)
        if not target.exists():
            stale += [target.name, f"student/{target.name}"]
            continue
        teacher = nbformat.read(target, as_version=4)
        if stale_widget_cells(teacher):
            stale += [name for name in (target.name, f"student/{target.name}")
                      if name not in stale]
            continue
        if cell_summary(teacher) != cell_summary(build(path)):
            stale += [name for name in (target.name, f"student/{target.name}")
                      if name not in stale]
            continue
        student = student_path(path)
        if not student.exists() or student.read_text(encoding="utf-8") \
                != nbformat.writes(student_edition(path, teacher)) + "\n":
            stale.append(f"student/{target.name}")
    return stale


def write_student_edition(path, teacher, out=None):
    target = student_path(path, out)
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(student_edition(path, teacher), target)


def committed_teacher_edition(path):
    """The committed teacher edition of ``path``, refused if its cells are not the source's."""
    teacher = nbformat.read(teacher_path(path), as_version=4)
    if cell_summary(teacher) != cell_summary(build(path)):
        raise SystemExit(f"{teacher_path(path).name} does not match {path.name}; run: "
                         f"python scripts/build_notebooks.py --refresh {path.stem[:2]} (if its "
                         f"code did not change), else python scripts/build_notebooks.py "
                         f"{path.stem[:2]}")
    return teacher


def refreshed_teacher_edition(path):
    """The teacher edition of ``path`` made again without running it: its text cells, tags
    and nbgrader metadata from the source, its code cells with the outputs and execution
    counts of the committed teacher edition, and the committed kernel metadata.

    Code cells are matched in order, so a text cell added or removed moves nothing. A
    lesson whose code differs from the committed run (a code cell added, removed or edited)
    cannot be refreshed: its outputs would be stale.

    Returns:
        The notebook; raises ValueError naming the first code cell that differs.
    """
    teacher = nbformat.read(teacher_path(path), as_version=4)
    nb = build(path)
    ran = [c for c in teacher.cells if c.cell_type == "code"]
    code = [c for c in nb.cells if c.cell_type == "code"]
    for k, (old, new) in enumerate(zip(ran + [None] * len(code), code + [None] * len(ran))):
        if old is None and new is None:
            break
        if old is None or new is None or old.source != new.source:
            where = (new or old).source.strip().splitlines()[:1]
            raise ValueError(f"{path.stem}: code cell {k + 1} differs from the committed run "
                             f"({where}); build it: python scripts/build_notebooks.py "
                             f"{path.stem[:2]}")
        new.outputs, new.execution_count = old.outputs, old.execution_count
    nb.metadata = copy.deepcopy(teacher.metadata)
    return nb


def _shown(path):
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lesson number prefixes (default: all)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="only report notebooks that do not match their sources")
    mode.add_argument("--student", action="store_true",
                      help="only write the student editions, from the committed teacher "
                           "editions (no kernel)")
    mode.add_argument("--metadata", action="store_true",
                      help="only rewrite the kernel metadata of both editions from a started "
                           "python3 kernel, keeping every cell and output (no lesson runs)")
    mode.add_argument("--refresh", action="store_true",
                      help="rewrite both editions' text cells, tags and nbgrader metadata from "
                           "the sources, keeping the committed code cells and outputs (no "
                           "kernel); a lesson whose code changed is refused")
    parser.add_argument("--out", type=Path, default=None,
                        help="write DIR/NN_topic.ipynb and DIR/student/ instead of notebooks/ "
                             "(teacher editions are still read from notebooks/)")
    args = parser.parse_args(argv)
    paths = sources(args.lessons)
    if not paths:
        parser.error(f"no lesson sources match {args.lessons} in {SOURCES}")
    if args.check:
        if args.out is not None:
            parser.error("--check reads notebooks/; it takes no --out")
        stale, metadata = check(paths), metadata_problems(paths)
        old_players = {teacher_path(p).name for p in paths if teacher_path(p).exists()
                       and stale_widget_cells(nbformat.read(teacher_path(p), as_version=4))}
        for name in stale:
            if name in metadata:
                print(f"{name}: {metadata[name]}, so JupyterLab would open it modified; "
                      f"run: python scripts/build_notebooks.py --metadata")
            elif name.split("/")[-1] in old_players:
                print(f"{name} holds a tape player older than widgets/player/ (its inlined "
                      f"script, stylesheet or starting code differs); run: python "
                      f"scripts/build_notebooks.py {name.split('/')[-1][:2]}")
            else:
                print(f"{name} does not match notebooks/src/; run: python "
                      f"scripts/build_notebooks.py --refresh (text, tags, grading: no kernel), "
                      f"or python scripts/build_notebooks.py {name.split('/')[-1][:2]} if its "
                      f"code changed")
        return 1 if stale else 0
    out = (args.out or NOTEBOOKS).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.metadata:
        print(f"asking a fresh {KERNEL_NAME} kernel for its language_info", flush=True)
        metadata = kernel_metadata(kernel_language_info())
    refused = []
    for path in paths:
        target = teacher_path(path, out)
        if args.student:
            teacher = nbformat.read(teacher_path(path), as_version=4)
        elif args.refresh:
            try:
                teacher = refreshed_teacher_edition(path)
            except ValueError as why:
                refused.append(str(why))
                continue
            print(f"writing {_shown(target)} (text, tags and grading; outputs kept)", flush=True)
            nbformat.write(teacher, target)
        elif args.metadata:
            teacher = committed_teacher_edition(path)
            teacher.metadata = copy.deepcopy(metadata)
            print(f"writing {_shown(target)} (metadata only)", flush=True)
            nbformat.write(teacher, target)
        else:
            print(f"executing {_shown(path)} -> {_shown(target)}", flush=True)
            teacher = execute(build(path))
            nbformat.write(teacher, target)
        print(f"writing {_shown(student_path(path, out))}", flush=True)
        write_student_edition(path, teacher, out)
    if out == NOTEBOOKS.resolve():
        for name, why in metadata_problems(sources()).items():
            print(f"note: {name}: {why}; to give every lesson this kernel's metadata, run: "
                  f"python scripts/build_notebooks.py --metadata", flush=True)
    for why in refused:
        print(f"not refreshed: {why}", flush=True)
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
