import argparse

from config import Config
from network import TwoLayerNet
from spirals import make_spirals
from trainer import fit

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--hidden", type=int, default=Config.hidden_size)
    args = parser.parse_args()
    cfg = Config(hidden_size=args.hidden)
    X, Y = make_spirals(n_classes=cfg.n_classes)
    net = TwoLayerNet(X.shape[1], cfg.hidden_size, cfg.n_classes, seed=cfg.seed)
    history = fit(net, X, Y, cfg)
    print("final loss", history[-1])
