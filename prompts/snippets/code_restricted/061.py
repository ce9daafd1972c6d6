def caesar(text, shift):
    out = []
    for ch in text:
        if ch.isalpha():
            base = ord("A") if ch.isupper() else ord(@@C"a")
            out.append(chr((ord(ch) - base + shift) % 26 + @@Cbase))
        else:
            out.append(@@Cch)
    return "".join(out)@@O
