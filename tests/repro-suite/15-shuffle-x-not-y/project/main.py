from dataset import iris_like, prepare_dataset
from metrics import accuracy
from softmax_regression import SoftmaxRegression

if __name__ == "__main__":
    X, y = iris_like()
    X_train, X_test, y_train, y_test = prepare_dataset(X, y, shuffle=True)
    model = SoftmaxRegression(4, 3).fit(X_train, y_train)
    print(f"train accuracy {accuracy(y_train, model.predict(X_train)):.3f}")
    print(f"test accuracy {accuracy(y_test, model.predict(X_test)):.3f}")
