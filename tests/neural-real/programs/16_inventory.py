inventory = {"apple": 3, "pear": 0}


def restock(stock, item, amount):
    stock[item] = stock.get(item, 0) + amount
    return stock[item]


def sell(stock, item):
    if stock.get(item, 0) == 0:
        raise KeyError(item)
    stock[item] -= 1


restock(inventory, "pear", 2)
sell(inventory, "apple")
sell(inventory, "pear")
print(inventory)
