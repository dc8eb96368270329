"""Shared by every report in the company: amounts are integer cents."""

RATES = {"EUR": 100, "USD": 92, "GBP": 117}


def to_eur_cents(amount: str, currency: str) -> int:
    return round(float(amount) * RATES[currency])
