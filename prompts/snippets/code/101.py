import csv
import statistics
from collections import defaultdict

def summarize_sales(path):
    """Read a CSV of sales and report revenue per region.

    Expected columns: date, region, product, units, unit_price.
    """
    revenue = defaultdict(float)
    units_sold = defaultdict(int)
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            amount = int(row["units"]) * float(row["unit_price"])
            revenue[row["region"]] += amount
            units_sold[row["region"]] += int(row["units"])@@O

    report = []
    for region in sorted(revenue):
        report.append({
            "region": region,
            "revenue": round(revenue[region], 2),
            "units": @@Munits_sold[region],
        })@@O
    median = statistics.median(r["revenue"] for r in report)@@M
    print(f"Median regional revenue: {median:.2f}")
    # Flag the regions that fell below half of the median@@O
