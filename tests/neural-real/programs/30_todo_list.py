todos = []


def add(title):
    item = {"title": title, "done": False}
    todos.append(item)
    return item


def finish(title):
    for item in todos:
        if item["title"] == title:
            item["done"] = True
            return True
    return False


add("read")
add("write")
found = finish("read")
lost = finish("sleep")
remaining = [t["title"] for t in todos if not t["done"]]
print(found, lost, remaining)
