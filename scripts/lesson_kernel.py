"""Running a lesson in a kernel, and the notebook metadata a kernel leaves in it.

scripts/build_notebooks.py builds a lesson's teacher edition and runs it here:
``execute`` runs it top to bottom in a fresh ``python3`` kernel started in
notebooks/ (as nbval will) and keeps its outputs in a form that does not change
between two runs (streams joined, nbval's sanitizing patterns applied, widgets
by their static form); ``kernel_metadata`` is the ``kernelspec`` and
``language_info`` JupyterLab writes on opening a notebook, so that a lesson
stored with them opens unmodified (issue 23).

What it must not do: decide a lesson's cells, tags or grading (build_notebooks.py
and lesson_grading.py do), or write a file.
"""

import copy
import re
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"

KERNEL_NAME = "python3"
# An unexecuted notebook's metadata, until its kernel says what it is (``kernel_metadata``).
KERNELSPEC = {"name": KERNEL_NAME, "display_name": "Python 3 (ipykernel)", "language": "python"}
LANGUAGE_INFO = {"name": "python", "file_extension": ".py", "mimetype": "text/x-python",
                 "codemirror_mode": {"name": "ipython", "version": 3},
                 "nbconvert_exporter": "python", "pygments_lexer": "ipython3"}
KERNEL_METADATA = ("kernelspec", "language_info")

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


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
