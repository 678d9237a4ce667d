"""Credentials are masked in every output; insecure indexes are refused."""

from __future__ import annotations

import pytest

from toolkit.core.errors import SourceUnreachable, UsageError
from toolkit.core.urls import check_index_url, mask
from toolkit.run.provisioning import probe_index


@pytest.mark.parametrize("text, shown", [
    ("https://user:pw@h.example/simple/", "https://***@h.example/simple/"),
    ("https://token@h.example/", "https://***@h.example/"),
    ("--index-url http://u:p@127.0.0.1:8/ x", "--index-url http://***@127.0.0.1:8/ x"),
    ("https://h.example/simple/", "https://h.example/simple/"),
    ("https://user:p@ssSECRET@h.example/simple/", "https://***@h.example/simple/"),
    ("'https://a:b@c@d@h.example:8443/x' y", "'https://***@h.example:8443/x' y"),
    ("https://h.example/simple/?u=a@b", "https://h.example/simple/?u=***"),
    ("https://u:pw@h1/ and http://t@h2/", "https://***@h1/ and http://***@h2/"),
    ('{"url": "https://u:p%40ss@h/"}', '{"url": "https://***@h/"}'),
])
def test_mask(text: str, shown: str) -> None:
    assert mask(text) == shown


def test_check_index_url() -> None:
    assert check_index_url("https://h/") == "https://h/"
    assert check_index_url("http://127.0.0.1:9/") == "http://127.0.0.1:9/"
    with pytest.raises(UsageError) as err:
        check_index_url("http://u:secret@mirror.example/")
    assert "secret" not in str(err.value) and "--allow-insecure-index" in str(err.value)
    assert check_index_url("http://mirror.example/", allow_insecure=True)


def test_unreachable_index_fails_fast_and_masked() -> None:
    with pytest.raises(SourceUnreachable) as err:  # exit 8: not this machine's tools
        probe_index("http://user:secret@127.0.0.1:9/simple/", "rocm", "ROCm SDK index", timeout=3)
    msg = str(err.value)
    assert "secret" not in msg and "http://***@127.0.0.1:9/simple/" in msg
    assert "\n" not in msg


def test_missing_file_index(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SourceUnreachable, match="does not exist"):
        probe_index((tmp_path / "nope").as_uri(), "rocm", "ROCm SDK index")
    (tmp_path / "idx").mkdir()
    with pytest.raises(SourceUnreachable, match="has no 'rocm' project"):
        probe_index((tmp_path / "idx").as_uri(), "rocm", "ROCm SDK index")
