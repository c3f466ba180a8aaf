class Node:
    def __init__(self, value, next=None):
        self.value = value
        self.next = next


def build(values):
    head = None
    for v in reversed(values):
        head = Node(v, head)
    return head


def to_list(node):
    out = []
    while node is not None:
        out.append(node.value)
        node = node.next
    return out


head = build([3, 1, 4])
print(to_list(head))
