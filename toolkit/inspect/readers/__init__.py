"""Readers of the inspect layer: wheel archives, ELF files and GPU code objects to facts.

They judge nothing: findings and verdicts are in ``toolkit.inspect.rules`` and above.
"""
