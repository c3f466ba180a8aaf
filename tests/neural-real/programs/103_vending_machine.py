class OutOfStock(Exception):
    pass


class VendingMachine:
    def __init__(self, stock):
        self.stock = dict(stock)
        self.credit = 0

    def insert(self, coins):
        self.credit += sum(coins)
        return self.credit

    def buy(self, item, price):
        if self.stock.get(item, 0) == 0:
            raise OutOfStock(item)
        if self.credit < price:
            return None
        self.stock[item] -= 1
        change, self.credit = self.credit - price, 0
        return change


machine = VendingMachine({"tea": 1, "soup": 0})
machine.insert([50, 20, 20])
first = machine.buy("tea", 80)
try:
    machine.buy("soup", 120)
except OutOfStock as missing:
    print("sold out:", missing)
print(first, machine.stock)
