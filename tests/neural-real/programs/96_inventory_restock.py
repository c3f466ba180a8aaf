stock = {"apple": 4, "pear": 0, "plum": 9}
orders = [("apple", 3), ("pear", 1), ("kiwi", 2), ("plum", 5)]
shipped = []
missing = {}

for name, qty in orders:
    have = stock.get(name, 0)
    if have >= qty:
        stock[name] = have - qty
        shipped.append(name)
    else:
        missing[name] = qty - have

restock = sorted(missing, key=missing.get, reverse=True)
print(shipped, missing, restock)
