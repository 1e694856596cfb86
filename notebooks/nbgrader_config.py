"""nbgrader settings for tapeschool's lessons (copy into your course directory)."""
from nbconvert.preprocessors import TagRemovePreprocessor
from nbgrader.converters import GenerateAssignment

c = get_config()  # noqa: F821 (nbgrader defines it when it reads this file)

# An answer cell already holds the student's blank (`my_prediction = ...`) above its
# ### BEGIN SOLUTION region: the region is dropped, and nothing replaces it.
c.ClearSolutions.code_stub = {"python": ""}

# Cells tagged "teacher" (notes on the teacher edition) stay out of the students' copies.
c.TagRemovePreprocessor.enabled = True
c.TagRemovePreprocessor.remove_cell_tags = ["teacher"]
c.GenerateAssignment.preprocessors = (
    [TagRemovePreprocessor] + list(GenerateAssignment.class_traits()["preprocessors"].default()))
