prices = {"apple": 0.5, "bread": 2.25, "milk": 1.2}
cart = [("apple", 4), ("milk", 2), ("bread", 1)]


def line_total(item):
    name, qty = item
    return round(prices[name] * qty, 2)


totals = [line_total(item) for item in cart]
subtotal = sum(totals)
discount = 0.1 if subtotal > 5 else 0
final = round(subtotal * (1 - discount), 2)
print(totals, final)
