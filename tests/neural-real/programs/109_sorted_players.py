class Player:
    def __init__(self, name, wins, games):
        self.name = name
        self.wins = wins
        self.games = games

    @property
    def ratio(self):
        return self.wins / self.games if self.games else 0.0

    def __repr__(self):
        return f"Player({self.name!r}, {self.ratio:.2f})"


team = [Player("ana", 3, 4), Player("bo", 0, 0), Player("cy", 5, 10)]
ranked = sorted(team, key=lambda p: (-p.ratio, p.name))
best = ranked[0]
best.wins += 1
print(ranked, team[0].wins)
