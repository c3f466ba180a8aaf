from digits import noisy_digits
from knn import OneNearestNeighbour
from split import train_test_split

if __name__ == "__main__":
    X, y = noisy_digits()
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_fraction=0.2)
    print("train size", len(X_train), "test size", len(X_test))
    model = OneNearestNeighbour().fit(X_train, y_train)
    print(f"test accuracy {(model.predict(X_test) == y_test).mean():.3f}")
