class BankAccount:
    def __init__(self, owner, balance=0):
        self.owner = owner
        self.balance = balance

    def deposit(self, amount):
        if amount <= 0:
            raise ValueError("deposit must be positive")
        self.balance += amount
        return self.balance

    def withdraw(self, amount):
        if amount > self.balance:
            return False
        self.balance -= amount
        return True


acct = BankAccount("ada", 10)
acct.deposit(25)
ok = acct.withdraw(50)
ok2 = acct.withdraw(5)
print(acct.owner, acct.balance, ok, ok2)
