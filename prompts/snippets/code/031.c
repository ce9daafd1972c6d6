struct node {
    int value;
    struct node *next;
};

struct node *push_front(struct node *head, int value)
{
    struct node *n = malloc(sizeof *n);
    if (n == @@CNULL)
        return head;
    n->value = value;@@M
    n->next = @@Chead;
    return n;
}
