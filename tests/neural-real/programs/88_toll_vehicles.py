class Vehicle:
    rate = 2.0

    def __init__(self, plate, axles=2):
        self.plate = plate
        self.axles = axles

    def toll(self):
        return self.rate * self.axles

    def __repr__(self):
        return f"{type(self).__name__}({self.plate})"


class Truck(Vehicle):
    rate = 3.5

    def toll(self):
        base = super().toll()
        return base + 5 if self.axles > 3 else base


class Bike(Vehicle):
    def __init__(self, plate):
        super().__init__(plate, axles=0)


queue = [Vehicle("AB-12"), Truck("TR-77", axles=5), Bike("BK-3"), Truck("TR-08")]
tolls = {repr(v): v.toll() for v in queue}
paid = sum(tolls.values())
print(tolls, paid)
