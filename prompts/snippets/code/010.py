import argparse

parser = argparse.ArgumentParser(description="Resize every image in a folder.")@@M
parser.add_argument("folder", help="directory containing the images")
parser.add_argument("--width", type=int, default=800)
parser.add_argument("--quiet", action="store_true")
args = parser.@@Cparse_args()
@@O
