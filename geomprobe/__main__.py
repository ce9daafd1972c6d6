"""`python -m geomprobe`: the same command line as `geomprobe` (geomprobe.cli)."""

from geomprobe.cli import main

if __name__ == "__main__":
    main()
