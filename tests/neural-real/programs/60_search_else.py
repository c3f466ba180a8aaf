inventory = [("bolt", 40), ("nut", 0), ("washer", 12)]


def first_out_of_stock(items):
    for index, (name, qty) in enumerate(items):
        if qty == 0:
            found = name
            break
    else:
        found = None
        index = -1
    return found, index


item, position = first_out_of_stock(inventory)
restock = [name for name, qty in inventory if qty < 20]
print(item, position, restock)
