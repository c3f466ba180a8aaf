class Stack:
    def __init__(self):
        self.items = []

    def push(self, item):
        self.items.append(item)

    def pop(self):
        return self.items.pop()

    def is_empty(self):
        return len(self.items) == 0


def balanced(text):
    pairs = {")": "(", "]": "["}
    stack = Stack()
    for ch in text:
        if ch in "([":
            stack.push(ch)
        elif ch in ")]":
            if stack.is_empty() or stack.pop() != pairs[ch]:
                return False
    return stack.is_empty()


print(balanced("([])"), balanced("(]"))
