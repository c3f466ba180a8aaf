class InsufficientFunds(Exception):
    def __init__(self, needed):
        super().__init__(f"need {needed} more")
        self.needed = needed


def pay(wallet, price):
    if price > wallet:
        raise InsufficientFunds(price - wallet)
    return wallet - price


wallet = 20
try:
    wallet = pay(wallet, 15)
    wallet = pay(wallet, 10)
except InsufficientFunds as err:
    short = err.needed
print(wallet, short)
