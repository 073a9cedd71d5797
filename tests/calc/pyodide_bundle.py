"""List the files Pyodide needs to run tests/calc: pytest and Hypothesis, pure Python.

Printed as JSON ``[[absolute_path, path_inside_site_packages], ...]`` for
``pyodide_runner.mjs``. The files are taken from this interpreter's own
installation (the same versions CPython runs), so the Pyodide run needs no
network and tests the same pytest and Hypothesis. Run: ``python pyodide_bundle.py``.
"""

import importlib.metadata as metadata
import json
import sys

DISTRIBUTIONS = ["pytest", "pluggy", "iniconfig", "packaging", "pygments", "hypothesis", "sortedcontainers"]


def files() -> list:
    out = []
    for name in DISTRIBUTIONS:
        dist = metadata.distribution(name)
        for f in dist.files or []:
            rel = str(f).replace("\\", "/")
            if rel.startswith("..") or "__pycache__" in rel or rel.endswith((".pyc", ".so", ".pyd")):
                continue
            path = dist.locate_file(f)
            if path.is_file():
                out.append([str(path), rel])
    return out


if __name__ == "__main__":
    json.dump(files(), sys.stdout)
