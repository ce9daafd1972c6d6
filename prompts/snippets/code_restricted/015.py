import re

EMAIL = re.compile(r"^[\w.+-]+@[\w-]+\.[\w.]+$")


def valid_emails(candidates):
    return [c for c in candidates if EMAIL.@@Mmatch(c)]@@O
