"""Make the repository root importable and keep Hypothesis fast and deterministic.

The same settings apply in CPython and in Pyodide (see pyodide_runner.mjs), so
both runs collect and execute the same tests.
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "calc",
    max_examples=60,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("calc")
