from config import EPOCHS, HIDDEN, LR, SEED
from data import split, two_moons
from mlp import MLP

if __name__ == "__main__":
    X, y = two_moons(seed=SEED)
    X_train, X_test, y_train, y_test = split(X, y, SEED)
    model = MLP(2, HIDDEN)
    for epoch in range(EPOCHS):
        model.step(model.forward(X_train), y_train, LR)
    accuracy = ((model.forward(X_test) > 0.5) == y_test).mean()
    print(f"test accuracy {accuracy:.3f}")
