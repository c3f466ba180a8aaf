import json
import os


def load_records(path="records.json"):
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return [
        {"name": "ada", "age": 36, "income": 5200.0, "visits": 3},
        {"name": "grace", "age": 45, "income": 6100.0, "visits": 7},
    ]
