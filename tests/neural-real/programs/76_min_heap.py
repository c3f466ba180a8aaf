class MinHeap:
    def __init__(self):
        self.items = []

    def push(self, value):
        self.items.append(value)
        i = len(self.items) - 1
        while i > 0:
            parent = (i - 1) // 2
            if self.items[parent] <= self.items[i]:
                break
            self.items[parent], self.items[i] = self.items[i], self.items[parent]
            i = parent


heap = MinHeap()
for value in [7, 3, 9, 1]:
    heap.push(value)
print(heap.items)
