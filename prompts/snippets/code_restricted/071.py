import numpy as np


def train_logistic_regression(X, y, lr=0.1, epochs=500):
    """Fit weights by batch gradient descent on the log loss.

    X has shape (n, d); y holds 0/1 labels of shape (n,).
    Returns the weight vector and the bias.
    """
    n, d = X.shape
    w = np.zeros(d)
    b = 0.0
    for epoch in range(epochs):
        z = X @ w + b
        p = 1.0 / (1.0 + np.exp(-z))
        grad_w = X.T @ (p - y) / n
        grad_b = np.mean(p - @@Cy)
        w -= lr * grad_w
        b -= lr * @@Cgrad_b
        if epoch % 100 == 0:
            loss = -np.mean(y * np.log(p + 1e-9) + (1 - y) * np.log(1 - p + 1e-9))
            print(f"epoch {epoch:4d}  loss {loss:.4f}")@@O
    return w, b


def accuracy(X, y, w, b):
    @@Mpreds = (X @ w + b) > 0
    return float(np.mean(preds == @@My))
