class Vec:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vec(self.x + other.x, self.y + other.y)

    def scale(self, k):
        return Vec(self.x * k, self.y * k)

    def __repr__(self):
        return f"Vec({self.x}, {self.y})"


p = Vec(1, 2)
q = Vec(3, -1)
r = (p + q).scale(2)
print(r)
