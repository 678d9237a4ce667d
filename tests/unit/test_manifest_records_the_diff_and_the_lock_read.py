"""What a manifest records of a build's inputs: the lock file an SDK install read (its path as
the plan's ``-r`` names it and its sha256, computed here with hashlib) and, for a build of
uncommitted changes, the diff's sha256 under ``source.diff``, the name the manifest schema
declares (``source`` allows no other keys)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import jsonschema

from toolkit.run.manifest import dirty_fields, sdk_facts
from toolkit.run.manifest_schema import SCHEMA


def test_the_lock_an_install_read_is_recorded_by_path_and_sha256(tmp_path: Path) -> None:
    lock = tmp_path / "rocm.lock"
    lock.write_text("rocm==7.0.0 --hash=sha256:00\n", encoding="utf-8")
    plan = {"steps": [{"name": "install-rocm-sdk",
                       "argv": ["uv", "pip", "install", "-r", str(lock),
                                "--index-url", "https://index.example/simple"]}]}
    got = sdk_facts(plan, {"ROCM_SDK_VERSION": "7.0.0", "ROCM_ROOT": "/r"})
    assert got["lock"] == {"path": str(lock),
                           "sha256": hashlib.sha256(lock.read_bytes()).hexdigest()}
    assert got["index_urls"] == ["https://index.example/simple"]
    assert (got["provider"], got["version"], got["root"]) == ("pip", "7.0.0", "/r")


def test_no_lock_read_records_none() -> None:
    plan = {"steps": [{"name": "install-torch", "argv": ["uv", "pip", "install", "torch"]}]}
    assert sdk_facts(plan, {})["lock"] is None


def test_a_dirty_build_records_its_diff_where_the_schema_says() -> None:
    digest = hashlib.sha256(b"a diff").hexdigest()
    source = {"repo": "r", "ref": "main", "path": None, "sha": "0" * 40, "tree": None,
              **dirty_fields({"DIFF": digest})}
    jsonschema.validate(source, SCHEMA["properties"]["source"])
    assert source["diff"] == digest
    assert dirty_fields({}) == {} and dirty_fields({"DIFF": ""}) == {}


def test_the_indexes_recorded_are_those_the_sdk_and_torch_installs_read() -> None:
    """The manifest's SDK record names the indexes the two installs read, each once, in
    plan order; another step's index (a build requirement's) is not where the SDK came from."""
    plan = {"steps": [
        {"name": "install-rocm-sdk", "argv": ["uv", "pip", "install", "rocm[libraries,devel]",
                                              "--index-url", "https://sdk.example/v2/gfx94X/"]},
        {"name": "install-torch", "argv": ["uv", "pip", "install", "torch",
                                           "--index-url", "https://torch.example/simple",
                                           "--extra-index-url", "https://sdk.example/v2/gfx94X/",
                                           "--find-links", "/wheels"]},
        {"name": "install-build-requirements", "argv": ["uv", "pip", "install", "ninja",
                                                        "--index-url", "https://other.example/"]},
    ]}
    assert sdk_facts(plan, {})["index_urls"] == [
        "https://sdk.example/v2/gfx94X/", "https://torch.example/simple", "/wheels"]
    assert sdk_facts(plan, {})["provider"] == "pip"
    system = {"steps": [{"name": "install-rocm-sdk", "argv": ["toolkit", "system-rocm", "/opt/rocm"]},
                        *plan["steps"][1:]]}
    assert sdk_facts(system, {})["provider"] == "system"
