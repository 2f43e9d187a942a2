"""JSON Web Tokens as Hoverfly's ``jwt`` matchers and template helper read them: the header and payload
segments decoded the way Go's ``base64.RawURLEncoding`` and ``encoding/json`` decode them, unverified.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from simproxy.engine.gocompat.gojson import InvalidJSON, decode_float

_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")


def _segment(part: str) -> tuple[bool, Any]:
    """A base64url (unpadded) JSON segment, as Go's RawURLEncoding and json.Unmarshal read it."""
    part = part.replace("\r", "").replace("\n", "")
    if len(part) % 4 == 1 or not _BASE64URL.fullmatch(part):
        return False, None
    try:
        raw = base64.b64decode(part + "=" * (-len(part) % 4), altchars=b"-_", validate=True)
        return True, decode_float(raw.decode("utf-8", "replace"))
    except (binascii.Error, InvalidJSON):
        return False, None


def token_parts(token: str) -> dict[str, Any] | None:
    """``{"header": ..., "payload": ...}`` of a three-part token; a part that fails to decode is left out."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    composite = {}
    for key, part in (("header", parts[0]), ("payload", parts[1])):
        ok, decoded = _segment(part)
        if ok:
            composite[key] = decoded
    return composite
