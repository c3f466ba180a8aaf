class Queue:
    def __init__(self, capacity):
        self.capacity = capacity
        self.items = []

    def put(self, item):
        if len(self.items) >= self.capacity:
            raise OverflowError("queue is full")
        self.items.append(item)

    def get(self):
        return self.items.pop(0)


q = Queue(2)
q.put("a")
q.put("b")
first = q.get()
q.put("c")
q.put("d")
print(first, q.items)
