"""nbgrader settings for tapeschool's lessons (copy into your course directory).

A lesson's teacher edition is nbgrader's source notebook; its release is the student
edition: the blanks (the solutions cleared), the student cells, every output the lesson
showed except those of the answer, check and reveal cells, and no teacher note. Which
cells score is in the teacher edition's metadata (scripts/lesson_grading.py).
"""
from nbconvert.preprocessors import TagRemovePreprocessor
from nbgrader.converters import GenerateAssignment
from nbgrader.preprocessors import ClearOutput

c = get_config()  # noqa: F821 (nbgrader defines it when it reads this file)

# An answer cell already holds the student's blank (`my_prediction = ...`) above its
# ### BEGIN SOLUTION region: the region is dropped, and nothing replaces it.
c.ClearSolutions.code_stub = {"python": ""}

# Cells tagged "teacher" (notes on the teacher edition) stay out of the students' copies,
# and so do the outputs of the answer and check cells ("Correct! The answer is ...") and
# of the reveal cells after a check (what the answer looked like).
c.TagRemovePreprocessor.enabled = True
c.TagRemovePreprocessor.remove_cell_tags = ["teacher"]
c.TagRemovePreprocessor.remove_all_outputs_tags = ["solution", "check", "reveal"]

# The other outputs stay, as in the student edition (the printed tapes, plots and the
# players' static pages): nbgrader's ClearOutput, which would clear them all, is left out
# of the release only (autograding still starts from cleared outputs).
c.GenerateAssignment.preprocessors = [TagRemovePreprocessor] + [
    p for p in GenerateAssignment.class_traits()["preprocessors"].default() if p is not ClearOutput]
