"""The texts Go's libraries write for failures a client of Hoverfly reads in its 502 bodies and
middleware errors (``exec``, ``dial tcp``, ``x509``), made from the Python exceptions that stand
for the same failures, so that clients and scripts matching on them keep working."""

from __future__ import annotations

import errno
import os
import socket
import ssl
from collections.abc import Sequence
from pathlib import Path

_UNKNOWN_AUTHORITY = frozenset({18, 19, 20, 21})
"""OpenSSL's verify codes for a chain that ends at no trusted CA (self-signed, self-signed in the
chain, unable to get the issuer locally, unable to verify the first certificate)."""
_EXPIRED = frozenset({9, 10})  # not yet valid, expired


def nameserver(resolv_conf: Path = Path("/etc/resolv.conf")) -> str:
    """The first nameserver Go's resolver would ask (``host:53``), or "" when none is configured."""
    try:
        lines = resolv_conf.read_text().splitlines()
    except OSError:
        return ""
    for line in lines:
        fields = line.split()
        if len(fields) >= 2 and fields[0] == "nameserver":
            host = fields[1]
            return f"[{host}]:53" if ":" in host else f"{host}:53"
    return ""


def dial_error(host: str, port: int, error: OSError, server: str) -> str:
    """``dial tcp ...`` as Go's net package words a failed connection to ``host:port``."""
    if isinstance(error, socket.gaierror):
        where = f" on {server}" if server else ""
        if error.errno in (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)):
            return f"dial tcp: lookup {host}{where}: no such host"
        return f"dial tcp: lookup {host}{where}: {str(error.strerror or error).lower()}"
    reason = "connection refused" if error.errno == errno.ECONNREFUSED else _reason(error)
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return f"dial tcp {address}: connect: {reason}"


def tls_problem(error: BaseException) -> str:
    """The ``x509: ...`` text of a certificate Go's client would refuse."""
    if isinstance(error, ssl.SSLCertVerificationError):
        code = error.verify_code
        if code in _UNKNOWN_AUTHORITY:
            return "x509: certificate signed by unknown authority"
        if code in _EXPIRED:
            return "x509: certificate has expired or is not yet valid"
        message = error.verify_message or str(error)
        return f"x509: {message}"
    return str(error)


def exec_error(command: Sequence[str], error: OSError) -> str:
    """What Go's ``exec.Command(...).Start()`` says when a program cannot be started."""
    program = command[0] if command else ""
    if "/" not in program and isinstance(error, FileNotFoundError):
        return f'exec: "{program}": executable file not found in $PATH'
    return f"fork/exec {program}: {_reason(error)}"


def _reason(error: OSError) -> str:
    """The system's words for an error number, lower-case as Go's syscall errors read."""
    return os.strerror(error.errno).lower() if error.errno else str(error)
