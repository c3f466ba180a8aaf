import bisect


class Leaderboard:
    def __init__(self, size):
        self.size = size
        self.scores = []

    def submit(self, name, points):
        bisect.insort(self.scores, (-points, name))
        if len(self.scores) > self.size:
            dropped = self.scores.pop()
            return dropped[1]
        return None

    @property
    def top(self):
        return [name for _, name in self.scores]


board = Leaderboard(3)
dropped = []
for name, points in [("kim", 40), ("lou", 75), ("max", 40), ("ned", 90)]:
    out = board.submit(name, points)
    if out:
        dropped.append(out)
print(board.top, dropped, board.scores[0])
