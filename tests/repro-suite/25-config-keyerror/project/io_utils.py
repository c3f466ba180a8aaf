import json


def save_history(history, path):
    with open(path, "w") as f:
        json.dump(history, f)


def load_history(path):
    with open(path) as f:
        return json.load(f)
