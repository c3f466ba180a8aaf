commands = ["add 5", "add 3", "sub 2", "quit", "add 100"]
value = 0
i = 0
while True:
    cmd = commands[i]
    i += 1
    if cmd == "quit":
        break
    op, num = cmd.split()
    if op == "add":
        value += int(num)
    else:
        value -= int(num)
print(value, i)
