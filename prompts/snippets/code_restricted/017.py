class Node:
    def __init__(self, value, left=None, right=None):
        self.value = value
        self.left = left
        self.right = @@Cright


def height(node):
    if node is None:
        return @@C0
    return 1 + max(height(node.left), @@Cheight(node.right))


def inorder(node):
    @@O
