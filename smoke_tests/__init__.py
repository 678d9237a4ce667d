"""The smoke suite, run inside a build's environment (shipped as toolkit.smoke_suite)."""
