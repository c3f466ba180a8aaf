def to_binary(n):
    if n < 2:
        return str(n)
    return to_binary(n // 2) + str(n % 2)


digits = to_binary(11)
width = len(digits)
padded = digits.rjust(8, "0")
print(digits, width, padded)
