"""run layer."""
