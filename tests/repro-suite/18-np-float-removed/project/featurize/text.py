import re


def tokenize(text):
    return re.findall(r"[a-z0-9]+", text.lower())


def ngrams(tokens, n=2):
    return [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]
