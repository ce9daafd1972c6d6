from dataclasses import dataclass, field

@dataclass
class Order:
    order_id: int
    customer: str
    items: list = field(default_factory=list)
    shipped: bool = False

    def total(self):
        return sum(item.price * item.quantity for item in @@Cself.items)@@O
