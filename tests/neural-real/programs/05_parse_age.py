def parse_age(text):
    age = int(text)
    if age < 0:
        raise ValueError(f"negative age: {age}")
    return age


ages = []
for raw in ["12", "40", "-3"]:
    ages.append(parse_age(raw))
print(ages)
