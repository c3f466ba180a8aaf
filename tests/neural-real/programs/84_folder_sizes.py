tree = {
    "README.md": 40,
    "src": {"main.py": 120, "util.py": 60, "data": {"cities.csv": 300}},
    "tests": {"test_main.py": 80},
}


def folder_sizes(node, path, out):
    total = 0
    for name, child in node.items():
        if isinstance(child, dict):
            total += folder_sizes(child, path + name + "/", out)
        else:
            total += child
    out[path] = total
    return total


sizes = {}
grand = folder_sizes(tree, "/", sizes)
big = [p for p, s in sizes.items() if s >= 200]
print(grand, sizes["/src/"], big)
