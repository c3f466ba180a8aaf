orders = [{"id": 1, "qty": 2}, {"id": 2}, {"id": 3, "qty": 1}]


def total_quantity(rows):
    total = 0
    for row in rows:
        total += row["qty"]
    return total


shipped = [row["id"] for row in orders if "qty" in row]
print(shipped)
count = total_quantity(orders)
print(count)
