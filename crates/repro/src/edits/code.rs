//! What the edit actions read and change in a script's text: which names it binds,
//! where its imports end, and the data shape a report implies.

use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::Regex;

pub(crate) fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid built-in pattern")
}

/// A rewrite rule: the pattern, its replacement, and how the edit is described.
pub(crate) type Rewrite = (Regex, &'static str, &'static str);

/// Applies each rule whose pattern occurs in `code`; the descriptions of those applied.
pub(crate) fn rewrite<'a>(code: &mut String, rules: impl IntoIterator<Item = &'a Rewrite>) -> Vec<&'static str> {
    let mut done = Vec::new();
    for (pattern, replacement, what) in rules {
        if pattern.is_match(code) {
            *code = pattern.replace_all(code, *replacement).into_owned();
            done.push(*what);
        }
    }
    done
}

/// Whether `name` is bound anywhere in `code` (import, assignment, def, class, loop, with,
/// a parameter).
pub(crate) fn defines(code: &str, name: &str) -> bool {
    binds(code, name, r"\s*")
}

/// Whether `name` is bound at module level (a statement at column 0): what a name that
/// ruff or a `NameError` reports undefined needs, whatever functions take it as a parameter.
pub(crate) fn defines_at_module_level(code: &str, name: &str) -> bool {
    binds(code, name, "")
}

/// Whether the script binds `name` at module level before it reads it: `x = x.reshape(…)`
/// as the first line naming `x` binds it only after reading it, so `x` still needs a
/// definition.
pub(crate) fn bound_before_use(code: &str, name: &str) -> bool {
    defines_at_module_level(code, name) && !reads_itself_first(code, name)
}

/// The binding forms of `name` in statements starting with `indent`; with any indent, a
/// `for` target, an `as` target and a parameter count too. `import torch.nn` binds `torch`;
/// `import torch.nn as nn` binds only `nn`.
fn binds(code: &str, name: &str, indent: &str) -> bool {
    let n = regex::escape(name);
    let mut pattern = format!(
        r"(?m)(?:^{indent}import\s+(?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*{n}(?:\.[\w.]+)?\s*(?:,|#|$)|^{indent}import\s.*\bas\s+{n}\b|^{indent}from\s+\S+\s+import\s.*\b{n}\b|^{indent}(?:{n}|[\w\s,]*,\s*{n}|{n}\s*,[\w\s,]*)\s*(?::[^=]*)?=[^=]|^{indent}(?:async\s+)?def\s+{n}\b|^{indent}class\s+{n}\b|^{indent}for\s+(?:[\w\s,]*\b)?{n}\b[\w\s,]*\s+in\b|^{indent}with\s.*\bas\s+{n}\b"
    );
    if !indent.is_empty() {
        let _ = write!(
            pattern,
            r"|\bfor\s+(?:[\w\s,]*\b)?{n}\b[\w\s,]*\s+in\b|\bas\s+{n}\b|\bdef\s+\w+\([^)]*\b{n}\b"
        );
    }
    pattern.push(')');
    Regex::new(&pattern).is_ok_and(|r| r.is_match(code))
}

/// The code with string literals and comments blanked, so names inside them do not count.
pub(crate) fn strip_strings(code: &str) -> String {
    static STRINGS: LazyLock<Regex> =
        LazyLock::new(|| re(r#"(?s)"""[^"]*"""|'''[^']*'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|\#[^\n]*"#));
    STRINGS.replace_all(code, "\"\"").into_owned()
}

/// Inserts import lines at the top (after a `from __future__` line or a docstring-free start).
pub(crate) fn add_imports(code: &mut String, lines: &[&str]) {
    if lines.is_empty() {
        return;
    }
    let block: String = lines.iter().flat_map(|l| [*l, "\n"]).collect();
    let mut at = 0;
    for line in code.lines() {
        if line.starts_with("from __future__") || line.starts_with("#!") || line.starts_with("# -*-") {
            at += line.len() + 1;
        } else {
            break;
        }
    }
    let at = at.min(code.len());
    code.insert_str(at, &block);
}

/// Byte offset just after the last top-level import line (0 when there is none).
pub(crate) fn after_imports(code: &str) -> usize {
    let mut offset = 0;
    let mut end = 0;
    let mut in_import = false;
    for line in code.split_inclusive('\n') {
        let starts = line.starts_with("import ") || line.starts_with("from ");
        if starts || (in_import && line.starts_with([' ', '\t', ')'])) {
            in_import = starts && line.contains('(') && !line.contains(')') || (in_import && !line.contains(')'));
            end = offset + line.len();
        } else {
            in_import = false;
        }
        offset += line.len();
    }
    end
}

/// `name` as a whole word.
pub(crate) fn word(name: &str) -> Regex {
    re(&format!(r"\b{}\b", regex::escape(name)))
}

/// Byte offset of the top-level statement holding the first use of `name` (outside
/// strings and comments); `None` when nothing uses it.
pub(crate) fn first_use_statement(code: &str, name: &str) -> Option<usize> {
    let word = word(name);
    let mut statement = 0;
    let mut offset = 0;
    let mut depth: i32 = 0;
    let mut in_decorators = false;
    for line in code.split_inclusive('\n') {
        let stripped = strip_strings(line);
        let top_level = depth == 0
            && !line.starts_with([' ', '\t', '\n', '#', ')', ']', '}'])
            && !["else", "elif", "except", "finally"]
                .iter()
                .any(|k| line.starts_with(k));
        // A decorated `def` starts at its first decorator.
        if top_level && !line.trim().is_empty() {
            if !in_decorators {
                statement = offset;
            }
            in_decorators = line.starts_with('@');
        }
        if word.is_match(&stripped) {
            return Some(statement);
        }
        depth += stripped.matches(['(', '[', '{']).count() as i32 - stripped.matches([')', ']', '}']).count() as i32;
        depth = depth.max(0);
        offset += line.len();
    }
    None
}

/// Whether the first top-level line that mentions `name` assigns it from a value that reads
/// it (`x = x.reshape(-1, 28, 28, 1)`, `x_train = x_train / 255.0`): the script then reads
/// the name before anything binds it, though it binds it at module level.
pub(crate) fn reads_itself_first(code: &str, name: &str) -> bool {
    let word = word(name);
    let assignment = re(&format!(r"^{}\s*(?::[^=\n]*)?=[^=]", regex::escape(name)));
    let stripped = strip_strings(code);
    let Some(line) = stripped.lines().find(|l| word.is_match(l)) else {
        return false;
    };
    assignment.is_match(line) && value_reads(line, &word)
}

/// Whether the value of an assignment line (after its first `=`) reads `word`:
/// `x = x.reshape(…)` needs `x` before it can bind it.
pub(crate) fn value_reads(line: &str, word: &Regex) -> bool {
    line.split_once('=').is_some_and(|(_, value)| word.is_match(value))
}

/// Inserts `text` (definitions of `names`) after the imports, or before the first statement
/// that uses one of `names` where that comes first: snippets import in the middle
/// (`dataset = df.values` … `from sklearn import preprocessing`).
pub(crate) fn insert_before_use(code: &mut String, text: &str, names: &[&str]) {
    let at = names
        .iter()
        .filter_map(|n| first_use_statement(code, n))
        .fold(after_imports(code), usize::min);
    let mut block = String::new();
    if at > 0 && !code[..at].ends_with('\n') {
        block.push('\n');
    }
    block.push_str(text);
    code.insert_str(at, &block);
}

pub(crate) fn insert_after_imports(code: &mut String, text: &str) {
    let at = after_imports(code);
    let mut block = String::new();
    if at > 0 && !code[..at].ends_with('\n') {
        block.push('\n');
    }
    block.push_str(text);
    code.insert_str(at, &block);
}

/// Defines `helper` (a function named `name` that replaced calls use) after the imports,
/// unless `code` already defines it.
pub(crate) fn define_helper_once(code: &mut String, name: &str, helper: &str) {
    if !defines(code, name) {
        insert_after_imports(code, &format!("\n\n{helper}\n"));
    }
}

/// The shape [`inferred_shape`] gives a report that states none.
pub(crate) const UNSTATED_SHAPE: [usize; 2] = [100, 4];

/// The data shape the report implies, e.g. "X has shape (100, 3)", else its rows of as many
/// columns as it counts features ("12 numeric features": `(100, 12)`); [`UNSTATED_SHAPE`]
/// otherwise.
pub(crate) fn inferred_shape(text: &str) -> Vec<usize> {
    static SHAPE: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)shape\D{0,20}?\((\d+(?:\s*,\s*\d+)*)\s*,?\)"));
    static FEATURES: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?i)\b(\d{1,4})\s+((?:[a-z-]+\s+){0,2})(?:features|predictors|feature columns|input columns)\b")
    });
    // Words that end a count's phrase: `100 epochs the features` counts epochs.
    const NOT_A_KIND: [&str; 8] = ["the", "of", "and", "with", "epochs", "rows", "samples", "steps"];
    let counted = || {
        FEATURES.captures_iter(text).find_map(|c| {
            let kinds = c[2].split_whitespace().map(str::to_lowercase).collect::<Vec<_>>();
            let count = c[1].parse::<usize>().ok().filter(|&n| (1..=1000).contains(&n))?;
            (!kinds.iter().any(|k| NOT_A_KIND.contains(&k.as_str()))).then(|| vec![UNSTATED_SHAPE[0], count])
        })
    };
    SHAPE
        .captures_iter(text)
        .find_map(|c| parse_dims(&c[1], 10_000_000))
        .or_else(counted)
        .unwrap_or_else(|| UNSTATED_SHAPE.to_vec())
}

/// The dimensions of a shape's text (`800, 10`, `3x100x100`): each from 1 to 100,000, their
/// product at most `max_elements`; `None` for anything else.
pub(crate) fn parse_dims(list: &str, max_elements: usize) -> Option<Vec<usize>> {
    let dims: Vec<usize> = list
        .split(['x', '×', ','])
        .map(|d| d.trim().parse().ok())
        .collect::<Option<_>>()?;
    let sane = !dims.is_empty()
        && dims.iter().all(|&d| d > 0 && d <= 100_000)
        && dims.iter().product::<usize>() <= max_elements;
    sane.then_some(dims)
}

pub(crate) fn shape_literal(shape: &[usize]) -> String {
    if shape.len() == 1 {
        format!("({},)", shape[0])
    } else {
        format!(
            "({})",
            shape.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edits::complete_imports::undefined_known_names;

    #[test]
    fn a_counted_number_of_features_gives_the_columns() {
        assert_eq!(inferred_shape("X has shape (100, 3) and 7 features"), vec![100, 3]);
        assert_eq!(
            inferred_shape("2000 transactions with 12 numeric features"),
            vec![100, 12]
        );
        assert_eq!(inferred_shape("8 standardized sensor features"), vec![100, 8]);
        assert_eq!(inferred_shape("after 100 epochs the features"), UNSTATED_SHAPE.to_vec());
        assert_eq!(inferred_shape("no count here"), UNSTATED_SHAPE.to_vec());
    }

    #[test]
    fn defined_names_are_not_imported_again() {
        assert!(defines("import numpy as np", "np"));
        assert!(defines("for i, x in enumerate(d):\n    pass", "x"));
        assert!(defines("x, y = 1, 2", "y"));
        assert!(!defines("print(np.zeros(2))", "np"));
        // What each form of import binds, as Python reads it.
        assert!(defines("import torch.nn", "torch"));
        assert!(!defines("import torch.nn as nn", "torch"));
        assert!(defines("import torch.nn as nn", "nn"));
        assert!(defines("import os, torch  # both", "torch"));
        assert!(defines("import numpy as np, torch.optim", "torch"));
        assert!(!defines("import mytorch", "torch"));
        // A parameter binds the name inside its function only.
        let split = "def split(X, y):\n    return X[:2], y[:2]\n\nX_train, y_train = split(X, y)\n";
        assert!(defines(split, "X"));
        assert!(!defines_at_module_level(split, "X"));
        assert!(defines_at_module_level(split, "X_train") && defines_at_module_level(split, "y_train"));
        assert!(defines_at_module_level("with open('f') as fh:\n    pass", "fh"));
        assert!(!defines_at_module_level("def f():\n    y = 1\n", "y"));
        assert_eq!(
            undefined_known_names("'np.' in a string\nx = torch.ones(2)"),
            vec!["torch"]
        );
    }
}
