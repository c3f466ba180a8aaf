lines = """food,12
rent,500
food,7
travel,40
rent,x""".splitlines()

totals = {}
bad = []
for number, line in enumerate(lines, start=1):
    category, amount = line.split(",")
    try:
        totals[category] = totals.get(category, 0) + int(amount)
    except ValueError:
        bad.append(number)

largest = max(totals, key=totals.get)
print(totals, bad, largest)
