#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Growable array of integers. */
typedef struct {
    int *data;
    size_t len;
    size_t cap;
} vec_t;

int vec_push(vec_t *v, int x)
{
    if (v->len == v->cap) {
        size_t new_cap = v->cap ? v->cap * 2 : 8;
        int *p = realloc(v->data, new_cap * sizeof *p);
        if (!p)
            return -1;
        v->data = p;
        v->cap = @@Cnew_cap;
    }
    v->data[v->len++] = @@Cx;
    return 0;
}

void vec_free(vec_t *v)
{
    @@Mfree(v->data);
    v->data = NULL;
    v->len = v->cap = @@C0;
}
@@O
