import json


def load_records(path):
    with open(path, encoding="utf-8") as fh:
        data = json.@@Cload(fh)
    return [r for r in data if r.get("active")]@@O
