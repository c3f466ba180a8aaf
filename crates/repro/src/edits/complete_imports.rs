//! Edit action: the usual import for every well-known name (`np`, `torch`, `DataLoader`)
//! a script uses without binding it.

use std::sync::LazyLock;

use regex::Regex;

use super::code::{add_imports, defines, re, strip_strings};

/// Names the reports' snippets use without importing, and their usual import (Keras's
/// layers from `tensorflow.keras`, the same package as `keras` in TensorFlow 2.15).
const IMPORTS: &[(&str, &str)] = &[
    ("np", "import numpy as np"),
    ("numpy", "import numpy"),
    ("pd", "import pandas as pd"),
    ("torch", "import torch"),
    ("nn", "import torch.nn as nn"),
    ("F", "import torch.nn.functional as F"),
    ("optim", "import torch.optim as optim"),
    ("DataLoader", "from torch.utils.data import DataLoader"),
    ("TensorDataset", "from torch.utils.data import TensorDataset"),
    ("tf", "import tensorflow as tf"),
    ("keras", "from tensorflow import keras"),
    ("layers", "from tensorflow.keras import layers"),
    ("Sequential", "from tensorflow.keras.models import Sequential"),
    ("Dense", "from tensorflow.keras.layers import Dense"),
    ("Conv1D", "from tensorflow.keras.layers import Conv1D"),
    ("Conv2D", "from tensorflow.keras.layers import Conv2D"),
    ("Conv3D", "from tensorflow.keras.layers import Conv3D"),
    ("Convolution1D", "from tensorflow.keras.layers import Convolution1D"),
    ("Convolution2D", "from tensorflow.keras.layers import Convolution2D"),
    ("MaxPooling1D", "from tensorflow.keras.layers import MaxPooling1D"),
    ("MaxPooling2D", "from tensorflow.keras.layers import MaxPooling2D"),
    (
        "AveragePooling2D",
        "from tensorflow.keras.layers import AveragePooling2D",
    ),
    (
        "GlobalAveragePooling2D",
        "from tensorflow.keras.layers import GlobalAveragePooling2D",
    ),
    ("Flatten", "from tensorflow.keras.layers import Flatten"),
    ("Dropout", "from tensorflow.keras.layers import Dropout"),
    ("Activation", "from tensorflow.keras.layers import Activation"),
    (
        "BatchNormalization",
        "from tensorflow.keras.layers import BatchNormalization",
    ),
    ("LSTM", "from tensorflow.keras.layers import LSTM"),
    ("GRU", "from tensorflow.keras.layers import GRU"),
    ("SimpleRNN", "from tensorflow.keras.layers import SimpleRNN"),
    ("Embedding", "from tensorflow.keras.layers import Embedding"),
    ("Input", "from tensorflow.keras.layers import Input"),
    ("Reshape", "from tensorflow.keras.layers import Reshape"),
    ("LeakyReLU", "from tensorflow.keras.layers import LeakyReLU"),
    ("Concatenate", "from tensorflow.keras.layers import Concatenate"),
    ("Bidirectional", "from tensorflow.keras.layers import Bidirectional"),
    ("TimeDistributed", "from tensorflow.keras.layers import TimeDistributed"),
    ("to_categorical", "from tensorflow.keras.utils import to_categorical"),
    ("EarlyStopping", "from tensorflow.keras.callbacks import EarlyStopping"),
    (
        "ReduceLROnPlateau",
        "from tensorflow.keras.callbacks import ReduceLROnPlateau",
    ),
    ("plt", "import matplotlib.pyplot as plt"),
    ("tqdm", "from tqdm import tqdm"),
    ("Image", "from PIL import Image"),
    ("sns", "import seaborn as sns"),
    (
        "train_test_split",
        "from sklearn.model_selection import train_test_split",
    ),
    ("StandardScaler", "from sklearn.preprocessing import StandardScaler"),
    ("jnp", "import jax.numpy as jnp"),
    ("jax", "import jax"),
    ("math", "import math"),
    ("random", "import random"),
    ("os", "import os"),
    ("sys", "import sys"),
    ("time", "import time"),
    ("json", "import json"),
    ("copy", "import copy"),
    ("pickle", "import pickle"),
    ("io", "import io"),
    ("warnings", "import warnings"),
];

pub(crate) fn import_for(name: &str) -> Option<&'static str> {
    IMPORTS.iter().find(|(n, _)| *n == name).map(|(_, line)| *line)
}

/// The public names of the framework modules snippets import from (`name<TAB>module`),
/// written by `tools/framework_names.py` from the `--with dl` environment.
const FRAMEWORK_NAMES: &str = include_str!("../../data/framework_names.tsv");

/// The framework a module belongs to: `torchvision` goes with `torch`.
fn framework_of(module: &str) -> &str {
    let top = module.split('.').next().unwrap_or(module);
    if top == "torchvision" { "torch" } else { top }
}

/// The import of a framework's public name (`Multiply`, `MinMaxScaler`, `confusion_matrix`)
/// that `code` uses undefined, from the framework the code uses where two have it
/// (`Dropout` is Keras's in a Keras script and that of `torch.nn` in a `torch` one).
pub(crate) fn framework_import(name: &str, code: &str) -> Option<String> {
    static USES: LazyLock<[(&str, Regex); 3]> = LazyLock::new(|| {
        [
            ("tensorflow", re(r"\b(?:keras|tensorflow|tf\.)")),
            ("torch", re(r"\b(?:torch|torchvision|nn\.Module)\b")),
            ("sklearn", re(r"\bsklearn\b")),
        ]
    });
    let modules: Vec<&str> = FRAMEWORK_NAMES
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .filter(|(n, _)| *n == name)
        .map(|(_, module)| module)
        .collect();
    let used = |module: &str| {
        USES.iter()
            .any(|(framework, pattern)| *framework == framework_of(module) && pattern.is_match(code))
    };
    let module = modules.iter().copied().find(|m| used(m)).or(modules.first().copied())?;
    Some(format!("from {module} import {name}"))
}

/// Names used as a module or callable (`np.`, `DataLoader(`) that nothing binds.
pub(super) fn undefined_known_names(code: &str) -> Vec<&'static str> {
    // Import statements name modules without using them (`import torch.nn as nn`).
    let body: String = strip_strings(code)
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            !(l.starts_with("import ") || l.starts_with("from "))
        })
        .collect::<Vec<_>>()
        .join("\n");
    IMPORTS
        .iter()
        .filter(|(name, _)| {
            let used = Regex::new(&format!(r"(?m)(?:^|[^\w.]){}\s*[.(]", regex::escape(name)))
                .is_ok_and(|r| r.is_match(&body));
            used && !defines(code, name)
        })
        .map(|(name, _)| *name)
        .collect()
}

/// Adds the usual import for every known name the code uses without binding.
pub(crate) fn complete_imports(code: &mut String) -> Option<String> {
    let names = undefined_known_names(code);
    if names.is_empty() {
        return None;
    }
    let lines: Vec<&str> = names.iter().filter_map(|n| import_for(n)).collect();
    add_imports(code, &lines);
    Some(format!("added missing imports: {}", lines.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frameworks_public_name_is_imported_from_the_framework_the_script_uses() {
        let keras = "from tensorflow import keras\nmodel.add(Dropout(0.2))\n";
        let torch = "import torch\nclass Net(nn.Module):\n    pass\nDropout(0.2)\n";
        assert_eq!(
            framework_import("Dropout", keras).as_deref(),
            Some("from tensorflow.keras.layers import Dropout")
        );
        assert_eq!(
            framework_import("Dropout", torch).as_deref(),
            Some("from torch.nn import Dropout")
        );
        assert_eq!(
            framework_import("Multiply", keras).as_deref(),
            Some("from tensorflow.keras.layers import Multiply")
        );
        assert_eq!(
            framework_import("MinMaxScaler", "x = 1\n").as_deref(),
            Some("from sklearn.preprocessing import MinMaxScaler")
        );
        assert_eq!(framework_import("my_model", keras), None);
        assert_eq!(
            framework_import("shuffle", keras),
            None,
            "one-word lower-case names are not listed"
        );
    }

    #[test]
    fn the_framework_table_names_each_public_name_once_per_framework() {
        let mut seen = std::collections::BTreeSet::new();
        for line in FRAMEWORK_NAMES.lines() {
            let (name, module) = line
                .split_once('\t')
                .unwrap_or_else(|| panic!("not `name<TAB>module`: {line}"));
            assert!(
                name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.starts_with('_'),
                "{line}"
            );
            assert!(
                ["tensorflow", "torch", "sklearn"].contains(&framework_of(module)),
                "{line}"
            );
            assert!(seen.insert((framework_of(module), name)), "listed twice: {line}");
        }
        assert!(seen.len() > 1000, "{} names", seen.len());
    }

    #[test]
    fn keras_layers_get_their_import_and_torch_modules_do_not() {
        let mut code = "model = Sequential()\nmodel.add(Conv2D(8, (3, 3)))\nmodel.add(Dropout(0.2))\n".to_owned();
        let edit = complete_imports(&mut code).unwrap();
        assert!(code.starts_with("from tensorflow.keras.models import Sequential\nfrom tensorflow.keras.layers import Conv2D\nfrom tensorflow.keras.layers import Dropout\n"), "{code}");
        assert!(edit.contains("Conv2D") && !edit.contains("torch"), "{edit}");
        let mut torch = "import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        self.drop = nn.Dropout(0.1)\n        self.rnn = nn.LSTM(4, 8)\n".to_owned();
        assert!(complete_imports(&mut torch).is_none(), "{torch}");
        // `import torch.nn as nn` binds `nn` only: a script that also calls `torch.` needs `import torch`.
        let mut seeded = "import torch.nn as nn\ntorch.manual_seed(0)\nlayer = nn.Linear(2, 2)\n".to_owned();
        assert_eq!(
            complete_imports(&mut seeded).unwrap(),
            "added missing imports: import torch"
        );
    }
}
