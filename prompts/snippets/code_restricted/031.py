def parse_duration(text):
    """Parse strings like '1h30m' or '45s' into a number of seconds."""
    units = {"h": 3600, "m": 60, "s": 1}
    total = 0
    number = ""
    for ch in text.strip():
        if ch.isdigit():
            number += ch
        elif ch in units and number:
            total += int(number) * units[@@Cch]
            number = ""
        else:
            raise ValueError(f"bad duration: {text!r}")@@O
    if number:
        @@Mraise ValueError(f"missing unit in {text!r}")
    return total
