from data import load_fashion
from models import build_model

if __name__ == "__main__":
    x_train, y_train = load_fashion()
    model = build_model()
    model.fit(x_train, y_train, epochs=5, batch_size=64)
