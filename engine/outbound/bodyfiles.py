"""Body files named by URL (``bodyFile: https://...``) and simulations given to ``-import`` by URL,
downloaded through the one outgoing HTTP client. Any HTTP status is accepted, as in Hoverfly. For
body files a redirect is followed only to a URL the flags allow too, so an allowed server cannot
send the download somewhere else (an internal address, say). The import itself
(engine/simulation/importing.py) stays pure: it gets the results.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from urllib.parse import urljoin

from simproxy.engine.errors import UpstreamError
from simproxy.engine.outbound.upstream import Upstream, UpstreamOptions
from simproxy.engine.simulation.importing import origin_allowed

DOWNLOAD_TIMEOUT = 10.0
MAX_REDIRECTS = 10
"""Go's http.Client gives up after 10 redirects."""
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


async def download_body_files(
    urls: Iterable[str], allowed_origins: tuple[str, ...], *, tls_verify: bool = True
) -> dict[str, bytes | str]:
    """Every URL's content, or the reason it could not be downloaded."""
    ordered = sorted(set(urls))
    if not ordered:
        return {}
    upstream = Upstream(UpstreamOptions(tls_verify=tls_verify, timeout=DOWNLOAD_TIMEOUT))
    try:
        results = await asyncio.gather(*(_download(upstream, url, allowed_origins) for url in ordered))
    finally:
        await upstream.aclose()
    return dict(zip(ordered, results, strict=True))


async def download(url: str, *, tls_verify: bool = True) -> bytes:
    """One URL's content, redirects followed anywhere, as Go's default client does (Hoverfly's
    ``-import URL``); ``UpstreamError`` with Go's words when it cannot be had."""
    upstream = Upstream(UpstreamOptions(tls_verify=tls_verify, timeout=DOWNLOAD_TIMEOUT))
    try:
        result = await _download(upstream, url, None)
    finally:
        await upstream.aclose()
    if isinstance(result, str):
        raise UpstreamError(result)
    return result


async def _download(upstream: Upstream, url: str, allowed_origins: tuple[str, ...] | None) -> bytes | str:
    """The content, or why not; ``allowed_origins`` None: a redirect may go anywhere."""
    target = url
    for _ in range(MAX_REDIRECTS + 1):
        try:
            resp = await upstream.send("GET", target, [], b"", proxy="")  # never through -upstream-proxy
        except UpstreamError as exc:
            return str(exc)
        location = dict(resp.headers).get("Location", ()) if resp.status in _REDIRECTS else ()
        if not location:
            return resp.body
        target = urljoin(target, location[0])
        if allowed_origins is not None and not origin_allowed(target, allowed_origins):
            return f"redirected to {target}, which is not an allowed origin"
    return f"stopped after {MAX_REDIRECTS} redirects"
