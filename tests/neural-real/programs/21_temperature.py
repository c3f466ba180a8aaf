def to_fahrenheit(celsius):
    return celsius * 9 / 5 + 32


readings = [-5, 0, 21.5, 37]
converted = list(map(to_fahrenheit, readings))
warm = [f for f in converted if f > 60]
avg = sum(converted) / len(converted)
print(converted, warm, avg)
