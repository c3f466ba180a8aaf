scores = {"ana": [88, 92, 79], "ben": [65, 70, 58], "cy": [95, 98, 100]}


def letter(avg):
    if avg >= 90:
        return "A"
    if avg >= 75:
        return "B"
    return "C"


report = {}
for student, marks in scores.items():
    avg = sum(marks) / len(marks)
    report[student] = (round(avg, 1), letter(avg))
best = max(report, key=lambda s: report[s][0])
print(report, best)
