TABLE = [(10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def to_roman(n):
    out = ""
    for value, symbol in TABLE:
        while n >= value:
            out += symbol
            n -= value
    return out


years = [14, 9, 3]
numerals = {y: to_roman(y) for y in years}
print(numerals)
