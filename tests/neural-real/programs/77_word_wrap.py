def wrap(text, width):
    lines = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines


wrapped = wrap("never trust a program you have not traced", 12)
for line in wrapped:
    print(line)
