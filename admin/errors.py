"""Admin-layer errors: each carries the HTTP status it is answered with.

Handlers raise these; one error handler in admin/api/app.py renders them as ``{"error": "..."}``
with ``Content-Type: application/json``. Engine and store errors are mapped in that handler.
"""

from __future__ import annotations

from typing import ClassVar

from simproxy.engine.gocompat.dialect import Dialect
from simproxy.store.errors import SimproxyError


class ApiError(SimproxyError):
    """An error answered to an admin client with ``status`` and ``{"error": message}``.

    ``message`` is Hoverfly's text; ``detailed``, when given, is what the spec dialect answers
    instead (where and why, e.g. the line and column of a JSON syntax error). ``str()`` of the
    error is the detailed text.
    """

    status: ClassVar[int] = 500

    def __init__(self, message: str, *, detailed: str = "") -> None:
        super().__init__(detailed or message)
        self.message = message
        self.detailed = detailed or message

    def text(self, dialect: Dialect) -> str:
        """The error text ``dialect`` answers: Hoverfly's words under ``-compat hoverfly``."""
        return self.message if dialect.is_hoverfly else self.detailed


class BadRequest(ApiError):
    status = 400


class NotFound(ApiError):
    status = 404


class Unprocessable(ApiError):
    status = 422


class PayloadTooLarge(ApiError):
    status = 413


class ServerError(ApiError):
    status = 500
