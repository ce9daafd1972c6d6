"""A tiny recursive-descent evaluator: expr := term (("+" | "-") term)*."""
import re

TOKEN = re.compile(r"\s*(?:(\d+\.?\d*)|(.))")


def tokenize(src):
    tokens = []
    for number, op in TOKEN.findall(src):
        tokens.append(float(number) if number else op)
    return tokens


class Parser:
    def __init__(self, tokens):
        self.tokens = tokens
        self.pos = 0

    def peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self):
        tok = self.peek()
        self.pos += 1
        return tok

    def expr(self):
        value = self.term()
        while self.peek() in ("+", "-"):
            if self.take() == "+":
                value += self.@@Cterm()
            else:
                value -= self.term()
        return value@@O

    def term(self):
        @@M
