"""The testing kit: the client, the pytest plugin, the harness and cassettes.

It talks to a simproxy over HTTP and starts one as a command; it imports nothing of the server
(tests/test_layering.py checks), so a test suite that only drives simproxy loads none of it.
"""
