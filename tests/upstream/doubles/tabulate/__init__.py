"""TEST DOUBLE tabulate."""


def tabulate(rows, *args, **kwargs):
    return "\n".join(" ".join(str(c) for c in row) for row in rows)
