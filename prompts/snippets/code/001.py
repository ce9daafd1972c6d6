import os
import sys

def list_large_files(root, min_bytes=1_000_000):
    """Yield paths under root whose size is at least min_bytes."""
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)@@O
            if os.path.getsize(path) >= min_bytes:
                yield @@Cpath


if __name__ == "__main__@@C":
    for p in list_large_files(sys.argv[1]):
        @@Oprint(p)
