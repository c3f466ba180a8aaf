class CurrencyMismatch(Exception):
    pass


class Money:
    def __init__(self, cents, currency):
        self.cents = cents
        self.currency = currency

    def __add__(self, other):
        if other.currency != self.currency:
            raise CurrencyMismatch(f"{self.currency} + {other.currency}")
        return Money(self.cents + other.cents, self.currency)

    def __eq__(self, other):
        return (self.cents, self.currency) == (other.cents, other.currency)

    def __repr__(self):
        return f"{self.cents / 100:.2f} {self.currency}"


lunch = Money(1250, "EUR")
tip = Money(150, "EUR")
bill = lunch + tip
print(bill, bill == Money(1400, "EUR"))
souvenir = Money(900, "USD")
total = bill + souvenir
print(total)
