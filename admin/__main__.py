"""``python -m admin``: the same as the ``simproxy`` console command.

The exit status is whatever ``admin.cli.main`` returns.
"""

from admin.cli import main

raise SystemExit(main())
