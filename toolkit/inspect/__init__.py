"""inspect layer."""
