"""External tools a test needs, and the skip when one is missing: the reason names the tool and
the package, in the form tests/conftest.py's CI check reads ("... not installed ..."). A test
asks for the tool where it uses it, so a missing tool skips only the tests that run it."""
from __future__ import annotations

import shutil
import subprocess

import pytest

PACKAGES = {"pdftotext": "poppler-utils", "pdfinfo": "poppler-utils", "pdftohtml": "poppler-utils",
            "pdftoppm": "poppler-utils", "java": "default-jre-headless", "g++": "g++", "dot": "graphviz"}


def tool(name: str) -> str:
    """The path of ``name``, or a skip of the calling test naming what to install."""
    found = shutil.which(name)
    if not found:
        pytest.skip(f"{name} not installed (apt-get install -y {PACKAGES.get(name, name)})")
    return found


def poppler(*args: str) -> subprocess.CompletedProcess:
    """Run a poppler-utils command (pdftotext, pdfinfo, pdftohtml), skipping the test without it."""
    tool(args[0])
    return subprocess.run(list(args), capture_output=True, text=True, check=True)
