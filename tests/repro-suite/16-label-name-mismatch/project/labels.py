def encode(names):
    """Integer labels in order of first appearance."""
    index = {}
    for name in names:
        index.setdefault(name, len(index))
    return [index[name] for name in names]


def class_names(names):
    """The name of every integer label."""
    return sorted(set(names))
