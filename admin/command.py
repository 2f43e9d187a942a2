"""How simproxy starts another simproxy (the fleet's instances, the test harness's server).

``python -I -m simproxy`` with this interpreter: ``-I`` keeps the current directory and ``PYTHON*``
variables off the path, so a user's own ``simproxy.py`` (or ``admin.py``, ``engine.py``, ...) in the
directory a test runs from can never be what starts.
"""

from __future__ import annotations

import sys

COMMAND: tuple[str, ...] = (sys.executable, "-I", "-m", "simproxy")
