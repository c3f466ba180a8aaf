class Playlist:
    def __init__(self, name):
        self.name = name
        self.songs = []

    def add(self, title, seconds):
        self.songs.append((title, seconds))
        return self

    def __len__(self):
        return len(self.songs)

    def __iter__(self):
        for title, seconds in self.songs:
            yield f"{title} ({seconds // 60}:{seconds % 60:02d})"


mix = Playlist("road trip").add("Intro", 95).add("Highway", 241)
count = len(mix)
lines = [line for line in mix]
print(count, lines)
