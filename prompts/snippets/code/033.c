#define MAX_LINE 256

int count_lines(FILE *fp)
{
    char buf[MAX_LINE];
    int lines = 0;@@M
    while (fgets(buf, sizeof buf, @@Cfp) != NULL)
        lines++;
    @@Mreturn lines;
}
