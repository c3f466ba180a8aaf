import re
from collections import Counter
from itertools import groupby

LINE = re.compile(r"(\d\d):(\d\d) (\w+) (.*)")
logs = [
    "09:14 INFO server started",
    "09:15 WARN disk at 91%",
    "09:15 ERROR write failed",
    "10:02 INFO backup done",
    "10:40 ERROR timeout",
]

parsed = []
for line in logs:
    hour, minute, level, message = LINE.match(line).groups()
    parsed.append((int(hour), level, message))

levels = Counter(level for _, level, _ in parsed)
by_hour = {h: [m for _, _, m in rows] for h, rows in groupby(parsed, key=lambda p: p[0])}
print(levels.most_common(1), by_hour[10])
