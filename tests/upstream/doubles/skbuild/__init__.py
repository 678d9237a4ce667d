"""TEST DOUBLE scikit-build: setup() records its keyword arguments and stops."""


def setup(**kwargs):
    from _record import record_setup

    record_setup(kwargs)
