def average(scores):
    return sum(scores) / len(scores)


classes = {"math": [90, 72, 85], "art": [], "music": [66]}
report = {}
for subject, scores in classes.items():
    report[subject] = round(average(scores), 1)
print(report)
