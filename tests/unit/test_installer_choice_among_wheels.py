"""The choice a variant-aware installer makes among a folder's wheels, in the parts that need no
provider: the Python a wheel fits (PEP 425 tags: cpXY wheels for that CPython only, abi3
wheels for that CPython and later, py3-none-any for all), the highest version first
(PEP 440 order, "1.10" after "1.9"), then the first label of the providers' order, the wheel
without a label standing for variantlib's ``null``."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.core.errors import UsageError
from toolkit.core.variants import VariantName, parse_name
from toolkit.verify import variant_pick as vp


def _name(file: str) -> VariantName:
    name = parse_name(file)
    assert name is not None
    return name


@pytest.mark.parametrize(("text", "python"), [("3.12", (3, 12)), ("3.9", (3, 9)), ("3.10", (3, 10))])
def test_a_python_version_is_3_dot_minor(text: str, python: tuple[int, int]) -> None:
    assert vp._python(text) == python


@pytest.mark.parametrize("text", ["3", "3.12.1", "2.7", "3.", "three", "3.123"])
def test_other_python_spellings_are_refused_in_one_line(text: str) -> None:
    with pytest.raises(UsageError) as err:
        vp._python(text)
    assert "--python" in err.value.message and "3.12" in err.value.message


@pytest.mark.parametrize(("file", "python", "fits"), [
    ("p-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", (3, 12), True),
    ("p-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", (3, 11), False),
    ("p-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", (3, 13), False),
    ("p-1.0-cp39-abi3-manylinux_2_28_x86_64.whl", (3, 12), True),
    ("p-1.0-cp39-abi3-manylinux_2_28_x86_64.whl", (3, 8), False),
    ("p-1.0-py3-none-any.whl", (3, 10), True),
    ("p-1.0-cp312-cp312-manylinux_2_28_x86_64-gfx942.whl", (3, 12), True),
])
def test_a_wheel_fits_the_pythons_its_tags_name(file: str, python: tuple[int, int], fits: bool) -> None:
    assert vp._fits(_name(file), python) is fits


def test_the_highest_version_first_then_the_providers_order() -> None:
    fat_9 = _name("p-1.9-cp312-cp312-manylinux_2_28_x86_64.whl")
    fat_10 = _name("p-1.10-cp312-cp312-manylinux_2_28_x86_64.whl")
    v942 = _name("p-1.10-cp312-cp312-manylinux_2_28_x86_64-gfx942.whl")
    v90a = _name("p-1.10-cp312-cp312-manylinux_2_28_x86_64-gfx90a.whl")
    old942 = _name("p-1.9-cp312-cp312-manylinux_2_28_x86_64-gfx942.whl")
    cands = [fat_9, old942, fat_10, v942, v90a]
    assert vp._choose(cands, ("gfx90a", "gfx942", "null")) == v90a
    assert vp._choose(cands, ("gfx942", "gfx90a", "null")) == v942
    assert vp._choose(cands, ("gfx1100", "null")) == fat_10  # no variant fits: the fat wheel
    assert vp._choose([fat_9, v942], ("gfx942", "null")) == v942  # 1.10 beats 1.9
    assert vp._choose([v942], ("gfx90a", "null")) is None
    assert vp._choose([old942, fat_9], ("null", "gfx942")) == fat_9  # the order decides
    assert vp._choose([], ("null",)) is None


def test_only_wheels_of_a_valid_version_that_fit_are_candidates(tmp_path: Path) -> None:
    for file in ("p-1.0-cp312-cp312-manylinux_2_28_x86_64.whl",
                 "p-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", "p-1.0-py3-none-any-gfx942.whl",
                 "not-a-wheel.txt", "p-1.0-cp312-cp312-linux_x86_64.whl.part"):
        (tmp_path / file).write_bytes(b"")
    found = [c.base for c in vp._candidates(tmp_path, (3, 12))]
    assert found == ["p-1.0-cp312-cp312-manylinux_2_28_x86_64", "p-1.0-py3-none-any"]


def test_a_missing_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as err:
        vp.pick(tmp_path / "nope", "gfx942", "3.12")
    assert "nope" in err.value.message and "no such folder" in err.value.message


def test_without_variants_the_newest_fitting_wheel_is_picked(tmp_path: Path) -> None:
    from toolkit.core.errors import CheckFailed

    for file in ("p-1.9-cp312-cp312-manylinux_2_28_x86_64.whl",
                 "p-1.10-cp312-cp312-manylinux_2_28_x86_64.whl",
                 "p-2.0-cp311-cp311-manylinux_2_28_x86_64.whl"):
        (tmp_path / file).write_bytes(b"")
    picked = vp.pick(tmp_path, "gfx90a:xnack-", "3.12")  # a device reports its processor
    assert picked == vp.Pick("p-1.10-cp312-cp312-manylinux_2_28_x86_64.whl", None, ("null",), "gfx90a")
    assert vp.pick(tmp_path, None, "3.12").gpu == "detected"
    with pytest.raises(CheckFailed) as err:
        vp.pick(tmp_path, "gfx942", "3.13")
    message = err.value.message
    assert err.value.exit_code == 1
    assert str(tmp_path) in message and "GPU gfx942" in message and "Python 3.13" in message
    assert message.endswith("(variants supported, best first: null)")
    with pytest.raises(UsageError):
        vp.pick(tmp_path, "gfx90a", "3")
    with pytest.raises(UsageError):
        vp.pick(tmp_path, "nvidia", "3.12")
