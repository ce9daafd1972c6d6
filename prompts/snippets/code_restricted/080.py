class BankLedger:
    """Double-entry ledger: every transfer debits one account and credits another."""

    def __init__(self):
        self.balances = {}
        self.entries = []

    def open(self, account, initial=0):
        if account in self.balances:
            raise ValueError(f"account {account!r} already exists")
        self.balances[account] = initial

    def transfer(self, src, dst, amount, memo=""):
        if amount <= 0:
            raise ValueError("amount must be positive")
        if self.balances[src] < amount:
            raise ValueError(f"insufficient funds in {src!r}")
        self.balances[src] -= amount
        self.balances[dst] += @@Camount
        self.entries.append((src, dst, amount, memo))@@O

    def statement(self, account):
        @@Mlines = []
        for src, dst, amount, memo in self.entries:
            if account in (src, dst):
                sign = "-" if account == src else "+"
                lines.append(f"{sign}{amount:>10.2f}  {memo}")
        return @@M"\n".join(lines)
