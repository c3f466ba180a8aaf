class Book:
    def __init__(self, title, copies):
        self.title = title
        self.copies = copies

    def lend(self):
        if self.copies == 0:
            return False
        self.copies -= 1
        return True


shelf = {"dune": Book("Dune", 1), "emma": Book("Emma", 2)}
log = []
for wanted in ["dune", "emma", "dune"]:
    ok = shelf[wanted].lend()
    log.append((wanted, ok))
print(log)
