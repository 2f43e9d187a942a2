"""The admin port's authentication pieces that need no running server."""

from __future__ import annotations

import jwt

from simproxy.admin.api.auth import DUMMY_TOKEN

DUMMY_CLAIMS = {"sub": "1234567890", "name": "Dummy token", "admin": True}
DUMMY_KEY = "simproxy: a token nothing checks"


def test_the_dummy_token_is_the_hs256_token_of_its_claims() -> None:
    """Written out so that a start without -auth does not import jwt: it must stay the token jwt makes."""
    assert jwt.decode(DUMMY_TOKEN, DUMMY_KEY, algorithms=["HS256"]) == DUMMY_CLAIMS
    assert jwt.encode(DUMMY_CLAIMS, DUMMY_KEY, algorithm="HS256") == DUMMY_TOKEN
