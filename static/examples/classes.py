# Classes: objects carry their own data (attributes) and behaviour
# (methods). Expand `account` in the variables to see its attributes.

class Account:
    interest = 0.02          # shared by every account (a class attribute)

    def __init__(self, owner, balance=0):
        self.owner = owner
        self.balance = balance

    def deposit(self, amount):
        if amount <= 0:
            raise ValueError("deposit must be positive")
        self.balance += amount

    def add_interest(self):
        self.balance += self.balance * Account.interest


account = Account("Ada", 100)
account.deposit(50)
account.add_interest()
print(account.owner, account.balance)
