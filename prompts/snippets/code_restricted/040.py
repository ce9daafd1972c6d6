from pathlib import Path
import hashlib


def file_digest(path, chunk_size=1 << 16):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk_size), b""):
            h.update(block)
    return h.hexdigest()


def find_duplicates(root):
    """Group files under ``root`` that have identical contents."""
    by_size = {}
    for p in Path(root).rglob("*"):
        if p.is_file():
            by_size.setdefault(p.stat().st_size, []).append(p)@@O
    groups = []
    for same_size in by_size.values():
        if len(same_size) < 2:
            @@Ccontinue
        by_hash = {}
        for p in same_size:
            by_hash.setdefault(file_digest(p), []).append(@@Mp)
        groups.extend(g for g in by_hash.values() if len(g) > 1)
    return groups@@O
