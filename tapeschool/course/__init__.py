"""A course on JupyterHub with nbgrader: the lessons released, worked, submitted, graded, returned.

The teacher editions (``notebooks/NN_topic.ipynb``) carry nbgrader's cell
metadata; this package makes an nbgrader course of them and runs nbgrader's
own steps on it, in order (``tapeschool-course --help`` lists the commands)::

    layout.py      the course directory: source/lessonNN/ from the teacher editions,
                   nbgrader_config.py, the exchange folder              (init)
    teacher.py     release; collect; autograde and generate_feedback with a progress
                   line per submission; release_feedback; the scores   (release ... return)
    student.py     a student's fetch, submit and fetch_feedback, and answers for a
                   lesson's blanks (what JupyterLab's Assignments panel does for a student)
    simulate.py    a class of many students submitting, with known scores (dry run, load)
    progress.py    the progress lines
    hub_config.py  jupyterhub_config.py and the Jupyter settings of students' servers and
                   of the formgrader service, as nbgrader documents for a hub
    localhub.py    that hub on loopback (test-only authenticator and spawner): tests/hub,
                   benchmarks/course_load.py and ``tapeschool-course local-hub``
    browser.py     a hub user in Debian's Chromium (log in, reach JupyterLab, fetch and
                   open a lesson), as tests/hub and the load benchmark drive it

notebooks/README.md ("Teaching a course on JupyterHub") is the teacher's guide.

What it must not do: reimplement nbgrader (every step is nbgrader's API or its
exchange classes, configured the way nbgrader documents), edit a lesson, or
import ``autodiff`` or ``widgets`` (the lessons' kernels do; the teacher's steps
only check that such a kernel can).
"""
