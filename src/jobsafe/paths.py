"""Path conventions shared by the assembly step and the rules."""
from __future__ import annotations


def is_test_path(rel: str) -> bool:
    """Test code (``tests/``, ``test_*.py``, ``tests.py``, ``conftest.py``): it declares
    schedules and takes locks to exercise them, not to run jobs."""
    parts = rel.split("/")
    name = parts[-1]
    return any(p in ("test", "tests", "testing") for p in parts[:-1]) or \
        name.startswith("test_") or name.endswith("_test.py") or \
        name in ("conftest.py", "tests.py", "test.py")


def relative_to_root(path: str, root: str) -> str:
    """A display path (relative to the working directory) made relative to the analysis root."""
    if root in ("", "."):
        return path
    prefix = root.rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else path
