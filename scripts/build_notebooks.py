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
part of the notebook; of a cell's metadata only its ``tags`` are kept. Four tags
make the two editions (notebooks/README.md shows an exercise written with them):

    solution   a code cell whose answer lies between "### BEGIN SOLUTION" and
               "### END SOLUTION" lines; the student edition drops that region
               (the line above it is the student's blank, ``my_prediction = ...``)
    check      a code cell of checks (``check(my_prediction, ...)``), after its
               solution cell
    teacher    a cell only in the teacher edition
    student    a cell only in the student edition

The teacher edition carries nbgrader's cell metadata (a solution cell is an
"autograded answer", a check cell a locked "autograder test" worth one point),
so ``nbgrader generate_assignment`` takes it as a source notebook.

Building a lesson runs the teacher edition top to bottom in a fresh ``python3``
kernel (with nbclient, as ``jupyter nbconvert --to notebook --execute`` does)
and writes it with its outputs, which ``pytest --nbval`` then checks. The
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
metadata of the kernel that built it (``kernel_metadata``), Python version
included, and opens unmodified wherever the ``python3`` kernel runs that same
Python. All lessons carry the same metadata (``--check`` says when they do
not); ``--metadata`` rewrites it in every lesson from the current ``python3``
kernel without running a lesson.

Usage (from the repository root):

    python scripts/build_notebooks.py                 # build and execute every lesson
    python scripts/build_notebooks.py 02 04           # only the lessons starting 02, 04
    python scripts/build_notebooks.py --student       # student editions only, from the
                                                      #   committed teacher editions (no kernel)
    python scripts/build_notebooks.py --metadata      # only the kernel metadata of both editions,
                                                      #   from one started python3 kernel (no
                                                      #   lesson runs)
    python scripts/build_notebooks.py --check         # sources and .ipynb agree? (no kernel)
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

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SOURCES = NOTEBOOKS / "src"

KERNEL_NAME = "python3"
# An unexecuted notebook's metadata, until its kernel says what it is (``kernel_metadata``).
KERNELSPEC = {"name": KERNEL_NAME, "display_name": "Python 3 (ipykernel)", "language": "python"}
LANGUAGE_INFO = {"name": "python", "file_extension": ".py", "mimetype": "text/x-python",
                 "codemirror_mode": {"name": "ipython", "version": 3},
                 "nbconvert_exporter": "python", "pygments_lexer": "ipython3"}
KERNEL_METADATA = ("kernelspec", "language_info")

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

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


def _nbgrader(prefix, kind, number):
    """nbgrader's metadata: an autograded answer, or a locked autograder test of 1 point."""
    if kind == "solution":
        return {"grade": False, "grade_id": f"lesson{prefix}-answer-{number}", "locked": False,
                "schema_version": 3, "solution": True}
    return {"grade": True, "grade_id": f"lesson{prefix}-check-{number}", "locked": True,
            "points": 1, "schema_version": 3, "solution": False}


def build(source_path, edition="teacher"):
    """An unexecuted notebook, one edition of one lesson source."""
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {EDITIONS}, not {edition!r}")
    stem = source_path.stem
    prefix = stem.split("_", 1)[0]
    other = "student" if edition == "teacher" else "teacher"
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": dict(LANGUAGE_INFO)}
    counts = {"solution": 0, "check": 0}
    for i, (kind, source, tags) in enumerate(parse(source_path.read_text(encoding="utf-8"))):
        if other in tags:
            continue
        role = next((t for t in ("solution", "check") if t in tags), None)
        if role and kind != "code":
            raise ValueError(f"{stem}: a {role!r} cell must be a code cell:\n{source}")
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
        if role:
            counts[role] += 1
            if edition == "teacher":
                cell.metadata["nbgrader"] = _nbgrader(prefix, role, counts[role])
        nb.cells.append(cell)
    return nb


def student_edition(source_path, teacher):
    """The student edition of a lesson, with the outputs of ``teacher`` (its executed
    teacher edition) in every cell but the solution and check cells, whose outputs are
    cleared: a student sees the lesson as it ran, and the exercises blank."""
    nb = build(source_path, "student")
    nb.metadata = {key: copy.deepcopy(teacher.metadata[key])
                   for key in KERNEL_METADATA if key in teacher.metadata}
    ran = {cell.id: cell for cell in teacher.cells}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.get("tags", [])
        if "solution" in tags or "check" in tags or "student" in tags:
            continue
        twin = ran.get(cell.id)
        if twin is None or twin.source != cell.source:
            raise ValueError(f"{source_path.stem}: the teacher edition does not match the "
                             f"source at cell {cell.id}; rebuild it first")
        cell.outputs = twin.outputs
        cell.execution_count = twin.execution_count
    return nb


def kernel_metadata(language_info, kernel_name=KERNEL_NAME):
    """The notebook metadata JupyterLab writes once ``kernel_name`` has started: the
    kernelspec's name, display name and language, and the kernel's ``language_info`` (its
    kernel_info reply) whole, Python version included.

    JupyterLab replaces both entries on opening a notebook and marks it modified when
    either differs from the file's; stored like this, a lesson opens unmodified wherever
    the kernel reports the same, and saving it rewrites nothing. Nothing else is kept:
    nbclient's widget state (``widgets``) names models of the build's kernel only.

    Args:
        language_info: the ``language_info`` of the kernel's kernel_info reply.
        kernel_name: the kernelspec the lessons name.

    Returns:
        ``{"kernelspec": {...}, "language_info": {...}}``, e.g. with
        ``language_info["version"] == "3.11.7"``.
    """
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec(kernel_name)
    if "version" not in language_info:
        raise ValueError(f"the {kernel_name} kernel reported no language_info.version: "
                         f"{language_info}")
    return {"kernelspec": {"name": kernel_name, "display_name": spec.display_name,
                           "language": spec.language},
            "language_info": copy.deepcopy(dict(language_info))}


def kernel_language_info(kernel_name=KERNEL_NAME):
    """Starts ``kernel_name`` once and returns the ``language_info`` it reports, as
    JupyterLab reads it on opening a notebook (for ``kernel_metadata``)."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name=kernel_name, startup_timeout=120)
    try:
        reply = client.kernel_info(reply=True, timeout=60)
        return reply["content"]["language_info"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def opens_unmodified(metadata):
    """Whether ``metadata`` has the form ``kernel_metadata`` gives (no kernel is asked, so
    this holds or not whatever Python runs it): both entries, nothing else, a version."""
    spec, info = metadata.get("kernelspec", {}), metadata.get("language_info", {})
    return (set(metadata) == set(KERNEL_METADATA) and spec.get("name") == KERNEL_NAME
            and {"display_name", "language"} <= set(spec) and "version" in info)


def execute(nb):
    """Runs ``nb`` in a fresh python3 kernel started in notebooks/, as nbval will."""
    from nbclient import NotebookClient

    try:  # a first import builds matplotlib's font cache, noisily: not inside a lesson
        import matplotlib.font_manager  # noqa: F401
    except ImportError:
        pass

    client = NotebookClient(nb, kernel_name=KERNEL_NAME, timeout=300, record_timing=False,
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()   # sets language_info from the kernel's kernel_info reply
    nb.metadata = kernel_metadata(nb.metadata["language_info"])
    patterns = _sanitize_patterns()
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = _joined_streams(cell.outputs)
            for out in cell.outputs:
                if out.output_type == "stream":
                    out.text = _sanitized(out.text, patterns)
                _keep_static_form(out)
    return nb


def _sanitize_patterns():
    """nbval's (regex, replacement) pairs from notebooks/nbval_sanitize.cfg."""
    text = (NOTEBOOKS / "nbval_sanitize.cfg").read_text(encoding="utf-8")
    return re.findall(r"^regex: (.*)$\n^replace: (.*)$", text, flags=re.MULTILINE)


def _sanitized(text, patterns):
    """Stored outputs are kept sanitized (temporary file names, random ids), as nbval
    compares them, so that rebuilding a lesson changes nothing that did not change."""
    for regex, replacement in patterns:
        text = re.sub(regex, replacement, text)
    return text


def _keep_static_form(out):
    """Drops a widget's live view, leaving its static form (text/html, else text/plain).

    The view names a widget model that lived in the build's kernel and is not stored, so
    no reader could show it (JupyterLab would print "model not found"), and its model id is
    random (a rebuild would differ). Without it every reader shows the static form:
    JupyterLab before the lesson runs, a code host, an HTML export. Running the cell brings
    the live widget back, and nbval does not compare widget views. A widget with no text/html
    (an ipywidgets container such as widgets.DerivativeExplorer) keeps its text/plain."""
    data = out.get("data", {})
    if WIDGET_VIEW in data and len(data) > 1:
        del data[WIDGET_VIEW]


def _joined_streams(outputs):
    """Joins consecutive pieces of one stream: how the kernel splits them varies by run."""
    joined = []
    for out in outputs:
        last = joined[-1] if joined else None
        if (out.output_type == "stream" and last is not None
                and last.output_type == "stream" and last.name == out.name):
            last.text += out.text
        else:
            joined.append(out)
    return joined


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


def check(paths):
    """Names of the notebooks that are missing or do not match their source: a teacher
    edition whose cells differ from the source's or whose metadata is not its kernel's
    (``metadata_problems``), or a student edition that differs from the one its source
    and committed teacher edition make."""
    stale = list(metadata_problems(paths))
    for path in paths:
        target = teacher_path(path)
        if not target.exists():
            stale += [target.name, f"student/{target.name}"]
            continue
        teacher = nbformat.read(target, as_version=4)
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
        raise SystemExit(f"{teacher_path(path).name} does not match {path.name}; "
                         f"run: python scripts/build_notebooks.py {path.stem[:2]}")
    return teacher


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
        for name in stale:
            if name in metadata:
                print(f"{name}: {metadata[name]}, so JupyterLab would open it modified; "
                      f"run: python scripts/build_notebooks.py --metadata")
            else:
                print(f"{name} does not match notebooks/src/; "
                      f"run: python scripts/build_notebooks.py")
        return 1 if stale else 0
    out = (args.out or NOTEBOOKS).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.metadata:
        print(f"asking a fresh {KERNEL_NAME} kernel for its language_info", flush=True)
        metadata = kernel_metadata(kernel_language_info())
    for path in paths:
        target = teacher_path(path, out)
        if args.student:
            teacher = nbformat.read(teacher_path(path), as_version=4)
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
