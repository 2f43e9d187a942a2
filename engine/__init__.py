"""The data plane: simulation model, matching, responses, the proxy port and the per-worker runtime.

Imports ``store`` only; never ``admin`` (and never Sanic: the proxy port is its own httptools server).
"""
