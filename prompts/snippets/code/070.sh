#!/bin/sh
# Print the ten largest files under the current directory.
find . -type f -printf '%s %p\n' \
    | sort -@@Cnr \
    | head -n @@C10
