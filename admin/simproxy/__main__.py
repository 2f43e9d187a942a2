"""``python -m simproxy``: the same as the ``simproxy`` console command.

The exit status is whatever ``simproxy.admin.process.cli.main`` returns.
"""

from simproxy.admin.process.cli import main

raise SystemExit(main())
