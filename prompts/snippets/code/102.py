class BankAccount:
    """A toy bank account that refuses to go below zero."""

    interest_rate = 0.02@@O

    def __init__(self, owner, balance=0.0):
        self.owner = owner
        self.balance = balance
        self.history = []

    def deposit(self, amount):
        if amount <= 0:
            raise ValueError("deposit must be positive")
        self.balance += amount
        self.history.append(("deposit", amount))@@O

    def withdraw(self, amount):
        if amount > self.balance:
            raise ValueError(@@M"insufficient funds")
        self.balance -= amount
        self.history.append((@@M"withdraw", amount))

    def add_interest(self):
        @@O
