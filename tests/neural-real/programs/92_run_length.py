def encode(text):
    runs = []
    prev = None
    count = 0
    for ch in text:
        if ch == prev:
            count += 1
        else:
            if prev is not None:
                runs.append((prev, count))
            prev = ch
            count = 1
    if prev is not None:
        runs.append((prev, count))
    return runs


def decode(runs):
    return "".join(ch * n for ch, n in runs)


packed = encode("aaabccdddd")
print(packed, decode(packed) == "aaabccdddd")
