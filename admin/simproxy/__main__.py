"""``python -m simproxy``: the same as the ``simproxy`` console command.

The exit status is whatever ``simproxy.admin.cli.main`` returns.
"""

from simproxy.admin.cli import main

raise SystemExit(main())
