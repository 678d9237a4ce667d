"""Build, check and smoke-test ROCm PyTorch-extension wheels across Python x ROCm."""

__version__ = "0.1.0"
