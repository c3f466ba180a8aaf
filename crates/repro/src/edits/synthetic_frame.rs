//! A stand-in for a table a script reads from a file that is not here (`pd.read_csv`): the
//! columns the code names, each with values of the kind its use calls for, and labels and
//! targets that follow the feature columns, so that a model can learn them and a bug that
//! keeps it from learning shows as a difference (random labels would look the same with
//! the bug as without it).
//!
//! Columns come from the read's own `names=` (a list, or a variable bound to one), else
//! from the code's uses of them (`df["age"]`, `df[["a", "b"]]`, `drop(columns=[...])`,
//! `drop("y", axis=1)`, `usecols=`). Roles:
//! - **text**: a name such as `review`, `text` or `title`, or one read through `.str`;
//! - **label** (0/1 classes, following the features): a name such as `label`, `class`,
//!   `is_fraud`; or, in a script that classifies (a cross-entropy loss, accuracy, one-hot),
//!   the target: the column the code drops from the features and selects alone, or one
//!   named `y`, `target` or `outcome`;
//! - **target** (a positive continuous value following the features): the target of a
//!   script that does not classify;
//! - **feature**: every other column, standard normal.

use std::sync::LazyLock;

use regex::Regex;

use super::code::re;

/// The name of the helper function the script gets, defined once at its top.
pub(crate) const HELPER: &str = "_replayground_frame";

/// The helper's definition: its own imports, so it can stand before the script's.
pub(crate) fn helper_definition() -> String {
    format!(
        r#"def {HELPER}(rows, columns):
    """A synthetic table standing in for a data file that is not here."""
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(0)
    features = [name for name, role in columns if role == "feature"] or ["f0"]
    x = rng.standard_normal((rows, len(features)))
    signal = x @ np.linspace(1.0, -0.5, len(features))
    words = ["good", "bad", "great", "boring", "plot", "actor", "slow", "fun", "film", "story"]
    data = {{}}
    for name, role in columns:
        if role == "label":
            data[name] = (signal > 0).astype(int)
        elif role == "target":
            data[name] = np.round(20 + 8 * signal, 2)
        elif role == "text":
            data[name] = [" ".join(rng.choice(words, 8)) for _ in range(rows)]
        else:
            data[name] = x[:, features.index(name)]
    return pd.DataFrame(data)

"#
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Feature,
    Label,
    Target,
    Text,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Self::Feature => "feature",
            Self::Label => "label",
            Self::Target => "target",
            Self::Text => "text",
        }
    }
}

/// The call that stands in for the read `call` (the whole `pd.read_csv(...)` text) in
/// `code`; `None` when neither the read nor the code names a column (the caller keeps its
/// plain numeric frame then). Where the code names no feature (it drops the label and
/// keeps the rest), the table gets `features` unnamed ones, `f0`, `f1`, …, first.
pub(crate) fn frame_call(code: &str, call: &str, rows: usize, features: usize) -> Option<String> {
    let columns = named_in_call(code, call).unwrap_or_else(|| used_columns(code));
    if columns.is_empty() {
        return None;
    }
    let target = dropped_and_selected(code, &columns);
    let classifies = CLASSIFIES.is_match(code);
    let mut listed: Vec<String> = columns
        .iter()
        .map(|name| {
            let role = if is_text(code, name) {
                Role::Text
            } else if LABEL_NAME.is_match(name) {
                Role::Label
            } else if target.as_deref() == Some(name.as_str()) || TARGET_NAME.is_match(name) {
                if classifies { Role::Label } else { Role::Target }
            } else {
                Role::Feature
            };
            format!("({name:?}, {:?})", role.as_str())
        })
        .collect();
    let feature = format!("{:?})", Role::Feature.as_str());
    if !listed.iter().any(|column| column.ends_with(&feature)) {
        let unnamed = (0..features).map(|i| format!("(\"f{i}\", {feature}"));
        listed.splice(0..0, unnamed);
    }
    Some(format!("{HELPER}({rows}, [{}])", listed.join(", ")))
}

/// Names only a class takes.
static LABEL_NAME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:labels?|class(?:es)?|category|is_\w+|has_\w+|survived|churn|fraud|spam|species|sentiment|diagnosis|default|clicked|fault)$",
    )
});

/// Names of what a model predicts: a class or a number, as the script's loss tells.
static TARGET_NAME: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)^(?:y|targets?|outcome)$"));

static TEXT_NAME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?:text|review|sentence|comment|title|message|tweet|content|body|description|document|question|answer|summary|headline)s?$",
    )
});

/// A loss, metric or encoding only classification uses.
static CLASSIFIES: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)crossentropy|CrossEntropy|BCELoss|BCEWithLogits|NLLLoss|to_categorical|one_hot|accuracy|LabelEncoder")
});

/// Quoted names in a list's text (`"a", 'b'`).
fn quoted(list: &str) -> Vec<String> {
    static QUOTED: LazyLock<Regex> = LazyLock::new(|| re(r#"['"]([^'"\n]+)['"]"#));
    QUOTED.captures_iter(list).map(|c| c[1].to_owned()).collect()
}

/// The read's `names=[...]`, or `names=VAR` with `VAR = [...]` in the code.
fn named_in_call(code: &str, call: &str) -> Option<Vec<String>> {
    static LITERAL: LazyLock<Regex> = LazyLock::new(|| re(r"\bnames\s*=\s*\[([^\]]*)\]"));
    static VARIABLE: LazyLock<Regex> = LazyLock::new(|| re(r"\bnames\s*=\s*([A-Za-z_]\w*)"));
    if let Some(c) = LITERAL.captures(call) {
        return Some(quoted(&c[1])).filter(|n| !n.is_empty());
    }
    let variable = VARIABLE.captures(call)?;
    let binding = re(&format!(
        r"(?s)(?:^|\n)\s*{}\s*=\s*\[(.*?)\]",
        regex::escape(&variable[1])
    ));
    Some(quoted(&binding.captures(code)?[1])).filter(|n| !n.is_empty())
}

/// The columns the code reads or drops by name, in order of first use.
fn used_columns(code: &str) -> Vec<String> {
    // A subscript: after a name, a call or another subscript (not `metrics=["accuracy"]`).
    static ONE: LazyLock<Regex> = LazyLock::new(|| re(r#"(?:(\w+)|[)\]])\[\s*['"]([A-Za-z_][\w ]*)['"]\s*\]"#));
    // Dictionaries a training script reads by key that are not the table: a Keras
    // `history.history["loss"]`, the environment, settings, logs.
    static NOT_A_TABLE: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)^(?:\w*history|environ|kwargs|args|config|cfg|params|hparams|settings|results?|metrics|logs|state_dict|checkpoint)$",
        )
    });
    static LISTS: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?:\[\s*\[([^\[\]]*)\]\s*\]|\b(?:columns|usecols)\s*=\s*\[([^\[\]]*)\]|\.drop\(\s*\[([^\[\]]*)\])")
    });
    static DROP_ONE: LazyLock<Regex> = LazyLock::new(|| re(r#"\.drop\(\s*['"]([^'"\n]+)['"]"#));
    let mut found: Vec<(usize, String)> = Vec::new();
    for c in ONE.captures_iter(code) {
        if c.get(1).is_some_and(|base| NOT_A_TABLE.is_match(base.as_str())) {
            continue;
        }
        found.push((c.get(0).map_or(0, |m| m.start()), c[2].to_owned()));
    }
    for c in LISTS.captures_iter(code) {
        let start = c.get(0).map_or(0, |m| m.start());
        let list = c
            .get(1)
            .or_else(|| c.get(2))
            .or_else(|| c.get(3))
            .map_or("", |m| m.as_str());
        found.extend(quoted(list).into_iter().map(|name| (start, name)));
    }
    for c in DROP_ONE.captures_iter(code) {
        found.push((c.get(0).map_or(0, |m| m.start()), c[1].to_owned()));
    }
    found.sort_by_key(|(at, _)| *at);
    let mut names: Vec<String> = Vec::new();
    for (_, name) in found {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The column the code both drops (from the features) and selects alone: the target.
fn dropped_and_selected(code: &str, columns: &[String]) -> Option<String> {
    columns.iter().find_map(|name| {
        let quoted = format!(r#"['"]{}['"]"#, regex::escape(name));
        let dropped = re(&format!(
            r"\.drop\((?:[^()]*\b(?:columns|labels)\s*=\s*)?\[?\s*{quoted}"
        ))
        .is_match(code);
        let selected = re(&format!(r"\[\s*{quoted}\s*\]")).is_match(code);
        (dropped && selected).then(|| name.clone())
    })
}

/// Whether the code reads `name` as text: its name says so, or it goes through `.str`.
fn is_text(code: &str, name: &str) -> bool {
    TEXT_NAME.is_match(name) || code.contains(&format!("[{name:?}].str.")) || code.contains(&format!("['{name}'].str."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reads_names_or_the_codes_uses_give_the_columns_and_their_roles() {
        let wine = "cols = [\"Class\", \"Alcohol\",\n        \"Hue\"]\ndf = pd.read_csv(\"wine.data\", header=None, names=cols)\nX = df.drop(columns=[\"Class\"]).values\n";
        let call = "pd.read_csv(\"wine.data\", header=None, names=cols)";
        assert_eq!(
            frame_call(wine, call, 50, 4).unwrap(),
            r#"_replayground_frame(50, [("Class", "label"), ("Alcohol", "feature"), ("Hue", "feature")])"#
        );
        let fraud = "df = pd.read_csv(\"t.csv\")\nX = df.drop(columns=[\"is_fraud\"]).values\ny = df[\"is_fraud\"].values\nmodel.compile(loss=\"binary_crossentropy\", metrics=[\"accuracy\"])\n";
        assert_eq!(
            frame_call(fraud, "pd.read_csv(\"t.csv\")", 100, 2).unwrap(),
            r#"_replayground_frame(100, [("f0", "feature"), ("f1", "feature"), ("is_fraud", "label")])"#,
            "the features the code keeps by dropping the label are the report's count of unnamed ones"
        );
        // A Keras history is read by key too, but it is not the table.
        let history =
            format!("{fraud}h = model.fit(X, y)\nprint(h.history[\"loss\"][-1], history.history['val_accuracy'])\n");
        assert_eq!(
            frame_call(&history, "pd.read_csv(\"t.csv\")", 100, 1).unwrap(),
            r#"_replayground_frame(100, [("f0", "feature"), ("is_fraud", "label")])"#
        );
        // The target of a regression is continuous; the features keep their names.
        let prices = "df = pd.read_csv(\"h.csv\")\nX = df.drop(\"medv\", axis=1)[[\"rm\", \"age\"]]\ny = df[\"medv\"]\nmodel.compile(loss=\"mse\")\n";
        assert_eq!(
            frame_call(prices, "pd.read_csv(\"h.csv\")", 100, 4).unwrap(),
            r#"_replayground_frame(100, [("medv", "target"), ("rm", "feature"), ("age", "feature")])"#
        );
        let reviews = "df = pd.read_csv(\"r.csv\")\nfor text in df[\"review\"]:\n    pass\ny = df[\"stars\"]\n";
        assert_eq!(
            frame_call(reviews, "pd.read_csv(\"r.csv\")", 10, 4).unwrap(),
            r#"_replayground_frame(10, [("review", "text"), ("stars", "feature")])"#
        );
        assert_eq!(
            frame_call(
                "df = pd.read_csv(\"x.csv\")\nprint(df.shape)\n",
                "pd.read_csv(\"x.csv\")",
                10,
                4
            ),
            None
        );
        // `y` is a class or a number, as the loss tells.
        let regression = "df = pd.read_csv(\"d.csv\")\ny = df[\"y\"]\nloss = nn.MSELoss()\n";
        assert_eq!(
            frame_call(regression, "pd.read_csv(\"d.csv\")", 5, 1).unwrap(),
            r#"_replayground_frame(5, [("f0", "feature"), ("y", "target")])"#
        );
        let classes = regression.replace("nn.MSELoss()", "nn.CrossEntropyLoss()");
        assert_eq!(
            frame_call(&classes, "pd.read_csv(\"d.csv\")", 5, 1).unwrap(),
            r#"_replayground_frame(5, [("f0", "feature"), ("y", "label")])"#
        );
    }

    #[test]
    fn the_helper_is_python_that_defines_one_function() {
        let helper = helper_definition();
        assert!(
            helper.starts_with(&format!("def {HELPER}(rows, columns):\n")),
            "{helper}"
        );
        assert!(
            helper.lines().skip(1).all(|l| l.is_empty() || l.starts_with("    ")),
            "{helper}"
        );
        assert!(helper.contains("data = {}"), "the braces are unescaped: {helper}");
    }
}
