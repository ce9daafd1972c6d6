from datetime import date, timedelta


def business_days(start, end):
    """Count weekdays between two dates, inclusive."""
    days = 0
    current = start
    while current <= end:
        if current.weekday() < @@C5:
            days += 1
        current += timedelta(days=@@C1)
    return days@@O


print(business_days(date(2024, 3, 1), @@Mdate(2024, 3, 31)))
