# Reading standard input: the text in the "Standard input" box is what
# input() returns, one line per call.

name = input("Your name? ")
count = int(input("How many greetings? "))
for i in range(count):
    print(f"Hello {name} ({i + 1})")
