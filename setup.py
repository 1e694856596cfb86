"""The teacher editions travel in the wheel, so ``tapeschool-course`` works from any folder.

Everything else about the package is in pyproject.toml. A wheel (or a plain
``pip install .``) copies ``notebooks/NN_topic.ipynb`` and the lessons'
``nbgrader_config.py`` into ``tapeschool/lessons/``, where
``tapeschool.course.layout`` finds them when there is no clone around it; an
editable install reads the clone's ``notebooks/`` instead. The grading sandbox
hides that folder from students' notebooks (it holds the solutions).
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithLessons(build_py):
    def run(self):
        super().run()
        here = Path(__file__).resolve().parent / "notebooks"
        target = Path(self.build_lib) / "tapeschool" / "lessons"
        target.mkdir(parents=True, exist_ok=True)
        for path in sorted(here.glob("[0-9][0-9]_*.ipynb")) + [here / "nbgrader_config.py"]:
            shutil.copy2(path, target / path.name)


setup(cmdclass={"build_py": BuildWithLessons})
