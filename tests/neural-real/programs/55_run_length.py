def encode(text):
    runs = []
    for ch in text:
        if runs and runs[-1][0] == ch:
            runs[-1][1] += 1
        else:
            runs.append([ch, 1])
    return "".join(f"{ch}{n}" for ch, n in runs)


def decode(code):
    out = ""
    for i in range(0, len(code), 2):
        out += code[i] * int(code[i + 1])
    return out


packed = encode("aaabccdddd")
print(packed, decode(packed))
