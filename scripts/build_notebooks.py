"""Builds the lessons: notebooks/src/NN_topic.py -> notebooks/NN_topic.ipynb, executed.

The lessons are written as plain Python files in the "percent" cell format
(the one jupytext and VS Code read), so that they diff and review like code:

    # %% [markdown]
    # # Lesson 1: Gradients and tapes
    # Text in Markdown, each line behind "# ".

    # %%
    x = ad.Variable(3.0)

    # %% tags=["nbval-ignore-output"]
    print(inspect.getsource(ad.GradientTape.gradient))

Anything above the first ``# %%`` line is the file's own header and is not
part of the notebook. Building a lesson runs it top to bottom in a fresh
``python3`` kernel (what ``jupyter nbconvert --to notebook --execute`` does)
and writes the notebook with its outputs, which ``pytest --nbval`` then
checks. Everything that could differ between two builds is fixed: cell ids
come from the cell's position, no timing metadata is kept, the kernel's
Python version is left out of the metadata, and printed text goes through the
same sanitizing patterns nbval applies (notebooks/nbval_sanitize.cfg), so a
temporary file name or a random id does not change between builds.

Usage (from the repository root):

    python scripts/build_notebooks.py                 # build and execute every lesson
    python scripts/build_notebooks.py 02 04           # only the lessons starting 02, 04
    python scripts/build_notebooks.py --check         # sources and .ipynb agree? (no kernel)
"""

import argparse
import json
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SOURCES = NOTEBOOKS / "src"

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
LANGUAGE_INFO = {"name": "python", "file_extension": ".py", "mimetype": "text/x-python",
                 "codemirror_mode": {"name": "ipython", "version": 3},
                 "nbconvert_exporter": "python", "pygments_lexer": "ipython3"}

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

_MARKER = re.compile(r"^# %%(?P<markdown> \[markdown\])?(?: tags=(?P<tags>\[.*\]))?\s*$")


def parse(text):
    """The cells of a percent-format source: a list of ``(cell_type, source, tags)``."""
    cells, current = [], None
    for line in text.splitlines():
        match = _MARKER.match(line)
        if match:
            if current is not None:
                cells.append(current)
            tags = json.loads(match["tags"]) if match["tags"] else []
            current = ("markdown" if match["markdown"] else "code", [], tags)
        elif current is not None:
            current[1].append(line)
    if current is not None:
        cells.append(current)
    return [(kind, _cell_source(kind, lines), tags) for kind, lines, tags in cells]


def _cell_source(kind, lines):
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    while lines and not lines[0].strip():
        lines = lines[1:]
    if kind == "markdown":
        lines = [_uncomment(line) for line in lines]
    return "\n".join(lines)


def _uncomment(line):
    if line.startswith("# "):
        return line[2:]
    if line.rstrip() == "#":
        return ""
    raise ValueError(f"a Markdown line must start with '# ' (or be a bare '#'): {line!r}")


def build(source_path):
    """An unexecuted notebook from one lesson source."""
    stem = source_path.stem
    prefix = stem.split("_", 1)[0]
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": dict(LANGUAGE_INFO)}
    for i, (kind, source, tags) in enumerate(parse(source_path.read_text(encoding="utf-8"))):
        make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        cell = make(source)
        cell.id = f"lesson{prefix}-{i:03d}"
        if tags:
            cell.metadata["tags"] = tags
        nb.cells.append(cell)
    return nb


def execute(nb):
    """Runs ``nb`` in a fresh python3 kernel started in notebooks/, as nbval will."""
    from nbclient import NotebookClient

    try:  # a first import builds matplotlib's font cache, noisily: not inside a lesson
        import matplotlib.font_manager  # noqa: F401
    except ImportError:
        pass

    client = NotebookClient(nb, kernel_name="python3", timeout=300, record_timing=False,
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": dict(LANGUAGE_INFO)}
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
    """What the sources determine: each cell's type, source and tags."""
    return [(c.cell_type, c.source, list(c.metadata.get("tags", []))) for c in nb.cells]


def sources(prefixes=()):
    found = sorted(SOURCES.glob("[0-9][0-9]_*.py"))
    if prefixes:
        found = [p for p in found if any(p.stem.startswith(x) for x in prefixes)]
    return found


def check(paths):
    """Names of the lessons whose .ipynb is missing or does not match its source."""
    stale = []
    for path in paths:
        target = NOTEBOOKS / (path.stem + ".ipynb")
        if not target.exists() or cell_summary(nbformat.read(target, as_version=4)) \
                != cell_summary(build(path)):
            stale.append(target.name)
    return stale


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lesson number prefixes (default: all)")
    parser.add_argument("--check", action="store_true",
                        help="only report notebooks that do not match their sources")
    args = parser.parse_args(argv)
    paths = sources(args.lessons)
    if not paths:
        parser.error(f"no lesson sources match {args.lessons} in {SOURCES}")
    if args.check:
        stale = check(paths)
        for name in stale:
            print(f"{name} does not match notebooks/src/; run: python scripts/build_notebooks.py")
        return 1 if stale else 0
    for path in paths:
        target = NOTEBOOKS / (path.stem + ".ipynb")
        print(f"executing {path.relative_to(ROOT)} -> {target.relative_to(ROOT)}", flush=True)
        nbformat.write(execute(build(path)), target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
