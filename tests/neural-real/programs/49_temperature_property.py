class Thermostat:
    def __init__(self, celsius):
        self._celsius = celsius

    @property
    def fahrenheit(self):
        return self._celsius * 9 / 5 + 32

    def warm(self, by):
        self._celsius += by
        return self.fahrenheit


t = Thermostat(20)
before = t.fahrenheit
after = t.warm(5)
print(before, after)
