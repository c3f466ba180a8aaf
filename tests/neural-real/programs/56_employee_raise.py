class Employee:
    def __init__(self, name, salary):
        self.name = name
        self.salary = salary

    def raise_by(self, percent):
        self.salary = int(self.salary * (100 + percent) / 100)
        return self.salary


class Manager(Employee):
    def __init__(self, name, salary, reports):
        super().__init__(name, salary)
        self.reports = reports

    def raise_by(self, percent):
        bonus = 2 * len(self.reports)
        return super().raise_by(percent + bonus)


ann = Employee("Ann", 1000)
bob = Manager("Bob", 2000, [ann])
ann.raise_by(5)
new_salary = bob.raise_by(3)
print(ann.salary, new_salary)
