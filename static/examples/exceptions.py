# Exceptions: an error travels up the call stack until an `except`
# catches it. Watch the exception event, then where the program resumes.

def parse_age(text):
    age = int(text)              # raises ValueError for "abc"
    if age < 0:
        raise ValueError("age cannot be negative")
    return age


def read_ages(texts):
    ages = []
    for text in texts:
        try:
            ages.append(parse_age(text))
        except ValueError as error:
            print("skipped", repr(text), "-", error)
        finally:
            print("checked", repr(text))
    return ages


print(read_ages(["42", "abc", "-1", "7"]))
