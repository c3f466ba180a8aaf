def confusion(y_true, y_pred, positive):
    counts = {"tp": 0, "fp": 0, "fn": 0}
    for t, p in zip(y_true, y_pred):
        if p == positive and t == positive:
            counts["tp"] += 1
        elif p == positive:
            counts["fp"] += 1
        elif t == positive:
            counts["fn"] += 1
    return counts


def f1(c):
    precision = c["tp"] / (c["tp"] + c["fp"])
    recall = c["tp"] / (c["tp"] + c["fn"])
    return round(2 * precision * recall / (precision + recall), 3)


labels = ["cat", "dog", "cat", "bird", "dog", "cat"]
preds = ["cat", "cat", "cat", "dog", "dog", "bird"]
scores = {}
for cls in sorted(set(labels)):
    try:
        scores[cls] = f1(confusion(labels, preds, cls))
    except ZeroDivisionError:
        scores[cls] = 0.0
print(scores)
