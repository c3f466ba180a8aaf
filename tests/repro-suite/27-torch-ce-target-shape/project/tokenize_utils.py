def whitespace_tokens(text):
    return text.lower().split()


def build_vocab(texts, min_count=1):
    counts = {}
    for text in texts:
        for tok in whitespace_tokens(text):
            counts[tok] = counts.get(tok, 0) + 1
    return {tok: i for i, tok in enumerate(sorted(t for t, c in counts.items() if c >= min_count))}
