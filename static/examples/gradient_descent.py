# Gradient descent fitting y = w * x to data (the best w is 2).
# It has a SILENT BUG: the learning rate is too large, so every step
# overshoots further and w diverges instead of converging, yet the
# program runs to the end without any error. Step through and watch
# `loss` grow; try lr = 0.01 to fix it.

xs = [1.0, 2.0, 3.0, 4.0]
ys = [2.0, 4.0, 6.0, 8.0]

w = 0.0
lr = 0.1          # too large for this data: the bug

for epoch in range(8):
    gradient = 0.0
    loss = 0.0
    for x, y in zip(xs, ys):
        error = w * x - y
        loss += error * error / len(xs)
        gradient += 2 * error * x / len(xs)
    w -= lr * gradient
    print(f"epoch {epoch}: w = {w:.3g}, loss = {loss:.3g}")

print("learned w =", w)
