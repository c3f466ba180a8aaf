class Tree:
    def __init__(self, key):
        self.key = key
        self.left = None
        self.right = None

    def insert(self, key):
        side = "left" if key < self.key else "right"
        child = getattr(self, side)
        if child is None:
            setattr(self, side, Tree(key))
        else:
            child.insert(key)

    def walk(self):
        if self.left:
            yield from self.left.walk()
        yield self.key
        if self.right:
            yield from self.right.walk()


root = Tree(5)
for k in [3, 8, 1, 4]:
    root.insert(k)
print(list(root.walk()))
