def parse(line):
    values = []
    for token in line.split(","):
        token = token.strip()
        if not token:
            continue
        values.append(int(token))
    return values


def safe_parse(line):
    try:
        return parse(line)
    except ValueError as exc:
        return f"bad input: {exc}"


print(safe_parse("1, 2,,3"))
print(safe_parse("4, five"))
