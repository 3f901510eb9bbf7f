"""Property: an invoice's cached total equals the total computed fresh from its lines.

Input {"lines": [{"cents": int, "rate": "standard" | "reduced"}, ...]}. Money is decimal:
amounts are integer cents, tax is computed with Decimal and rounded half-even to the cent.
"""
import sys
from decimal import ROUND_HALF_EVEN, Decimal

from oracle import serve

RATES = {"standard": Decimal("0.19"), "reduced": Decimal("0.07")}
CENT = Decimal("1")


def tax(cents, rate):
    return int((Decimal(cents) * RATES[rate]).quantize(CENT, rounding=ROUND_HALF_EVEN))


def fresh_total(lines):
    """The invoice rule: tax is computed once per rate, on the sum of that rate's lines."""
    by_rate = {}
    for line in lines:
        by_rate[line["rate"]] = by_rate.get(line["rate"], 0) + line["cents"]
    return sum(by_rate.values()) + sum(tax(c, r) for r, c in by_rate.items())


class Invoice:
    def __init__(self):
        self.lines = []
        self.cached_total = 0

    def add(self, line):
        # The cache is recomputed with the invoice rule, never rounded line by line.
        self.lines.append(line)
        self.cached_total = fresh_total(self.lines)


def valid(doc):
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("lines"), list)
        and all(
            isinstance(l, dict)
            and isinstance(l.get("cents"), int)
            and l["cents"] >= 0
            and l.get("rate") in RATES
            for l in doc["lines"]
        )
    )


def check(doc):
    if not valid(doc):
        return None
    invoice = Invoice()
    for line in doc["lines"]:
        invoice.add(line)
    fresh = fresh_total(invoice.lines)
    if invoice.cached_total != fresh:
        return "cached total drifts from the fresh sum"
    return None


sys.exit(serve(check))
