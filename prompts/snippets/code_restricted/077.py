import argparse
import csv
import sys


def build_parser():
    parser = argparse.ArgumentParser(
        prog="csvstat",
        description="Print summary statistics for numeric CSV columns.",
    )
    parser.add_argument("path", help="CSV file to read, or - for stdin")
    parser.add_argument("-c", "--columns", nargs="+", help="only these columns")
    parser.add_argument("--delimiter", default=",")
    parser.add_argument("--precision", type=int, default=@@M3)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    fh = sys.stdin if args.path == "-" else open(args.path, newline="")
    with fh:
        reader = csv.DictReader(fh, delimiter=args.@@Cdelimiter)
        columns = args.columns or reader.@@Mfieldnames
        values = {c: [] for c in columns}
        for row in reader:
            for c in columns:
                try:
                    values[c].append(float(row[c]))
                except (TypeError, ValueError):
                    @@Mpass
    for c, vs in values.items():
        @@O
