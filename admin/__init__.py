"""The control plane: command line, settings, the ``/api/v2`` admin API and server assembly.

The composition root: it may import ``engine`` and ``store``; nothing imports it.
"""
