"""`upstream`: derive facts from the upstream repositories and show the drift of the data.

``rules.RULES`` lists the rules in order (later rules may read what earlier ones derived,
e.g. the apex rule reads upstream PyTorch's pairs); ``rules.run`` opens the repositories and
applies them; ``write.apply`` settles what can be settled (``--write``).
"""
