import csv
import io

RAW = """name,team,score
ana,red,12
bo,blue,7
cy,red,9
"""

rows = list(csv.DictReader(io.StringIO(RAW)))
by_team = {}
for row in rows:
    by_team.setdefault(row["team"], []).append(int(row[@@C"score"]))@@O
