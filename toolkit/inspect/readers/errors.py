"""The inspect layer's own error: a file that is not a well-formed ELF object.

It lives apart from both readers so that :mod:`toolkit.inspect.readers.elf` can hand fatbin sections
to :mod:`toolkit.inspect.readers.offload` while the offload reader raises the same error type
(``OffloadError`` derives from it) without importing the ELF reader back.
"""

from __future__ import annotations

from toolkit.core.errors import UsageError


class ElfError(UsageError):
    """A file is not a well-formed ELF object (or not one we can read)."""
