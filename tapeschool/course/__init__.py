"""A course on JupyterHub with nbgrader: the lessons released, worked, submitted, graded, returned.

The teacher editions (``notebooks/NN_topic.ipynb``) carry nbgrader's cell
metadata; this package makes an nbgrader course of them and runs nbgrader's
own steps on it, in order (``tapeschool-course --help`` lists the commands)::

    layout.py      the course directory: source/lessonNN/ from the teacher editions,
                   nbgrader_config.py, the exchange folder              (init)
    teacher.py     release; collect; autograde and generate_feedback with a progress
                   line per submission; release_feedback; the scores   (release ... return)

  the exchange, which carries lessons, submissions and feedback between people:
    exchange.py    nbgrader's exchange folder with checks: plain names at submit and
                   collect, a submission readable by its student and the grader only, no
                   link followed (a hub whose users are OS accounts)
    ngshare.py     the exchange as the hub's ngshare service (a hub whose servers all run
                   as one OS user): nbgrader's side, and the service with its roster

  grading, in the order a submission goes through it:
    autograde.py   a class: nbgrader's autograde per submission, in workers, a line
                   each and a summary; "not graded: <reason>", never a 0   (grade)
    grading.py     SandboxedGrading, nbgrader's step in place of Execute: run in the
                   sandbox, compare the answers with the key here, write the verdicts
    answer_key.py  the key, made from the teacher edition run in the sandbox
    recording_run.py  one notebook run in the sandbox, its check cells recording
    check_cells.py a check cell rewritten to record its predictions as plain data
    sandbox.py     bubblewrap + setpriv: an unprivileged uid, no network, only the
                   submission and read-only code, limits; safe reading of its output
    run_notebook.py   inside the sandbox: nbclient runs the notebook, outputs capped
    grading_status.py graded or not, and why, beside nbgrader's gradebook
    student.py     a student's fetch, submit and fetch_feedback, and answers for a
                   lesson's blanks (what JupyterLab's Assignments panel does for a student)
    simulate.py    a class of many students submitting, with known scores (dry run, load)
    progress.py    the progress lines
    hub_config.py  jupyterhub_config.py and the Jupyter settings of students' servers and
                   of the formgrader service, as nbgrader documents for a hub
    localhub.py    that hub on loopback (test-only authenticator and spawner): tests/hub,
                   benchmarks/course_load.py and ``tapeschool-course local-hub``
    hubspawners.py its test-only spawners: an OS account per user, or every server as one
                   account in a container of its own (bubblewrap)
    browser.py     a hub user in Debian's Chromium (log in, reach JupyterLab, fetch and
                   open a lesson), as tests/hub and the load benchmark drive it

notebooks/README.md ("Teaching a course on JupyterHub") is the teacher's guide.

What it must not do: reimplement nbgrader (every step is nbgrader's API or its
exchange classes, configured the way nbgrader documents; grading replaces only
nbgrader's Execute step), edit a lesson, run a student's code outside the
sandbox, or import ``autodiff`` or ``widgets`` (the sandbox's kernels do).
"""
