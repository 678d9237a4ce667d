"""Rules of the inspect layer: facts from the readers to findings (check, severity, message)."""
