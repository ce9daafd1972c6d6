#include <stdio@@C.h>
#include <stdlib.h>

int main(int argc, char *argv[])
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE\n", argv[@@C0]);
        return 1;
    }
    @@O
