"""``pick`` chooses for a GPU and a Python version, not for this machine: a wheel fits when
its tags name that Python (packaging's ``cpython_tags``/``compatible_tags`` for the wheel's
own platforms), whatever platform it was built for. Wheel file names per the wheel spec."""

from __future__ import annotations

import pytest

from toolkit.core.variants import parse_name
from toolkit.verify import variant_pick as vp


@pytest.mark.parametrize(("file", "python", "fits"), [
    ("p-1.0-cp312-cp312-manylinux_2_28_aarch64.whl", (3, 12), True),
    ("p-1.0-cp312-cp312-win_amd64.whl", (3, 12), True),
    ("p-1.0-cp311-abi3-macosx_11_0_arm64.whl", (3, 13), True),
    ("p-1.0-cp312-cp312-win_amd64.whl", (3, 11), False),
])
def test_a_wheel_of_another_platform_fits_the_python_its_tags_name(
        file: str, python: tuple[int, int], fits: bool) -> None:
    name = parse_name(file)
    assert name is not None
    assert vp._fits(name, python) is fits
