import os
import time


def tail(path, poll=0.5):
    """Follow a growing file, yielding new lines as they are written.

    Behaves roughly like ``tail -f``: starts at the current end of the file
    and sleeps between polls when nothing new has arrived. Handles the file
    being truncated (for example by log rotation) by seeking back to 0.
    """
    with open(path) as fh:
        fh.seek(0, os.SEEK_END)
        while True:
            position = fh.tell()
            line = fh.readline()
            if line:
                yield line.rstrip(@@M"\n")
                continue
            if os.path.getsize(path) < position:
                fh.seek(0)@@O
            time.sleep(@@Mpoll)


for line in tail("/var/log/app.log"):
    if "ERROR" in line:
        @@O
