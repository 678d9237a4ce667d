"""apex-shaped fixture package."""
