from features import zscore
from recordings import load_recording
from ridge import fit, predict

if __name__ == "__main__":
    X, y = load_recording()
    Xs = zscore(X)
    w = fit(Xs, y)
    print("first predictions", predict(Xs, w)[:3])
