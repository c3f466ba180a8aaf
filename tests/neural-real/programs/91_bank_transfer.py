class InsufficientFunds(Exception):
    pass


class Account:
    def __init__(self, owner, balance=0):
        self.owner = owner
        self.balance = balance
        self.history = []

    def withdraw(self, amount):
        if amount > self.balance:
            raise InsufficientFunds(f"{self.owner} has {self.balance}")
        self.balance -= amount
        self.history.append(-amount)

    def deposit(self, amount):
        self.balance += amount
        self.history.append(amount)


def transfer(src, dst, amount):
    try:
        src.withdraw(amount)
    except InsufficientFunds as err:
        return str(err)
    dst.deposit(amount)
    return "ok"


alice = Account("alice", 50)
bob = Account("bob")
results = [transfer(alice, bob, 30), transfer(alice, bob, 30), transfer(bob, alice, 10)]
print(results, alice.balance, bob.history)
