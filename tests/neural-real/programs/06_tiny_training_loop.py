def predict(w, b, x):
    return w * x + b


xs = [1.0, 2.0, 3.0]
ys = [3.0, 5.0, 7.0]
w, b = 0.0, 0.0
lr = 0.05
for epoch in range(3):
    grad_w = 0.0
    grad_b = 0.0
    for x, y in zip(xs, ys):
        err = predict(w, b, x) - y
        grad_w += 2 * err * x / len(xs)
        grad_b += 2 * err / len(xs)
    w -= lr * grad_w
    b -= lr * grad_b
print(round(w, 3), round(b, 3))
