"""TEST DOUBLE torch.utils."""

from torch.utils import cpp_extension, hipify  # noqa: F401
