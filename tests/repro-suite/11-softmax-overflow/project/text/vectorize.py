import numpy as np


def bag_of_words(docs, vocab):
    index = {word: i for i, word in enumerate(vocab)}
    X = np.zeros((len(docs), len(vocab)))
    for row, doc in enumerate(docs):
        for word in doc.lower().split():
            if word in index:
                X[row, index[word]] += 1
    return X
