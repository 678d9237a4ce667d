"""An index URL with a user name and no password authenticates as that user with an empty
password: RFC 7617 section 2 builds the Basic credentials as user-id ":" password, so the
value is base64 of "user:" (computed here by hand with the base64 module)."""

from __future__ import annotations

import base64

from toolkit.core.urls import credentials


def test_a_user_without_password_sends_an_empty_password() -> None:
    url, auth = credentials("https://alice@index.example/simple/")
    assert url == "https://index.example/simple/"
    assert auth == "Basic " + base64.b64encode(b"alice:").decode()
    assert base64.b64decode(auth.removeprefix("Basic ")) == b"alice:"


def test_a_password_without_user_sends_an_empty_user() -> None:
    _, auth = credentials("https://:s3cret@index.example/simple/")
    assert auth is not None and base64.b64decode(auth.removeprefix("Basic ")) == b":s3cret"
