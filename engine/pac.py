"""PAC files (``PUT .../pac``, ``-pac-file``): which proxy a forwarded request goes through.

Hoverfly's rule (hoverfly-admin.md §7.10): ask ``FindProxyForURL`` for the request; the first entry
decides: ``DIRECT`` connects directly, ``PROXY host:port`` goes through that proxy. A PAC file that
does not parse or run fails the request with ``Unable to parse PAC file``. pypac runs the script
(on duktape, with the standard PAC helpers); each PAC text is compiled once, answers are kept per
URL (a script may look at the path).
"""

from __future__ import annotations

from collections import OrderedDict

from pypac.parser import MalformedPacError, PacComplexityError, PACFile, PyimportError

from engine.errors import EngineError

ANSWERS = 1000


class PacError(EngineError):
    """The PAC file could not be used; the text is what the 502 reports."""


class PacResolver:
    """One worker's compiled PAC file and its recent answers."""

    def __init__(self) -> None:
        self._text = ""
        self._pac: PACFile | None = None
        self._answers: OrderedDict[str, str] = OrderedDict()

    def proxy_for(self, pac: str, url: str, host: str) -> str:
        """The proxy URL for ``url`` (``http://h:p``), or "" to connect directly."""
        if pac != self._text:
            self._text, self._pac = pac, None
            self._answers.clear()
            try:
                self._pac = PACFile(pac)
            except (MalformedPacError, PacComplexityError, PyimportError) as exc:
                raise PacError(f"Unable to parse PAC file\n\n{exc}") from exc
        if self._pac is None:
            raise PacError("Unable to parse PAC file")
        answer = self._answers.get(url)
        if answer is None:
            try:
                result = str(self._pac.find_proxy_for_url(url, host))
            except Exception as exc:  # the script itself failed (a JavaScript error)
                raise PacError(f"Unable to parse PAC file\n\n{exc}") from exc
            answer = self._answers[url] = _first_proxy(result)
            while len(self._answers) > ANSWERS:
                self._answers.popitem(last=False)
        return answer


def _first_proxy(result: str) -> str:
    """``PROXY a:1; DIRECT`` -> ``http://a:1``; ``DIRECT`` (or anything else first) -> ""."""
    first = result.split(";")[0].split()
    if len(first) == 2 and first[0].upper() in ("PROXY", "HTTP"):
        return f"http://{first[1]}"
    if len(first) == 2 and first[0].upper() == "HTTPS":
        return f"https://{first[1]}"
    return ""
