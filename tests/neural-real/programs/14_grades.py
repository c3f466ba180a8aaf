scores = {"ana": 91, "ben": 78, "cy": 64, "dee": 85}


def letter(score):
    if score >= 90:
        return "A"
    elif score >= 80:
        return "B"
    elif score >= 70:
        return "C"
    return "D"


report = {name: letter(s) for name, s in scores.items()}
passed = [name for name, g in report.items() if g != "D"]
print(report, passed)
