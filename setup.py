"""Build hook: ship the top-level ``rules/*.md`` documents inside the wheel.

The documents live at the top of the repository (one per rule, reviewed like code);
``jobsafe explain`` and ``jobsafe check --format sarif`` read them from the installed
package, so the build copies them into ``jobsafe/rules_docs``.
"""
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithRuleDocs(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / "jobsafe" / "rules_docs"
        target.mkdir(parents=True, exist_ok=True)
        for doc in sorted(Path(__file__).parent.glob("rules/*.md")):
            self.copy_file(str(doc), str(target / doc.name))


setup(cmdclass={"build_py": BuildWithRuleDocs})
