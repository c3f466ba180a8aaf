def ascii_curve(values, width=40):
    """A tiny text plot of a loss curve for terminals without matplotlib."""
    if not values:
        return ""
    hi, lo = max(values), min(values)
    span = (hi - lo) or 1.0
    return "\n".join("#" * int(1 + (v - lo) / span * (width - 1)) for v in values)
