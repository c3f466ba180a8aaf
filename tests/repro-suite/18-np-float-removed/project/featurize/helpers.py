import numpy as np

N_FEATURES = 4


def build_feature_matrix(records):
    """One row of numeric features per record."""
    out = np.zeros((len(records), N_FEATURES), dtype=np.float)
    for i, r in enumerate(records):
        out[i] = [r["age"], r["income"], len(r["name"]), r["visits"]]
    return out
