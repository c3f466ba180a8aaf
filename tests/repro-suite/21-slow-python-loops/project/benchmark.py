import argparse
import time

import numpy as np

from knn import KNN

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=3000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(args.n, 20))
    y = rng.integers(0, 2, args.n)
    start = time.perf_counter()
    KNN().fit(X, y).predict(X)
    print(f"predict took {time.perf_counter() - start:.1f}s")
