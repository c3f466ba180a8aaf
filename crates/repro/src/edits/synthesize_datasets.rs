//! Edit action: Keras's built-in datasets (`mnist.load_data()`, `cifar10.load_data()`, ...),
//! which download on first use and find no network in the sandbox, replaced with synthetic
//! arrays of the same shapes and dtypes, fewer rows, and labels a model can learn (each
//! label brightens its own band of the input), so a correct model trains and a model that cannot
//! learn still shows it. Left alone when the report is about the download.

use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::code::{define_helper_once, re};

/// Rows of the synthetic train and test splits: enough for a few batches, seconds to train.
const ROWS: (usize, usize) = (2000, 400);

/// One of Keras's datasets: its inputs' shape per row and dtype, its classes (0 for a
/// regression target) and its labels' shape per row.
struct Dataset {
    name: &'static str,
    input: &'static str,
    dtype: &'static str,
    classes: usize,
    label: &'static str,
}

const DATASETS: [Dataset; 7] = [
    Dataset {
        name: "mnist",
        input: "(28, 28)",
        dtype: "uint8",
        classes: 10,
        label: "()",
    },
    Dataset {
        name: "fashion_mnist",
        input: "(28, 28)",
        dtype: "uint8",
        classes: 10,
        label: "()",
    },
    Dataset {
        name: "cifar10",
        input: "(32, 32, 3)",
        dtype: "uint8",
        classes: 10,
        label: "(1,)",
    },
    Dataset {
        name: "cifar100",
        input: "(32, 32, 3)",
        dtype: "uint8",
        classes: 100,
        label: "(1,)",
    },
    Dataset {
        name: "boston_housing",
        input: "(13,)",
        dtype: "float64",
        classes: 0,
        label: "()",
    },
    Dataset {
        name: "imdb",
        input: "None",
        dtype: "sequences",
        classes: 2,
        label: "()",
    },
    Dataset {
        name: "reuters",
        input: "None",
        dtype: "sequences",
        classes: 46,
        label: "()",
    },
];

const HELPER_NAME: &str = "synthetic_dataset";

/// The function the replaced calls use, defined once after the imports.
const HELPER: &str = r#"def synthetic_dataset(rows, shape, dtype, classes, label_shape):
    """Stands in for a dataset download (the sandbox has no network): inputs of the
    dataset's shape and dtype in which each label brightens its own band of values (or
    draws its own band of word ids), so that a model can learn them."""
    rng = np.random.default_rng(0)

    def split(n):
        y = rng.integers(0, max(classes, 1), n)
        if dtype == "sequences":
            x = np.empty(n, dtype=object)
            x[:] = [list(rng.integers(1 + 900 * k // classes, 101 + 900 * k // classes, rng.integers(20, 200))) for k in y]
        elif dtype == "uint8":
            x = rng.integers(0, 96, (n, int(np.prod(shape)))).astype(np.uint8)
            width = x.shape[1] // classes
            for i, k in enumerate(y):
                x[i, k * width:(k + 1) * width] += 128
            x = x.reshape(n, *shape)
        else:
            x = rng.standard_normal((n, *shape)).astype(dtype)
            y = 22.0 + 40.0 * x.reshape(n, -1).mean(axis=1)
        if classes:
            y = y.astype(np.int64 if classes > 255 else np.uint8)
        return x, y.reshape(n, *label_shape)

    return split(rows[0]), split(rows[1])
"#;

/// Replaces `code`'s Keras dataset downloads with synthetic data unless `observed` (the
/// report's output) is about the download itself.
pub(crate) fn synthesize_datasets(code: &mut String, observed: &str) -> Option<String> {
    static LOAD: LazyLock<Regex> = LazyLock::new(|| {
        let names = DATASETS.iter().map(|d| d.name).collect::<Vec<_>>().join("|");
        re(&format!(r"\b(?:\w+\.)*({names})\.load_data\([^()]*\)"))
    });
    if ["fetch failure", "storage.googleapis", "load_data"]
        .iter()
        .any(|w| observed.contains(w))
    {
        return None;
    }
    let mut replaced = Vec::new();
    let new = LOAD.replace_all(code, |c: &Captures<'_>| {
        let d = DATASETS
            .iter()
            .find(|d| d.name == &c[1])
            .expect("the pattern names a dataset");
        replaced.push(d.name);
        let dtype = d.dtype;
        format!(
            "{HELPER_NAME}({ROWS:?}, {}, {dtype:?}, classes={}, label_shape={})",
            d.input, d.classes, d.label
        )
    });
    if replaced.is_empty() {
        return None;
    }
    *code = new.into_owned();
    define_helper_once(code, HELPER_NAME, HELPER);
    replaced.dedup();
    Some(format!(
        "replaced the download of Keras's {} with synthetic data of its shapes ({} train, {} test rows; learnable labels)",
        replaced.join(", "),
        ROWS.0,
        ROWS.1
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn downloads_become_synthetic_data_of_the_datasets_shapes() {
        let mut code = "from keras.datasets import mnist\nimport tensorflow as tf\n(x, y), (xt, yt) = mnist.load_data()\n(a, b), _ = tf.keras.datasets.cifar10.load_data()\n".to_owned();
        let edit = synthesize_datasets(&mut code, "ValueError: Negative dimension size").unwrap();
        assert!(edit.contains("mnist, cifar10"), "{edit}");
        assert!(
            code.contains(
                "(x, y), (xt, yt) = synthetic_dataset((2000, 400), (28, 28), \"uint8\", classes=10, label_shape=())"
            ),
            "{code}"
        );
        assert!(
            code.contains("synthetic_dataset((2000, 400), (32, 32, 3), \"uint8\", classes=10, label_shape=(1,))"),
            "{code}"
        );
        assert_eq!(code.matches("def synthetic_dataset").count(), 1, "{code}");
        let helper = code.find("def synthetic_dataset").unwrap();
        assert!(code.find("import tensorflow").unwrap() < helper && helper < code.find("(x, y)").unwrap());
    }

    #[test]
    fn a_report_about_the_download_keeps_it() {
        let original = "(x, y), _ = mnist.load_data()\n";
        let mut code = original.to_owned();
        assert!(
            synthesize_datasets(
                &mut code,
                "Exception: URL fetch failure on https://storage.googleapis.com/x"
            )
            .is_none()
        );
        assert_eq!(code, original);
        assert!(synthesize_datasets(&mut "x = load_data()\n".to_owned(), "").is_none());
    }
}
