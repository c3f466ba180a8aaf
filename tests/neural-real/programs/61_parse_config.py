raw = """name = demo
port = 8080
debug = yes
"""


def parse(text):
    settings = {}
    for line in text.strip().splitlines():
        key, _, value = line.partition("=")
        value = value.strip()
        if value.isdigit():
            value = int(value)
        elif value in ("yes", "no"):
            value = value == "yes"
        settings[key.strip()] = value
    return settings


config = parse(raw)
print(config["port"] + 1, config["debug"])
