"""Admin-layer errors: each carries the HTTP status it is answered with.

Handlers raise these; one error handler in admin/api.py renders them as ``{"error": "..."}``
with ``Content-Type: application/json``. Engine and store errors are mapped in that handler.
"""

from __future__ import annotations

from typing import ClassVar

from simproxy.store.errors import SimproxyError


class ApiError(SimproxyError):
    """An error answered to an admin client with ``status`` and ``{"error": message}``."""

    status: ClassVar[int] = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


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


class ServiceUnavailable(ApiError):
    status = 503
