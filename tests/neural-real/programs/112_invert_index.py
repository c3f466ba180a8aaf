docs = {
    1: "red apple",
    2: "green apple",
    3: "red car",
}

index = {}
for doc_id, text in docs.items():
    for word in text.split():
        index.setdefault(word, []).append(doc_id)

both = set(index["red"]) & set(index["apple"])
counts = {word: len(ids) for word, ids in index.items() if len(ids) > 1}
print(sorted(both), counts)
