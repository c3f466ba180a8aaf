class ConfigError(Exception):
    pass


def read_port(settings):
    raw = settings.get("port", "8080")
    try:
        port = int(raw)
    except ValueError as err:
        raise ConfigError(f"bad port {raw!r}") from err
    else:
        if not 0 < port < 65536:
            raise ConfigError(f"port out of range: {port}")
    return port


ok = read_port({"port": "9000"})
print("ok", ok)
read_port({"port": "90o0"})
