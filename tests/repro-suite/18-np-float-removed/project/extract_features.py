import numpy as np

from featurize.helpers import build_feature_matrix
from records import load_records

if __name__ == "__main__":
    records = load_records()
    feats = build_feature_matrix(records)
    np.set_printoptions(precision=2, suppress=True)
    print(feats)
