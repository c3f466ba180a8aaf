class Ticket:
    issued = 0

    def __init__(self, holder):
        Ticket.issued += 1
        self.number = Ticket.issued
        self.holder = holder

    def label(self):
        return f"#{self.number} {self.holder}"


t1 = Ticket("zoe")
t2 = Ticket("max")
labels = [t1.label(), t2.label()]
print(labels, Ticket.issued)
