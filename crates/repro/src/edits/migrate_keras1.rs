//! Edit action: Keras 1 APIs that Keras 2.15, the version the reports state, refuses
//! (`border_mode=`, `nb_epoch=`, `keras.layers.core`, `np_utils`, an optimizer's `decay=`)
//! moved to their Keras 2 names. What Keras 2.15 still runs is left as it is, even where it
//! reads it differently from Keras 1 (`Convolution2D(32, 3, 3)` is a 3×3 kernel there, a
//! stride of 3 here): the reports' outputs come from Keras 2.15 running that code. Left
//! alone too where the report's own output is about the old API.

use std::sync::LazyLock;

use super::code::{Rewrite, re, rewrite};
use regex::Regex;

/// A Keras 1 API: its pattern, its Keras 2 replacement, how the edit is described, and
/// the text whose presence in the report's output makes the old API the bug itself.
struct Keras1 {
    rewrite: Rewrite,
    reported_as: &'static str,
}

fn rule(pattern: &str, replacement: &'static str, what: &'static str, reported_as: &'static str) -> Keras1 {
    Keras1 {
        rewrite: (re(pattern), replacement, what),
        reported_as,
    }
}

/// The optimizers Keras 2.11+ rewrote; their legacy versions still take `decay=`.
const OPTIMIZERS: &str = "SGD|Adam|RMSprop|Adagrad|Adadelta|Adamax|Nadam";

/// A keyword argument Keras 2 renamed (never a variable of the same name).
fn keyword(old: &'static str, replacement: &'static str, what: &'static str) -> Keras1 {
    rule(&format!(r"([(,]\s*){old}(\s*=[^=])"), replacement, what, old)
}

static RULES: LazyLock<Vec<Keras1>> = LazyLock::new(|| {
    vec![
        rule(
            r"\b((?:tensorflow\.)?keras\.layers)\.(?:core|convolutional|pooling|recurrent|embeddings|normalization|advanced_activations|noise|local|wrappers)\b",
            "$1",
            "keras.layers.<module> → keras.layers",
            "No module named 'keras.layers.",
        ),
        rule(
            r"\bfrom\s+((?:tensorflow\.)?keras)\.utils\s+import\s+np_utils\b",
            "from $1 import utils as np_utils",
            "keras.utils.np_utils → keras.utils",
            "np_utils",
        ),
        rule(
            r"\b((?:tensorflow\.)?keras\.utils)\.np_utils\b",
            "$1",
            "keras.utils.np_utils → keras.utils",
            "np_utils",
        ),
        keyword("border_mode", "${1}padding$2", "border_mode= → padding="),
        keyword("subsample", "${1}strides$2", "subsample= → strides="),
        keyword("nb_epoch", "${1}epochs$2", "nb_epoch= → epochs="),
        keyword("nb_filter", "${1}filters$2", "nb_filter= → filters="),
        keyword("filter_length", "${1}kernel_size$2", "filter_length= → kernel_size="),
        keyword("pool_length", "${1}pool_size$2", "pool_length= → pool_size="),
        keyword(
            "W_regularizer",
            "${1}kernel_regularizer$2",
            "W_regularizer= → kernel_regularizer=",
        ),
        keyword(
            "b_regularizer",
            "${1}bias_regularizer$2",
            "b_regularizer= → bias_regularizer=",
        ),
        keyword(
            "W_constraint",
            "${1}kernel_constraint$2",
            "W_constraint= → kernel_constraint=",
        ),
        keyword(
            "b_constraint",
            "${1}bias_constraint$2",
            "b_constraint= → bias_constraint=",
        ),
        keyword("dropout_W", "${1}dropout$2", "dropout_W= → dropout="),
        keyword(
            "dropout_U",
            "${1}recurrent_dropout$2",
            "dropout_U= → recurrent_dropout=",
        ),
        // `init=` is a common parameter name: only a Keras initializer's name is moved.
        rule(
            r#"([(,]\s*)init(\s*=\s*['"])"#,
            "${1}kernel_initializer$2",
            "init= → kernel_initializer=",
            "'init'",
        ),
        rule(
            r"(?m)^([ \t]*)(tf\.python\.control_flow_ops\s*=.*)$",
            "${1}pass  # a Keras 1 workaround TensorFlow 2 has no module for: $2",
            "tf.python.control_flow_ops workaround dropped",
            "control_flow_ops",
        ),
        rule(
            r"\bDense\(\s*output_dim\s*=",
            "Dense(units=",
            "Dense(output_dim=) → Dense(units=)",
            "output_dim",
        ),
        // Theano's and TensorFlow's orderings are named by the data's layout now.
        keyword("dim_ordering", "${1}data_format$2", "dim_ordering= → data_format="),
        rule(
            r"\bset_image_dim_ordering\(",
            "set_image_data_format(",
            "set_image_dim_ordering → set_image_data_format",
            "set_image_dim_ordering",
        ),
        rule(
            r#"(data_format\s*(?:=|\()\s*)(['"])th['"]"#,
            "${1}${2}channels_first$2",
            "'th' → 'channels_first'",
            "dim_ordering",
        ),
        rule(
            r#"(data_format\s*(?:=|\()\s*)(['"])tf['"]"#,
            "${1}${2}channels_last$2",
            "'tf' → 'channels_last'",
            "dim_ordering",
        ),
        rule(
            r"\bimage_dim_ordering\(\)",
            "image_data_format()",
            "image_dim_ordering() → image_data_format()",
            "image_dim_ordering",
        ),
    ]
});

/// `decay=` moves an optimizer to its legacy version (the new ones refuse the keyword).
static LEGACY_OPTIMIZERS: LazyLock<[Keras1; 2]> = LazyLock::new(|| {
    [
        rule(
            &format!(r"\boptimizers\.({OPTIMIZERS})\("),
            "optimizers.legacy.$1(",
            "optimizers.X(decay=) → optimizers.legacy.X",
            "decay is deprecated",
        ),
        rule(
            &format!(r"\bfrom\s+((?:tensorflow\.)?keras\.optimizers)\s+import\s+((?:{OPTIMIZERS})\b)"),
            "from $1.legacy import $2",
            "optimizers.X(decay=) → optimizers.legacy.X",
            "decay is deprecated",
        ),
    ]
});

/// Moves `code`'s Keras 1 APIs to Keras 2 unless `observed` (the report's output) names the
/// old API: then its removal is the bug.
pub(crate) fn migrate_keras1(code: &mut String, observed: &str) -> Option<String> {
    static DECAY: LazyLock<Regex> = LazyLock::new(|| re(r"\bdecay\s*=[^=]"));
    // Keras code, even a snippet whose imports are still to be added (`model.add(...)`).
    if !["keras", "Keras", "Sequential(", ".add("]
        .iter()
        .any(|w| code.contains(w))
    {
        return None;
    }
    let legacy: &[Keras1] = if DECAY.is_match(code) {
        &LEGACY_OPTIMIZERS[..]
    } else {
        &[]
    };
    let rules = RULES
        .iter()
        .chain(legacy)
        .filter(|r| !observed.contains(r.reported_as))
        .map(|r| &r.rewrite);
    let mut done = rewrite(code, rules);
    done.dedup();
    (!done.is_empty()).then(|| format!("moved Keras 1 APIs to Keras 2: {}", done.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keras1_code_reads_as_keras2() {
        let mut code = "import tensorflow as tf\ntf.python.control_flow_ops = tf\nfrom keras.layers.core import Dense, Flatten\nfrom keras.layers.convolutional import Convolution2D\nfrom keras.utils import np_utils\nfrom keras.optimizers import SGD\nmodel.add(Convolution2D(32, 3, 3, border_mode='valid', input_shape=(1, 28, 28)))\nmodel.add(Convolution2D(nb_filters, kernel[0], kernel[1]))\nmodel.add(Dense(output_dim=10, init='uniform', W_regularizer=l2(0.01)))\nsgd = SGD(lr=0.1, decay=1e-6)\nnb_epoch = 2\nmodel.fit(x, y, nb_epoch=nb_epoch)\ny = np_utils.to_categorical(y, 10)\nK.set_image_dim_ordering('th')\np = MaxPooling2D((2, 2), dim_ordering=\"tf\")\n".to_owned();
        let edit = migrate_keras1(
            &mut code,
            "ValueError: Negative dimension size caused by subtracting 3 from 1",
        )
        .unwrap();
        assert_eq!(
            code,
            "import tensorflow as tf\npass  # a Keras 1 workaround TensorFlow 2 has no module for: tf.python.control_flow_ops = tf\nfrom keras.layers import Dense, Flatten\nfrom keras.layers import Convolution2D\nfrom keras import utils as np_utils\nfrom keras.optimizers.legacy import SGD\nmodel.add(Convolution2D(32, 3, 3, padding='valid', input_shape=(1, 28, 28)))\nmodel.add(Convolution2D(nb_filters, kernel[0], kernel[1]))\nmodel.add(Dense(units=10, kernel_initializer='uniform', kernel_regularizer=l2(0.01)))\nsgd = SGD(lr=0.1, decay=1e-6)\nnb_epoch = 2\nmodel.fit(x, y, epochs=nb_epoch)\ny = np_utils.to_categorical(y, 10)\nK.set_image_data_format('channels_first')\np = MaxPooling2D((2, 2), data_format=\"channels_last\")\n"
        );
        assert!(edit.contains("border_mode= → padding="), "{edit}");
        assert!(!edit.contains("Convolution2D"), "{edit}");
    }

    #[test]
    fn an_old_api_the_report_is_about_stays() {
        let original = "import keras\nmodel.add(keras.layers.Conv2D(8, (3, 3), border_mode='same'))\nmodel.fit(x, y, nb_epoch=3)\n";
        let mut code = original.to_owned();
        let observed = "TypeError: ('Keyword argument not understood:', 'border_mode')";
        let edit = migrate_keras1(&mut code, observed).unwrap();
        assert!(
            code.contains("border_mode='same'") && code.contains("epochs=3"),
            "{code}"
        );
        assert!(!edit.contains("border_mode"), "{edit}");
    }

    #[test]
    fn code_without_keras_or_keras1_apis_is_left_alone() {
        let mut torch = "def f(init='x', subsample=2):\n    return init\n".to_owned();
        assert!(migrate_keras1(&mut torch, "").is_none());
        let mut keras2 = "from tensorflow import keras\nm.add(keras.layers.Conv2D(8, (3, 3), padding='same'))\nopt = keras.optimizers.Adam(learning_rate=0.1)\n".to_owned();
        assert!(migrate_keras1(&mut keras2, "").is_none());
        // `decay` elsewhere than an optimizer of Keras 1's names changes nothing.
        let mut schedule =
            "import keras\nlr = keras.optimizers.schedules.ExponentialDecay(0.1, 100, 0.9)\nweight_decay = 0.1\n"
                .to_owned();
        assert!(migrate_keras1(&mut schedule, "").is_none());
    }
}
