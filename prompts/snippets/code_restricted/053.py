def read_numbers(path):
    # one number per line; blank lines are ignored
    with open(path) as fh:
        return [float(line) for line in fh if line.@@Mstrip()]
