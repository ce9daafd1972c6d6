class Inventory:
    def __init__(self):
        self.items = {}

    def add(self, name, qty=1):
        self.items[name] = self.items.get(name, 0) + qty

    def remove(self, name, qty=1):
        have = self.items.get(name, 0)
        if qty > have:
            raise KeyError(f"only {have} of {name} in stock")
        if qty == have:
            del self.items[@@Cname]
        else:
            self.items[name] = have - qty

    def report(self):
        @@Mwidth = max(map(len, self.items), default=0)
        for name in sorted(self.items):
            print(f"{name:<{width}}  {self.items[name]:>4}")@@O
