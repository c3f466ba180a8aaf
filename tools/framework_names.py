"""Writes crates/repro/data/framework_names.tsv: the public names of the framework modules a
bug report's snippet imports from, one `name<TAB>module` per line, first module first.

The reproduction agent imports a name a script uses undefined (`Multiply`, `MinMaxScaler`,
`confusion_matrix`) from the module this table gives; a name no listed module has is left to
the project, synthetic data or the LLM. Regenerate with the `--with dl` environment:

    .tools/dl/bin/python tools/framework_names.py > crates/repro/data/framework_names.tsv
"""
import importlib
import inspect
import os
import sys
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
warnings.simplefilter("ignore")

# In the order a name is looked up: a name two modules of one framework share comes from
# the first; a name two frameworks share (`Dropout`, `Adam`) is listed for each, and the
# agent picks the framework the script uses.
MODULES = [
    "tensorflow.keras.layers",
    "tensorflow.keras.models",
    "tensorflow.keras.optimizers",
    "tensorflow.keras.callbacks",
    "tensorflow.keras.losses",
    "tensorflow.keras.metrics",
    "tensorflow.keras.utils",
    "tensorflow.keras.regularizers",
    "tensorflow.keras.initializers",
    "tensorflow.keras.applications",
    "tensorflow.keras.preprocessing.sequence",
    "tensorflow.keras.preprocessing.text",
    "tensorflow.keras.preprocessing.image",
    "torch.nn",
    "torch.optim",
    "torch.optim.lr_scheduler",
    "torch.utils.data",
    "torchvision.transforms",
    "torchvision.datasets",
    "torchvision.models",
    "sklearn.model_selection",
    "sklearn.preprocessing",
    "sklearn.metrics",
    "sklearn.linear_model",
    "sklearn.svm",
    "sklearn.ensemble",
    "sklearn.tree",
    "sklearn.neighbors",
    "sklearn.naive_bayes",
    "sklearn.datasets",
    "sklearn.decomposition",
    "sklearn.cluster",
    "sklearn.pipeline",
    "sklearn.impute",
    "sklearn.feature_extraction.text",
]


def wanted(name):
    # Class-like names, and function names of two words or more (`to_categorical`):
    # a one-word lower-case name (`shuffle`, `normalize`) is too often the script's own.
    if name.startswith("_"):
        return False
    return any(c.isupper() for c in name) or "_" in name


def main():
    seen = set()
    for module_name in MODULES:
        try:
            module = importlib.import_module(module_name)
        except Exception as e:  # a framework this environment lacks
            print(f"skipping {module_name}: {e}", file=sys.stderr)
            continue
        for name in sorted(dir(module)):
            family = "torch" if module_name.startswith("torch") else module_name.split(".")[0]
            if (family, name) in seen or not wanted(name):
                continue
            value = getattr(module, name, None)
            if inspect.ismodule(value) or not callable(value):
                continue
            seen.add((family, name))
            print(f"{name}\t{module_name}")


if __name__ == "__main__":
    main()
