//! Edit action: the usual import for every well-known name (`np`, `torch`, `DataLoader`)
//! a script uses without binding it.

use regex::Regex;

use super::code::{add_imports, defines, strip_strings};

/// Names the reports' snippets use without importing, and their usual import.
const IMPORTS: [(&str, &str); 30] = [
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
    ("plt", "import matplotlib.pyplot as plt"),
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

/// Names used as a module or callable (`np.`, `DataLoader(`) that nothing binds.
pub(super) fn undefined_known_names(code: &str) -> Vec<&'static str> {
    IMPORTS
        .iter()
        .filter(|(name, _)| {
            let used = Regex::new(&format!(r"(?m)(?:^|[^\w.]){}\s*[.(]", regex::escape(name)))
                .is_ok_and(|r| r.is_match(&strip_strings(code)));
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
