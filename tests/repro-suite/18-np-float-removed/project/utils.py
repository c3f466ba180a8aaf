import logging
import time
from contextlib import contextmanager

log = logging.getLogger("featurize")


def setup_logging(level=logging.INFO):
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(message)s")


@contextmanager
def timer(name):
    start = time.perf_counter()
    yield
    log.info("%s took %.3fs", name, time.perf_counter() - start)


def format_metrics(metrics):
    return " ".join(f"{k}={v:.4f}" for k, v in sorted(metrics.items()))
