from losses import mae, mse
from regressor import LeastSquares
from targets import load_features, load_targets

if __name__ == "__main__":
    X, y = load_features(), load_targets()
    model = LeastSquares().fit(X, y)
    print(f"mse {mse(y, model.predict(X)):.2f} mae {mae(y, model.predict(X)):.2f}")
