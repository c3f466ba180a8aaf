import heapq

tasks = []
heapq.heappush(tasks, (2, "write report"))
heapq.heappush(tasks, (1, "fix bug"))
heapq.heappush(tasks, (3, "lunch"))

done = []
while tasks:
    priority, name = heapq.heappop(tasks)
    if priority > 2:
        break
    done.append(name)
left = len(tasks)
print(done, left)
