"""TEST DOUBLE torch.utils.hipify."""

from torch.utils.hipify import hipify_python  # noqa: F401
