from enum import Enum


class Unit(Enum):
    MM = 0.001
    CM = 0.01
    M = 1.0
    KM = 1000.0


def parse(text):
    number, name = text.split()
    return float(number), Unit[name.upper()]


def convert(value, src, dst):
    meters = value * src.value
    return round(meters / dst.value, 3)


readings = ["250 cm", "3 km", "75 mm"]
in_meters = []
for text in readings:
    value, unit = parse(text)
    in_meters.append(convert(value, unit, Unit.M))
longest = max(in_meters)
print(in_meters, longest, Unit.KM.name)
