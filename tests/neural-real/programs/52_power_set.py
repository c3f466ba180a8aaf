def subsets(items):
    if not items:
        return [[]]
    rest = subsets(items[1:])
    with_first = [[items[0]] + s for s in rest]
    return rest + with_first


all_sets = subsets(["a", "b", "c"])
sizes = [len(s) for s in all_sets]
print(len(all_sets), sizes)
