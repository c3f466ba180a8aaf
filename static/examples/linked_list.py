# A linked list built from objects: each node refers to the next one.
# Expand `head` to follow the references; reversing the list only
# rewires the `next` attributes, the nodes stay the same objects.

class Node:
    def __init__(self, value, next=None):
        self.value = value
        self.next = next


def reverse(head):
    previous = None
    while head is not None:
        head.next, previous, head = previous, head, head.next
    return previous


head = Node(1, Node(2, Node(3)))
head = reverse(head)
print(head.value, head.next.value, head.next.next.value)
