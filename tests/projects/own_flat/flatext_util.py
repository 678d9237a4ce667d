"""A top-level module beside the package (the wheel installs both)."""


def compiled_targets() -> list[str]:
    import flatext

    return flatext.targets().split(";")
