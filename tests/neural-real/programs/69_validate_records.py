def check(record):
    if "@" not in record["email"]:
        raise ValueError("bad email: " + record["email"])
    if record["age"] < 0:
        raise ValueError("negative age")
    return record["email"].lower()


records = [
    {"email": "Ann@Example.com", "age": 31},
    {"email": "bob.example.com", "age": 25},
    {"email": "cy@example.com", "age": -4},
]
valid, errors = [], []
for record in records:
    try:
        valid.append(check(record))
    except ValueError as exc:
        errors.append(str(exc))
print(valid, errors)
