pets = [("dog", "rex"), ("cat", "tom"), ("dog", "fido"), ("bird", "tweety")]
by_kind = {}
for kind, name in pets:
    if kind not in by_kind:
        by_kind[kind] = []
    by_kind[kind].append(name)
sizes = {k: len(v) for k, v in by_kind.items()}
print(by_kind, sizes)
