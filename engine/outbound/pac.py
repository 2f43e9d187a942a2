"""PAC files (``PUT .../pac``, ``-pac-file``): which proxy a forwarded request goes through.

Hoverfly's rule (hoverfly-admin.md §7.10): ask ``FindProxyForURL`` for the request; the first entry
decides: ``DIRECT`` connects directly, ``PROXY host:port`` goes through that proxy. A PAC file that
does not parse or run fails the request with ``Unable to parse PAC file`` and the error as the
JavaScript engine that runs it (duktape) words it, with the line and column. Under ``-compat
hoverfly``, as Hoverfly's engine (otto) words it: a syntax error is found by
``engine.gocompat.ottosyntax`` (once per PAC text, off the event loop; loaded only then), an error at
run time is reworded. The script runs in a
child process of the worker (engine/outbound/pac_child.py, pypac on duktape with the standard PAC helpers):
one that loops or waits on DNS for more than ``PAC_TIMEOUT`` seconds is killed and the request
fails, while the worker goes on serving. Answers are kept per URL (a script may look at the path).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
from collections import OrderedDict

from simproxy.engine.errors import EngineError

ANSWERS = 1000
PAC_TIMEOUT = 5.0


_UNDEFINED = re.compile(r"ReferenceError: (\S+) is not defined")


def otto_text(error: str) -> str:
    """A script error as Hoverfly's JavaScript engine (otto) words it: its first line, without the
    stack, and an undefined name quoted (``ReferenceError: 'X' is not defined``)."""
    match = _UNDEFINED.search(error)  # pypac wraps it: "Malformed PAC file (ReferenceError: ..."
    if match:
        return f"ReferenceError: '{match[1]}' is not defined"
    return error.strip().splitlines()[0] if error.strip() else error


_PYPAC_WRAP = "Malformed PAC file ("
_WHERE = re.compile(r"at (?:\S+ \()?<dukpy>:(\d+):(\d+)")


def engine_text(error: str) -> str:
    """A script error as duktape words it (``SyntaxError: unexpected token in expression: '&'``), with
    where it was found (`` (line 2, column 9)``), without pypac's wrapping or the stack."""
    text = error.strip()
    if text.startswith(_PYPAC_WRAP) and text.endswith(")"):
        text = text[len(_PYPAC_WRAP) : -1].strip()
    first = text.splitlines()[0] if text else error
    where = _WHERE.search(text)
    return f"{first} (line {where[1]}, column {where[2]})" if where else first


class PacError(EngineError):
    """The PAC file could not be used; the text is what the 502 reports."""


class PacResolver:
    """One worker's PAC child process and its recent answers."""

    def __init__(self, timeout: float = PAC_TIMEOUT, *, otto: bool = False) -> None:
        self.timeout = timeout
        self.otto = otto
        """Word errors as Hoverfly's otto does (``-compat hoverfly``), else as duktape does."""
        self._text = ""
        self._syntax: str | None = None
        """otto's syntax error for ``_text`` (None: it parses)."""
        self._answers: OrderedDict[str, str] = OrderedDict()
        self._child: asyncio.subprocess.Process | None = None
        self._child_text: str | None = None
        """The PAC text the child has compiled (None: a new child that has none)."""
        self._lock = asyncio.Lock()
        self._checking = asyncio.Lock()

    async def proxy_for(self, pac: str, url: str, host: str) -> str:
        """The proxy URL for ``url`` (``http://h:p``), or "" to connect directly."""
        if pac != self._text:
            async with self._checking:  # one check per new text; the others wait for its verdict
                if pac != self._text:
                    syntax = None
                    if self.otto:  # otto finds syntax errors duktape does not, and words them its way
                        from simproxy.engine.gocompat.ottosyntax import syntax_error  # ~10 ms of import

                        syntax = await asyncio.to_thread(syntax_error, pac)
                    self._text, self._syntax = pac, syntax
                    self._answers.clear()
        if self._syntax is not None:
            raise PacError(f"Unable to parse PAC file\n\n{self._syntax}")
        answer = self._answers.get(url)
        if answer is None:
            async with self._lock:  # one question at a time: the child answers in order
                result = await self._ask(pac, url, host)
            answer = self._answers[url] = _first_proxy(result)
            while len(self._answers) > ANSWERS:
                self._answers.popitem(last=False)
        return answer

    async def _ask(self, pac: str, url: str, host: str) -> str:
        child = await self._running_child()
        assert child.stdin is not None and child.stdout is not None
        question = {"pac": pac if pac != self._child_text else None, "url": url, "host": host}
        try:
            child.stdin.write(json.dumps(question).encode() + b"\n")
            await child.stdin.drain()
            line = await asyncio.wait_for(child.stdout.readline(), self.timeout)
        except TimeoutError:
            await self._stop_child()
            raise PacError(f"Unable to parse PAC file\n\nthe script ran for more than {self.timeout:g} s") from None
        except (OSError, ConnectionError) as exc:
            await self._stop_child()
            raise PacError(f"Unable to parse PAC file\n\n{exc}") from exc
        if not line:
            await self._stop_child()
            raise PacError("Unable to parse PAC file\n\nthe PAC process ended")
        reply = json.loads(line)
        if "error" in reply:
            self._child_text = None  # a script that did not compile is sent again with the next question
            error = str(reply["error"])
            raise PacError(f"Unable to parse PAC file\n\n{otto_text(error) if self.otto else engine_text(error)}")
        self._child_text = pac
        return str(reply.get("answer", ""))

    async def _running_child(self) -> asyncio.subprocess.Process:
        if self._child is None or self._child.returncode is not None:
            self._child = await asyncio.create_subprocess_exec(
                sys.executable,
                "-I",
                "-m",
                "simproxy.engine.outbound.pac_child",
                str(os.getpid()),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
            self._child_text = None
        return self._child

    async def _stop_child(self) -> None:
        child, self._child, self._child_text = self._child, None, None
        if child is not None and child.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            await child.wait()

    async def aclose(self) -> None:
        await self._stop_child()


def _first_proxy(result: str) -> str:
    """``PROXY a:1; DIRECT`` -> ``http://a:1``; ``DIRECT`` (or anything else first) -> ""."""
    first = result.split(";")[0].split()
    if len(first) == 2 and first[0].upper() in ("PROXY", "HTTP"):
        return f"http://{first[1]}"
    if len(first) == 2 and first[0].upper() == "HTTPS":
        return f"https://{first[1]}"
    return ""
