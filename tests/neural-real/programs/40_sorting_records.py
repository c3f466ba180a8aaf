students = [
    {"name": "ana", "age": 21, "gpa": 3.4},
    {"name": "ben", "age": 19, "gpa": 3.9},
    {"name": "cy", "age": 22, "gpa": 3.1},
]


def by_gpa(s):
    return s["gpa"]


ranked = sorted(students, key=by_gpa, reverse=True)
names = [s["name"] for s in ranked]
youngest = min(students, key=lambda s: s["age"])
print(names, youngest["name"])
