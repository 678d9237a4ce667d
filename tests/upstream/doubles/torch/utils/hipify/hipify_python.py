"""TEST DOUBLE hipify_python: records the call, converts nothing."""


def hipify(**kwargs):
    from _record import record

    record("hipify", project_directory=kwargs.get("project_directory"))
    return {}
