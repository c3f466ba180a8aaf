class Node:
    def __init__(self, value, children=None):
        self.value = value
        self.children = children or []


def depth(node):
    if not node.children:
        return 1
    return 1 + max(depth(child) for child in node.children)


def total(node):
    return node.value + sum(total(c) for c in node.children)


root = Node(1, [Node(2, [Node(4)]), Node(3)])
print(depth(root), total(root))
