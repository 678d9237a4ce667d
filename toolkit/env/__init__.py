"""env layer."""
