from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class Invoice:
    number: str
    customer: str
    issued: date
    lines: tuple[tuple[str, int, float], ...]
    tax_rate: float = 0.2

    @property
    def subtotal(self) -> float:
        return sum(qty * price for _desc, qty, price in self.lines)

    @property
    def tax(self) -> float:
        return round(self.subtotal * self.tax_rate, 2)

    @property
    def total(self) -> float:
        return round(self.subtotal + @@Mself.tax, 2)

    def render(self) -> str:
        out = [f"Invoice {self.number} for {self.customer} ({self.issued:%d %b %Y})"]
        for desc, qty, price in self.lines:
            out.append(f"  {desc:<24}{qty:>4} x {price:>8.2f}")@@O
        out.append(f"  {'Tax':<24}{self.tax:>17.2f}")
        @@Mout.append(f"  {'Total':<24}{self.total:>17.2f}")
        return "\n".join(out)@@O
