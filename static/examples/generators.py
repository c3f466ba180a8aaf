# Generators: a function with `yield` pauses at each value and resumes
# where it left off when the next value is asked for. Step into (s)
# and watch the program jump between the loop and the generator.

def countdown(n):
    while n > 0:
        yield n          # pause here, hand n to the loop
        n -= 1
    print("liftoff")


def squares(numbers):
    for x in numbers:
        yield x * x


for value in countdown(3):
    print("got", value)

print(sum(squares(range(4))))
