from dataclasses import dataclass


@dataclass
class Reading:
    city: str
    celsius: float

    def fahrenheit(self):
        return self.celsius * 9 / 5 + 32


readings = [Reading("Oslo", -3.0), Reading("Rome", 14.5), Reading("Oslo", 1.0)]
by_city = {}
for r in readings:
    by_city.setdefault(r.city, []).append(r.fahrenheit())
warmest = max(by_city, key=lambda c: max(by_city[c]))
print(by_city, warmest)
