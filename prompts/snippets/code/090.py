import re
from pathlib import Path

TODO = re.compile(r"#\s*TODO[:\s](.*)")

def collect_todos(root):
    """Return (file, line number, text) for every TODO comment under root."""
    found = []@@M
    for path in sorted(Path(root).rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), start=1):
            match = TODO.search(line)
            if match:
                found.append((str(path), lineno, match.group(1).strip()))
    return found


def main():@@O
    todos = collect_todos(".")
    if not todos:
        print("No TODOs found.")@@M
        return
    width = max(len(f) for f, _, _ in todos)
    for f, n, text in todos:
        @@Mprint(f"{f:<{width}}  {n:>5}  {text}")
    print(f"{len(todos)} TODO comments in total.")@@O
