"""A checkout's submodules as git reads them: path -> (name, url), the name being what
gitmodules(5) puts between `submodule.` and the key (`[submodule "third_party/cutlass"]`).
The file is read by the real git; the expectation is written by hand."""

from __future__ import annotations

from pathlib import Path

from toolkit.run.sources import gitmodules


def test_submodules_by_path_with_their_names_and_urls(tmp_path: Path) -> None:
    (tmp_path / ".gitmodules").write_text(
        '[submodule "third_party/cutlass"]\n'
        "\tpath = third_party/cutlass\n"
        "\turl = https://github.com/NVIDIA/cutlass.git\n"
        '[submodule "hipify"]\n'
        "\tpath = tools/hipify\n"
        "\turl = ../hipify.git\n", encoding="utf-8")
    assert gitmodules(tmp_path) == {
        "third_party/cutlass": ("third_party/cutlass", "https://github.com/NVIDIA/cutlass.git"),
        "tools/hipify": ("hipify", "../hipify.git")}


def test_no_gitmodules_file_is_no_submodules(tmp_path: Path) -> None:
    assert gitmodules(tmp_path) == {}
