"""A src-layout extension whose metadata lives in pyproject.toml only."""

from pyprojext._gpu import arch_count

__all__ = ["arch_count"]
