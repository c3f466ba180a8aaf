class InsufficientFunds(Exception):
    def __init__(self, needed):
        super().__init__(f"need {needed} more")
        self.needed = needed


def withdraw(balance, amount):
    if amount > balance:
        raise InsufficientFunds(amount - balance)
    return balance - amount


balance = 50
log = []
for amount in [20, 40, 10]:
    try:
        balance = withdraw(balance, amount)
        log.append(amount)
    except InsufficientFunds as exc:
        log.append(-exc.needed)
    finally:
        log.append(balance)
print(log)
