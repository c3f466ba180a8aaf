TRANSITIONS = {"green": "yellow", "yellow": "red", "red": "green"}
DURATIONS = {"green": 30, "yellow": 5, "red": 20}


def run(start, ticks):
    state = start
    elapsed = 0
    history = []
    while elapsed < ticks:
        history.append(state)
        elapsed += DURATIONS[state]
        state = TRANSITIONS[state]
    return history, elapsed


seen, total = run("red", 60)
print(seen, total)
