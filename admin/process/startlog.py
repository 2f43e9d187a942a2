"""The start-up messages Hoverfly logs, in its order, with its fields: what clients and people read
in the logs to see how an instance was started (one worker of an instance logs them, once); then,
in the spec dialect, simproxy's own line saying that the instance serves and where."""

from __future__ import annotations

import logging
from typing import Any

from simproxy.admin.settings import Settings

log = logging.getLogger("simproxy.admin.start")

Message = tuple[int, str, dict[str, Any]]


def start_messages(settings: Settings) -> list[Message]:
    """Each message Hoverfly v1.12.10 logs at start-up for these settings: (level, text, fields)."""
    defaults = Settings()
    out: list[Message] = []
    info = logging.INFO
    if settings.dev_cors_origin:
        out.append((logging.WARNING, "Dev mode is enabled", {"allowOrigin": settings.dev_cors_origin}))
    if settings.ca_generated:
        out += [(info, "cert.pem created", {}), (info, "key.pem created.", {})]
    elif settings.cert:
        out.append((info, "Default keys have been overwritten", {"certificate": settings.cert, "key": settings.key}))
    optional: tuple[tuple[bool, str, dict[str, Any]], ...] = (
        (settings.proxy_port != defaults.proxy_port, "Default proxy port has been overwritten",
         {"port": str(settings.proxy_port)}),
        (settings.admin_port != defaults.admin_port, "Default admin port has been overwritten",
         {"port": str(settings.admin_port)}),
        (settings.listen_on_host != defaults.listen_on_host, "Listen on specific interface",
         {"host": settings.listen_on_host}),
        (bool(settings.upstream_proxy), "Upstream proxy has been set", {"url": settings.upstream_proxy}),
        (settings.cors, "CORS has been enabled", {}),
        (settings.no_import_check, "Import check has been disabled", {}),
        (not settings.tls_verification, "TLS certificate verification has been disabled", {}),
    )  # fmt: skip
    out.extend((info, text, fields) for given, text, fields in optional if given)
    out.append((info, "Using boltdb backend" if settings.db_path else "Using memory backend", {}))
    if settings.disable_cache:
        out.append((info, "Request cache has been disabled", {}))
    for action in settings.post_serve_actions:
        where = "Remote" if action.remote else "Local"
        out.append((info, f"{where} post serve action is set", {}))
    port, destination, mode = str(settings.proxy_port), settings.destination, settings.mode
    text, port_field = (
        ("Webserver prepared...", "WebserverPort") if settings.webserver else ("Proxy prepared...", "ProxyPort")
    )
    out.append((info, text, {"Destination": destination, "Mode": mode, port_field: port}))
    out.append((info, "current proxy configuration", {"destination": destination, "mode": mode, "port": port}))
    out.append((info, "serving proxy", {}))
    out.append((info, "Admin interface is starting...", {"AdminPort": str(settings.admin_port)}))
    return out


def announce(settings: Settings) -> None:
    """Log the start-up messages (they reach the console, the log file and ``/api/v2/logs``)."""
    for level, text, fields in start_messages(settings):
        log.log(level, text, extra={"fields": fields})


def _reachable(host: str) -> str:
    """``host`` as a URL names it: a wildcard address is reached on loopback, IPv6 in brackets."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def ready_message(settings: Settings) -> Message:
    """``simproxy is ready``, with where the admin API and its dashboard answer and where the proxy
    (or, with ``-webserver``, the web server) listens."""
    host = _reachable(settings.listen_on_host)
    admin = f"http://{host}:{settings.admin_port}"
    fields: dict[str, Any] = {"admin": admin, "dashboard": f"{admin}/"}
    if settings.webserver:
        fields["webserver"] = f"http://{host}:{settings.proxy_port}"
    else:
        fields["proxy"] = f"{host}:{settings.proxy_port}"
    fields["workers"] = settings.workers
    return logging.INFO, "simproxy is ready", fields


def announce_ready(settings: Settings) -> None:
    """Log ``ready_message`` once the instance serves (every worker ready). Hoverfly has no such
    line: under ``-compat hoverfly`` the logs stay what Hoverfly's are."""
    if settings.dialect.is_hoverfly:
        return
    level, text, fields = ready_message(settings)
    log.log(level, text, extra={"fields": fields})
