//! Candidate reproduction scripts, from two generators:
//!
//! - [`llm_candidate`]: an LLM prompted with the restructured report, the plan, the
//!   context and the previous attempt's feedback (refinement), streamed token by token;
//! - [`rule_candidate`] / [`rule_refine`]: no model at all, the edit actions that the
//!   RepGen authors found reproduce most deep-learning bugs (EMSE 2024, arXiv
//!   2401.03069): complete the report's snippet with missing imports, replace unavailable
//!   data files with synthetic data of the inferred shape, strip notebook commands,
//!   migrate obvious deprecated APIs, fix seeds, shrink epochs, and append a check that
//!   makes the symptom observable. Refinement applies the next edits the feedback calls
//!   for (an undefined name gets an import or a definition, a line that does not parse
//!   is commented out, a run stopped at the time limit gets smaller loops).
//!
//! Every candidate lists its edits, which the agent streams with it.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::{Captures, Regex};
use replayground_shared::repro::{
    BugReport, CheckKind, CheckVerdict, PlanStep, RankedContext, RestructuredReport, SymptomClass,
};

use super::checks::{RuffDiagnostic, RunObservation};
use super::llm::{ChatMessage, GenParams, Llm, LlmError, LlmTask};
use super::project::{Project, SourceFile};
use super::report::{code_snippets, looks_like_python, report_text};
use replayground_exec::python::parse;
use replayground_exec::sandbox::Termination;

/// A candidate script and the edits or reasons behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub code: String,
    pub edits: Vec<String>,
}

/// What a generator knows about the bug.
#[derive(Debug, Clone, Copy)]
pub struct GenInput<'a> {
    pub report: &'a BugReport,
    pub restructured: &'a RestructuredReport,
    pub plan: &'a [PlanStep],
    pub context: Option<&'a RankedContext>,
    /// The project's own modules (`train`, `pkg.data`, `pkg`): their imports are inlined
    /// by the context, never installed packages.
    pub project_modules: &'a [String],
    /// The project itself, whose modules a candidate inlines instead of importing.
    pub project: Option<&'a Project>,
}

/// What the checks said about the previous candidate.
#[derive(Debug, Clone, Copy, Default)]
pub struct Feedback<'a> {
    pub verdicts: &'a [CheckVerdict],
    pub diagnostics: &'a [RuffDiagnostic],
    pub run: Option<&'a RunObservation>,
}

/// The feedback as text: the failing checks first, one line each.
pub fn feedback_text(verdicts: &[CheckVerdict]) -> String {
    let mut lines: Vec<String> = verdicts
        .iter()
        .filter(|v| !v.passed)
        .map(|v| format!("{:?} check failed: {}", v.check, v.detail))
        .collect();
    if lines.is_empty() {
        lines = verdicts
            .iter()
            .map(|v| format!("{:?}: {}", v.check, v.detail))
            .collect();
    }
    lines.join("\n")
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid built-in pattern")
}

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

fn import_for(name: &str) -> Option<&'static str> {
    IMPORTS.iter().find(|(n, _)| *n == name).map(|(_, line)| *line)
}

/// Whether `name` is bound anywhere in `code` (import, assignment, def, class, loop, with,
/// a parameter).
fn defines(code: &str, name: &str) -> bool {
    binds(code, name, r"\s*")
}

/// Whether `name` is bound at module level (a statement at column 0): what a name that
/// ruff or a `NameError` reports undefined needs, whatever functions take it as a parameter.
fn defines_at_module_level(code: &str, name: &str) -> bool {
    binds(code, name, "")
}

/// The binding forms of `name` in statements starting with `indent`; with any indent, a
/// `for` target, an `as` target and a parameter count too.
fn binds(code: &str, name: &str, indent: &str) -> bool {
    let n = regex::escape(name);
    let mut pattern = format!(
        r"(?m)(?:^{indent}import\s+[\w.]*\b{n}\b|^{indent}import\s.*\bas\s+{n}\b|^{indent}from\s+\S+\s+import\s.*\b{n}\b|^{indent}(?:{n}|[\w\s,]*,\s*{n}|{n}\s*,[\w\s,]*)\s*(?::[^=]*)?=[^=]|^{indent}(?:async\s+)?def\s+{n}\b|^{indent}class\s+{n}\b|^{indent}for\s+(?:[\w\s,]*\b)?{n}\b[\w\s,]*\s+in\b|^{indent}with\s.*\bas\s+{n}\b"
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

/// Names used as a module or callable (`np.`, `DataLoader(`) that nothing binds.
fn undefined_known_names(code: &str) -> Vec<&'static str> {
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

/// The code with string literals and comments blanked, so names inside them do not count.
fn strip_strings(code: &str) -> String {
    static STRINGS: LazyLock<Regex> =
        LazyLock::new(|| re(r#"(?s)"""[^"]*"""|'''[^']*'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|\#[^\n]*"#));
    STRINGS.replace_all(code, "\"\"").into_owned()
}

/// Inserts import lines at the top (after a `from __future__` line or a docstring-free start).
fn add_imports(code: &mut String, lines: &[&str]) {
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
fn after_imports(code: &str) -> usize {
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

fn insert_after_imports(code: &mut String, text: &str) {
    let at = after_imports(code);
    let mut block = String::new();
    if at > 0 && !code[..at].ends_with('\n') {
        block.push('\n');
    }
    block.push_str(text);
    code.insert_str(at, &block);
}

/// Removes notebook and REPL syntax: `!pip`, `%magic`, `display(...)`, `>>>` prompts.
fn strip_notebook(code: &mut String) -> Option<String> {
    static DISPLAY: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)(^|[^\w.])display\("));
    let doctest = code.lines().any(|l| l.starts_with(">>> "));
    let mut removed = 0;
    let mut out = String::new();
    for line in code.lines() {
        let trimmed = line.trim_start();
        if doctest {
            if let Some(rest) = line.strip_prefix(">>> ").or_else(|| line.strip_prefix("... ")) {
                out.push_str(rest);
                out.push('\n');
            } else if line == ">>>" || line == "..." {
                out.push('\n');
            } else {
                removed += 1;
            }
            continue;
        }
        if trimmed.starts_with('!') || trimmed.starts_with('%') || trimmed.starts_with("get_ipython()") {
            removed += 1;
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    let displays = DISPLAY.find_iter(&out).count();
    let out = DISPLAY.replace_all(&out, "${1}print(").into_owned();
    if removed == 0 && displays == 0 && !doctest {
        return None;
    }
    *code = out;
    Some(if doctest {
        format!("removed the REPL prompts and {removed} output lines")
    } else {
        format!("stripped {removed} notebook command(s) and {displays} display() call(s)")
    })
}

/// Dedents code pasted with a common indentation.
fn dedent(code: &mut String) -> Option<String> {
    let indent = code
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()?;
    if indent == 0 {
        return None;
    }
    *code = code
        .lines()
        .map(|l| {
            if l.len() >= indent {
                &l[indent..]
            } else {
                l.trim_start()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    Some(format!("removed a common indentation of {indent} spaces"))
}

/// Obvious deprecated APIs and their replacements, except an API whose removal is the
/// reported error itself (`module 'numpy' has no attribute 'float'`): that is the bug.
fn migrate_deprecated(code: &mut String, report: &str) -> Option<String> {
    static RULES: LazyLock<Vec<(Regex, &'static str, &'static str)>> = LazyLock::new(|| {
        vec![
            (re(r"\bnp\.float\b"), "float", "np.float → float"),
            (re(r"\bnp\.int\b"), "int", "np.int → int"),
            (re(r"\bnp\.bool\b"), "bool", "np.bool → bool"),
            (re(r"\bnp\.object\b"), "object", "np.object → object"),
            (re(r"\bnp\.str\b"), "str", "np.str → str"),
            (re(r"\bnp\.long\b"), "int", "np.long → int"),
            (re(r"\.as_matrix\(\)"), ".to_numpy()", ".as_matrix() → .to_numpy()"),
            (re(r"\.ix\["), ".loc[", ".ix[ → .loc["),
            (
                re(r"\bsklearn\.cross_validation\b"),
                "sklearn.model_selection",
                "sklearn.cross_validation → sklearn.model_selection",
            ),
            (re(r"\btorch\.autograd\.Variable\(([^()]*)\)"), "$1", "Variable(x) → x"),
        ]
    });
    let mut done = Vec::new();
    for (pattern, replacement, what) in RULES.iter() {
        let name = what
            .split(' ')
            .next()
            .unwrap_or("")
            .trim_start_matches("np.")
            .trim_start_matches('.');
        let name = name.split(['(', '[']).next().unwrap_or(name);
        if report.contains(&format!("attribute '{name}'")) {
            continue;
        }
        if pattern.is_match(code) {
            *code = pattern.replace_all(code, *replacement).into_owned();
            done.push(*what);
        }
    }
    (!done.is_empty()).then(|| format!("migrated deprecated APIs: {}", done.join(", ")))
}

/// The data shape the report implies, e.g. "X has shape (100, 3)"; (100, 4) otherwise.
pub fn inferred_shape(text: &str) -> Vec<usize> {
    static SHAPE: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)shape\D{0,20}?\((\d+(?:\s*,\s*\d+)*)\s*,?\)"));
    SHAPE
        .captures_iter(text)
        .filter_map(|c| {
            c[1].split(',')
                .map(|d| d.trim().parse::<usize>().ok())
                .collect::<Option<Vec<_>>>()
        })
        .find(|dims| {
            !dims.is_empty()
                && dims.iter().all(|&d| d > 0 && d <= 100_000)
                && dims.iter().product::<usize>() <= 10_000_000
        })
        .unwrap_or_else(|| vec![100, 4])
}

fn shape_literal(shape: &[usize]) -> String {
    if shape.len() == 1 {
        format!("({},)", shape[0])
    } else {
        format!(
            "({})",
            shape.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
        )
    }
}

/// Synthetic data for one `np.load(...)`: the shape and dtype its line states (`dtype=int`,
/// a trailing `# (120, 8)` or `# digits 0..9`) win over the report-wide shape.
fn synthetic_array(call: &str, line_rest: &str, shape: &[usize]) -> String {
    static COMMENT_SHAPE: LazyLock<Regex> = LazyLock::new(|| re(r"#.*?\((\d+(?:\s*,\s*\d+)*)\s*,?\s*\)"));
    static RANGE: LazyLock<Regex> = LazyLock::new(|| re(r"\b(\d+)\s*(?:\.\.|-|to)\s*(\d+)\b"));
    static INTEGER: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?i)(?:dtype\s*=\s*(?:np\.)?u?int|\bu?int(?:8|16|32|64)?\b|\blabels?\b|\bclass(?:es)?\b|\bdigits?\b)")
    });
    let comment = line_rest.find('#').map_or("", |i| &line_rest[i..]);
    let stated: Option<Vec<usize>> = COMMENT_SHAPE.captures(comment).and_then(|c| {
        c[1].split(',')
            .map(|d| d.trim().parse::<usize>().ok().filter(|&d| d > 0 && d <= 100_000))
            .collect()
    });
    let hint = format!("{call} {comment}");
    let integer = INTEGER.is_match(&hint);
    let shape = stated.unwrap_or_else(|| {
        // Integer labels read from a file are one value per row.
        if integer {
            vec![shape.first().copied().unwrap_or(100)]
        } else {
            shape.to_vec()
        }
    });
    let literal = shape_literal(&shape);
    if hint.contains("uint8") {
        return format!("np.random.default_rng(0).integers(0, 256, {literal}).astype(np.uint8)");
    }
    if integer {
        let (low, high) = RANGE
            .captures(comment)
            .and_then(|c| Some((c[1].parse::<i64>().ok()?, c[2].parse::<i64>().ok()?)))
            .filter(|(low, high)| low < high)
            .unwrap_or((0, 9));
        return format!("np.random.default_rng(0).integers({low}, {}, {literal})", high + 1);
    }
    format!("np.random.default_rng(0).standard_normal({literal})")
}

/// Replaces reads of data files that are not here with synthetic data of the inferred shape.
fn synthesize_data(code: &mut String, shape: &[usize]) -> Option<String> {
    static NP_LOAD: LazyLock<Regex> = LazyLock::new(|| {
        re(r#"\b(?:np|numpy)\.(load|loadtxt|genfromtxt)\(\s*(?:r|f)?(['"])([^'"]+)['"][^()]*(?:\([^()]*\)[^()]*)*\)"#)
    });
    static READ_CSV: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r#"\b(?:pd|pandas)\.read_(csv|table|excel|parquet|json)\(\s*(?:r|f)?(['"])([^'"]+)['"][^()]*(?:\([^()]*\)[^()]*)*\)"#,
        )
    });
    static OPEN: LazyLock<Regex> = LazyLock::new(|| {
        re(r#"\bopen\(\s*(?:r|f)?(['"])([^'"]+\.(?:csv|txt|tsv|data|dat))['"]\s*(?:,\s*['"]r?t?['"]\s*)?\)"#)
    });
    static COLUMN: LazyLock<Regex> = LazyLock::new(|| re(r#"\[\s*['"]([A-Za-z_][\w ]*)['"]\s*\]"#));
    let mut replaced = Vec::new();
    let literal = shape_literal(shape);
    let available = |path: &str| path.starts_with("/usr/");
    let source = code.as_str();
    let new = NP_LOAD.replace_all(source, |c: &Captures<'_>| {
        if available(&c[3]) {
            return c[0].to_owned();
        }
        replaced.push(c[3].to_owned());
        let whole = c.get(0).expect("the whole match");
        let line_rest = source[whole.end()..].split('\n').next().unwrap_or("");
        synthetic_array(whole.as_str(), line_rest, shape)
    });
    let mut new = new.into_owned();
    let mut columns: Vec<String> = Vec::new();
    for c in COLUMN.captures_iter(&new) {
        if !columns.contains(&c[1].to_owned()) {
            columns.push(c[1].to_owned());
        }
    }
    if columns.is_empty() {
        columns = (0..shape.get(1).copied().unwrap_or(4))
            .map(|i| format!("f{i}"))
            .collect();
    }
    let rows = shape.first().copied().unwrap_or(100);
    let frame = format!(
        "pd.DataFrame(np.random.default_rng(0).standard_normal(({rows}, {})), columns={columns:?})",
        columns.len()
    );
    new = READ_CSV
        .replace_all(&new, |c: &Captures<'_>| {
            if available(&c[3]) {
                return c[0].to_owned();
            }
            replaced.push(c[3].to_owned());
            frame.clone()
        })
        .into_owned();
    let cols = shape.get(1).copied().unwrap_or(4);
    let csv: String = (0..rows.min(200))
        .map(|r| {
            (0..cols)
                .map(|c| format!("{:.3}", ((r * 7 + c * 13) % 17) as f32 / 4.0))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join("\\n");
    new = OPEN
        .replace_all(&new, |c: &Captures<'_>| {
            if available(&c[2]) {
                return c[0].to_owned();
            }
            replaced.push(c[2].to_owned());
            format!("io.StringIO(\"{csv}\\n\")")
        })
        .into_owned();
    if replaced.is_empty() {
        return None;
    }
    *code = new;
    Some(format!(
        "replaced the data file(s) {} with synthetic data of shape {literal}",
        replaced.join(", ")
    ))
}

/// Caps epochs and iteration counts so a run ends within the sandbox's time limit.
fn shrink_loops(code: &mut String, epochs_cap: u64, range_cap: u64) -> Option<String> {
    static EPOCHS: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?i)\b((?:n_|num_|max_)?(?:epochs?|iters?|iterations|steps|n_iter|max_iter)\s*=\s*)(\d+)\b")
    });
    static RANGE: LazyLock<Regex> = LazyLock::new(|| re(r"(\bfor\s+\w+\s+in\s+range\(\s*)(\d+)(\s*\))"));
    let mut shrunk = Vec::new();
    let new = EPOCHS.replace_all(code, |c: &Captures<'_>| {
        let n: u64 = c[2].parse().unwrap_or(0);
        if n > epochs_cap {
            shrunk.push(format!("{}{n} → {epochs_cap}", &c[1]));
            format!("{}{epochs_cap}", &c[1])
        } else {
            c[0].to_owned()
        }
    });
    let new = RANGE.replace_all(&new, |c: &Captures<'_>| {
        let n: u64 = c[2].parse().unwrap_or(0);
        if n > range_cap {
            shrunk.push(format!("range({n}) → range({range_cap})"));
            format!("{}{range_cap}{}", &c[1], &c[3])
        } else {
            c[0].to_owned()
        }
    });
    if shrunk.is_empty() {
        return None;
    }
    *code = new.into_owned();
    Some(format!("shrank loops: {}", shrunk.join(", ")))
}

/// Seeds the random generators the script uses, unless it already does.
fn fix_seeds(code: &mut String) -> Option<String> {
    let mut seeds = Vec::new();
    if defines(code, "np") && !code.contains("np.random.seed") {
        seeds.push("np.random.seed(0)");
    }
    if defines(code, "torch") && !code.contains("manual_seed") {
        seeds.push("torch.manual_seed(0)");
    }
    if defines(code, "tf") && !code.contains("set_seed") {
        seeds.push("tf.random.set_seed(0)");
    }
    if defines(code, "random") && !code.contains("random.seed") {
        seeds.push("random.seed(0)");
    }
    if seeds.is_empty() {
        return None;
    }
    insert_after_imports(code, &format!("{}\n", seeds.join("\n")));
    Some(format!("fixed the seeds ({})", seeds.join(", ")))
}

/// Adds the usual import for every known name the code uses without binding.
fn complete_imports(code: &mut String) -> Option<String> {
    let names = undefined_known_names(code);
    if names.is_empty() {
        return None;
    }
    let lines: Vec<&str> = names.iter().filter_map(|n| import_for(n)).collect();
    add_imports(code, &lines);
    Some(format!("added missing imports: {}", lines.join("; ")))
}

/// Marks the start of the appended check, so it is appended once.
const OBSERVER_MARK: &str = "# replayground: make the symptom observable";

/// Prints every numeric global's value or shape and flags NaN/inf, after the script ran.
const OBSERVER: &str = r#"
def _replayground_observe():
    try:
        import numpy
    except ImportError:
        return
    for name, value in list(globals().items()):
        if name.startswith("_") or callable(value) or type(value).__name__ == "module":
            continue
        try:
            array = numpy.asarray(value, dtype=float)
        except Exception:
            continue
        if array.size == 0 or array.size > 10_000_000:
            continue
        flags = [flag for flag, test in (("nan", numpy.isnan), ("inf", numpy.isinf)) if test(array).any()]
        shown = repr(float(array)) if array.ndim == 0 else "shape " + str(tuple(array.shape))
        print("replayground:", name, "=", shown, *("has " + flag for flag in flags))


_replayground_observe()
"#;

fn append_observer(code: &mut String, report: &RestructuredReport) -> Option<String> {
    if code.contains(OBSERVER_MARK) || report.symptom.class == SymptomClass::Crash {
        return None;
    }
    if !code.ends_with('\n') {
        code.push('\n');
    }
    code.push('\n');
    code.push_str(OBSERVER_MARK);
    code.push_str(OBSERVER);
    Some("appended a check that prints each numeric result (value or shape) and flags NaN/inf".to_owned())
}

fn show_warnings(code: &mut String, report: &RestructuredReport) -> Option<String> {
    if report.symptom.class != SymptomClass::Warning || code.contains("simplefilter(\"always\")") {
        return None;
    }
    add_imports(code, &["import warnings", "warnings.simplefilter(\"always\")"]);
    Some("made every warning visible".to_owned())
}

/// Names defined at the top of `code` (functions and classes).
fn definitions(code: &str) -> BTreeSet<String> {
    static DEF: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*(?:def|class)\s+(\w+)"));
    DEF.captures_iter(code).map(|c| c[1].to_owned()).collect()
}

/// The code to start from: the report's snippets, the context, or a skeleton.
fn base_code(input: &GenInput<'_>) -> (String, Vec<String>) {
    let snippets: Vec<String> = code_snippets(input.report)
        .into_iter()
        .filter(|s| looks_like_python(s) || input.report.snippets.contains(s))
        .collect();
    let mut edits = Vec::new();
    let mut code = String::new();
    if let Some(context) = input.context {
        let defined = definitions(&context.code);
        let joined = snippets.join("\n");
        let used = defined
            .iter()
            .any(|name| Regex::new(&format!(r"\b{}\b", regex::escape(name))).is_ok_and(|r| r.is_match(&joined)));
        if snippets.is_empty() || used {
            code.push_str(&entry_last(&context.code));
            code.push_str("\n\n");
            edits.push(format!(
                "took `{}` from {} (lines {}-{}) with its dependencies",
                context.name, context.path, context.start_line, context.end_line
            ));
        }
    }
    if !snippets.is_empty() {
        let count = snippets.len();
        let mut joined = String::new();
        for snippet in snippets {
            let mut snippet = snippet;
            if let Some(edit) = dedent(&mut snippet) {
                edits.push(edit);
            }
            joined.push_str(&snippet);
            if !joined.ends_with('\n') {
                joined.push('\n');
            }
            joined.push('\n');
        }
        code.push_str(&joined);
        edits.push(format!(
            "took the report's code ({count} snippet{})",
            if count == 1 { "" } else { "s" }
        ));
    }
    if code.trim().is_empty() {
        let framework = input.restructured.framework.as_deref().unwrap_or("numpy");
        let import = match framework {
            "torch" => "import torch",
            "tensorflow" | "keras" => "import tensorflow as tf",
            _ => "import numpy as np",
        };
        let _ = write!(
            code,
            "# The report has no code and no project context: a skeleton to complete.\n{import}\n\n# Problem: {}\n",
            input.restructured.problem.lines().next().unwrap_or("")
        );
        edits.push("the report has no code: wrote a skeleton that cannot show the bug by itself".to_owned());
    }
    (code, edits)
}

/// A context lists its own file first, then the definitions it uses: when that file runs
/// code at module level, it goes last so the definitions exist when it runs.
fn entry_last(context_code: &str) -> String {
    let mut blocks: Vec<String> = Vec::new();
    for line in context_code.lines() {
        if (line.starts_with("# --- ") && line.ends_with(" ---")) || blocks.is_empty() {
            blocks.push(String::new());
        }
        if let Some(block) = blocks.last_mut() {
            block.push_str(line);
            block.push('\n');
        }
    }
    let runs_code = |block: &str| {
        block.lines().skip(1).any(|l| {
            !l.trim().is_empty()
                && !l.starts_with([' ', '\t', '#', '@', ')', ']', '}'])
                && !["def ", "class ", "import ", "from ", "async def "]
                    .iter()
                    .any(|k| l.starts_with(k))
        })
    };
    if blocks.len() < 2 || !runs_code(&blocks[0]) {
        return context_code.to_owned();
    }
    blocks.rotate_left(1);
    let mut out = blocks.concat();
    if !context_code.ends_with('\n') {
        out.pop();
    }
    out
}

/// Calls the context's top-level functions that nothing calls (at most the last two, the
/// likely entry points) with synthetic arguments, so the retrieved code actually runs.
fn drive_context(code: &mut String, context_code: &str, shape: &[usize]) -> Option<String> {
    static SIGNATURE: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^def\s+([A-Za-z]\w*)\s*\(([^)]*)\)"));
    let mut calls = Vec::new();
    for c in SIGNATURE.captures_iter(context_code) {
        let name = &c[1];
        if name.starts_with("test") || !defines(code, name) {
            continue;
        }
        let called = Regex::new(&format!(r"(?m)^(?:[^#\n]*[^\w#\n.])?{}\s*\(", regex::escape(name))).map_or(0, |r| {
            r.find_iter(&strip_strings(code))
                .filter(|m| !m.as_str().trim_start().starts_with("def "))
                .count()
        });
        if called > 0 {
            continue;
        }
        let mut args = Vec::new();
        for param in c[2].split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if param.contains('=') || param.starts_with('*') || param == "self" || param == "/" {
                continue;
            }
            let param = param.split(':').next().unwrap_or(param).trim();
            let value = synthetic_definition(param, shape, code)
                .and_then(|d| d.split_once(" = ").map(|(_, v)| v.to_owned()))
                // A short generic name (`x`, `z`, `a`) takes an array; a model or a config cannot be made up.
                .or_else(|| {
                    (param.len() <= 2)
                        .then(|| format!("np.random.default_rng(2).standard_normal({})", shape_literal(shape)))
                });
            args.push(value);
        }
        let Some(args) = args.into_iter().collect::<Option<Vec<String>>>() else {
            continue;
        };
        calls.push(format!("result_{name} = {name}({})", args.join(", ")));
    }
    let start = calls.len().saturating_sub(2);
    let calls = &calls[start..];
    if calls.is_empty() {
        return None;
    }
    if !code.ends_with('\n') {
        code.push('\n');
    }
    let _ = write!(
        code,
        "\n# replayground: run the project's code with synthetic inputs\n{}\n",
        calls.join("\n")
    );
    Some(format!(
        "called the context's entry point(s) with synthetic inputs: {}",
        calls.join("; ")
    ))
}

/// Whether `module` (dotted, maybe relative) is one of the project's own.
fn is_project_module(module: &str, modules: &[String]) -> bool {
    // A relative import is always the project's own.
    if module.starts_with('.') {
        return true;
    }
    module.is_empty()
        || modules
            .iter()
            .any(|m| m == module || m.rsplit('.').next() == Some(module) || m.split('.').next() == Some(module))
}

/// The project file a module name (maybe relative) stands for.
fn module_file<'p>(project: &'p Project, module: &str) -> Option<&'p SourceFile> {
    let path = module.trim_start_matches('.').replace('.', "/");
    if path.is_empty() {
        return None;
    }
    let (file, package) = (format!("{path}.py"), format!("{path}/__init__.py"));
    project
        .python_files()
        .find(|f| f.path == file || f.path == package)
        .or_else(|| {
            let (file, package) = (format!("/{file}"), format!("/{package}"));
            project
                .python_files()
                .find(|f| f.path.ends_with(&file) || f.path.ends_with(&package))
        })
}

/// Removes the `if __name__ == "__main__":` blocks of an inlined file.
fn without_main_blocks(text: &str) -> String {
    split_entry_point(text).0
}

/// Marks where [`hoist_main_blocks`] put the entry point.
const ENTRY_POINT_MARKER: &str = "\n# replayground: the entry point, after every definition\n";

/// A file split at its entry point: everything else, and the statements of its (first)
/// `if __name__ == "__main__":` block, dedented; the second part is empty without one.
fn split_entry_point(text: &str) -> (String, String) {
    let mut copy = text.to_owned();
    if hoist_main_blocks(&mut copy).is_none() {
        return (copy, String::new());
    }
    match copy.split_once(ENTRY_POINT_MARKER) {
        Some((definitions, entry)) => (definitions.to_owned(), entry.to_owned()),
        None => (copy, String::new()),
    }
}

/// Inlines the project modules that `code` imports (each file once, dependencies first,
/// their entry points dropped) until no project import is left; at most 20 files.
fn detach_project_imports(code: &mut String, modules: &[String], project: Option<&Project>) -> Option<String> {
    let mut edits = Vec::new();
    let mut inlined: Vec<String> = Vec::new();
    for _ in 0..20 {
        let mut needed: Vec<String> = Vec::new();
        let Some(edit) = detach_imports_once(code, modules, |module| {
            if let Some(file) = project.and_then(|p| module_file(p, module)) {
                needed.push(file.path.clone());
            }
        }) else {
            break;
        };
        edits.push(edit);
        let Some(project) = project else { break };
        let mut prefix = String::new();
        for path in needed {
            if inlined.contains(&path) || code.contains(&format!("# --- {path} ---")) {
                continue;
            }
            if let Some(file) = project.file(&path) {
                let _ = write!(
                    prefix,
                    "# --- {path} ---\n{}\n\n",
                    without_main_blocks(&file.text).trim_end()
                );
                inlined.push(path);
            }
        }
        if prefix.is_empty() {
            continue;
        }
        // Dependencies go above the code that imports them; their imports stay on top.
        let at = after_imports(code);
        let (head, tail) = code.split_at(at);
        *code = format!("{head}{prefix}{tail}");
    }
    if edits.is_empty() {
        return None;
    }
    if !inlined.is_empty() {
        edits.push(format!("inlined the project's module(s) {}", inlined.join(", ")));
    }
    Some(edits.join("; "))
}

/// One pass of [`detach_project_imports`]: removes the project imports, reporting each module.
fn detach_imports_once(code: &mut String, modules: &[String], mut found: impl FnMut(&str)) -> Option<String> {
    static FROM: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*from\s+(\.*[\w.]*)\s+import\s+(.*)$"));
    static IMPORT: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*import\s+([\w.]+)(?:\s+as\s+(\w+))?\s*$"));
    if modules.is_empty() {
        return None;
    }
    let mut removed = Vec::new();
    let mut aliases = Vec::new();
    let mut out = String::new();
    let mut open_paren = false;
    for line in code.lines() {
        if open_paren {
            open_paren = !line.contains(')');
            continue;
        }
        if let Some(c) = FROM.captures(line).filter(|c| is_project_module(&c[1], modules)) {
            found(&c[1]);
            removed.push(c[1].to_owned());
            open_paren = c[2].contains('(') && !c[2].contains(')');
            continue;
        }
        if let Some(c) = IMPORT.captures(line).filter(|c| is_project_module(&c[1], modules)) {
            found(&c[1]);
            removed.push(c[1].to_owned());
            aliases.push(c.get(2).map_or_else(|| c[1].to_owned(), |a| a.as_str().to_owned()));
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if removed.is_empty() {
        return None;
    }
    for alias in &aliases {
        if let Ok(pattern) = Regex::new(&format!(r"\b{}\.(\w)", regex::escape(alias))) {
            out = pattern.replace_all(&out, "$1").into_owned();
        }
    }
    removed.dedup();
    *code = out;
    Some(format!(
        "removed imports of the project's own modules ({}), whose code is inlined",
        removed.join(", ")
    ))
}

/// Moves the `if __name__ == "__main__":` body of the first file to the end (every
/// definition of the inlined files comes first) and drops the other files' entry points.
fn hoist_main_blocks(code: &mut String) -> Option<String> {
    static MAIN: LazyLock<Regex> = LazyLock::new(|| re(r#"^if\s+__name__\s*==\s*['"]__main__['"]\s*:\s*$"#));
    let lines: Vec<&str> = code.lines().collect();
    let mut kept = String::new();
    let mut blocks: Vec<Vec<&str>> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if MAIN.is_match(lines[i].trim_end()) {
            let mut body = Vec::new();
            i += 1;
            while i < lines.len() && (lines[i].trim().is_empty() || lines[i].starts_with([' ', '\t'])) {
                body.push(lines[i]);
                i += 1;
            }
            blocks.push(body);
            continue;
        }
        kept.push_str(lines[i]);
        kept.push('\n');
        i += 1;
    }
    let first = blocks.first()?;
    let indent = first
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    kept.push_str(ENTRY_POINT_MARKER);
    for line in first {
        kept.push_str(line.get(indent..).unwrap_or("").trim_end());
        kept.push('\n');
    }
    let edit = if blocks.len() > 1 {
        format!(
            "moved the entry point to the end and dropped {} other file(s)' entry points",
            blocks.len() - 1
        )
    } else {
        "moved the entry point (`if __name__ == \"__main__\"`) to the end".to_owned()
    };
    *code = kept;
    Some(edit)
}

/// One edit action: changes the code and says what it did, or leaves it and says nothing.
type EditAction<'a> = dyn Fn(&mut String) -> Option<String> + 'a;

/// The first candidate without a model: the report's code with the edit actions applied.
pub fn rule_candidate(input: &GenInput<'_>) -> Candidate {
    let (mut code, mut edits) = base_code(input);
    let facts = ReportFacts::of(input);
    let has_context = input.context.is_some();
    let actions: [&EditAction<'_>; 12] = [
        &|code| detach_project_imports(code, input.project_modules, input.project),
        &|code| if has_context { hoist_main_blocks(code) } else { None },
        &strip_notebook,
        &dedent,
        &|code| migrate_deprecated(code, &facts.words),
        &|code| synthesize_data(code, &facts.shape),
        &|code| shrink_loops(code, 100, 10_000),
        &|code| {
            input
                .context
                .and_then(|context| drive_context(code, &context.code, &facts.shape))
        },
        &complete_imports,
        &|code| show_warnings(code, input.restructured),
        &fix_seeds,
        &|code| append_observer(code, input.restructured),
    ];
    apply(&mut code, &mut edits, &actions);
    Candidate { code, edits }
}

/// An LLM's draft through the rules as tools: project imports the sandbox lacks detached,
/// notebook syntax and stray indentation removed, deprecated APIs migrated, undefined data
/// made synthetic, loops shrunk, imports completed, seeds fixed. What the draft chose itself
/// (its output, how it drives the code) is left alone.
fn polish_draft(input: &GenInput<'_>, code: &mut String) -> Vec<String> {
    let facts = ReportFacts::of(input);
    let actions: [&EditAction<'_>; 9] = [
        &|code| detach_project_imports(code, input.project_modules, input.project),
        &strip_notebook,
        &dedent,
        &|code| migrate_deprecated(code, &facts.words),
        &|code| synthesize_data(code, &facts.shape),
        &|code| shrink_loops(code, 100, 10_000),
        &complete_imports,
        &|code| show_warnings(code, input.restructured),
        &fix_seeds,
    ];
    let mut edits = Vec::new();
    apply(code, &mut edits, &actions);
    edits
}

/// Runs `actions` in order, recording the edit each one made.
fn apply(code: &mut String, edits: &mut Vec<String>, actions: &[&EditAction<'_>]) {
    for action in actions {
        if let Some(edit) = action(code) {
            edits.push(edit);
        }
    }
    // Synthetic data may need numpy/io/pandas imports the code did not have.
    if let Some(edit) = complete_imports(code) {
        edits.push(edit);
    }
}

/// What the edit actions read from the report: the data shape it implies and its words.
struct ReportFacts {
    shape: Vec<usize>,
    words: String,
}

impl ReportFacts {
    fn of(input: &GenInput<'_>) -> Self {
        let r = input.restructured;
        let shape = inferred_shape(&format!(
            "{}\n{}\n{}",
            r.problem,
            r.observed,
            input.report.environment.frameworks.join(" ")
        ));
        let words = format!("{}\n{}\n{}", r.problem, r.observed, report_text(input.report));
        Self { shape, words }
    }
}

/// Names that usually hold data, defined synthetically when a report's snippet uses them undefined.
/// `code` is read for what the labels must be: class indices below `k` where the code
/// indexes a one-hot table with them (`np.eye(k)[y]`, `to_categorical(y, k)`,
/// `one_hot(y, k)`), else 0/1 (which a log-loss also needs).
fn synthetic_definition(name: &str, shape: &[usize], code: &str) -> Option<String> {
    let lower = name.to_lowercase();
    let rows = shape.first().copied().unwrap_or(100);
    let features = [
        "x", "data", "inputs", "input", "features", "images", "x_train", "x_test", "x_val", "train_x", "test_x",
        "batch", "logits", "weights", "w",
    ];
    let labels = [
        "y", "labels", "label", "targets", "target", "y_train", "y_test", "y_val", "train_y", "test_y", "y_true",
    ];
    if features.contains(&lower.as_str()) {
        Some(format!(
            "{name} = np.random.default_rng(0).standard_normal({})",
            shape_literal(shape)
        ))
    } else if labels.contains(&lower.as_str()) {
        let classes = class_count(code, name).unwrap_or(2);
        Some(format!(
            "{name} = np.random.default_rng(1).integers(0, {classes}, size={rows})"
        ))
    } else if ["lr", "learning_rate"].contains(&lower.as_str()) {
        Some(format!("{name} = 0.01"))
    } else if ["epochs", "n_epochs", "num_epochs", "steps", "n_steps"].contains(&lower.as_str()) {
        Some(format!("{name} = 10"))
    } else if ["batch_size", "n", "n_samples", "num_samples"].contains(&lower.as_str()) {
        Some(format!("{name} = {rows}"))
    } else {
        None
    }
}

/// The number of classes `code` one-hot encodes `name` into, when it says.
fn class_count(code: &str, name: &str) -> Option<u64> {
    let n = regex::escape(name);
    let patterns = [
        format!(r"\beye\(\s*(\d+)\s*\)\s*\[\s*{n}\b"),
        format!(r"\b(?:to_categorical|one_hot)\(\s*{n}\s*,\s*(?:num_classes\s*=\s*)?(\d+)"),
    ];
    patterns
        .iter()
        .filter_map(|p| Regex::new(p).ok())
        .find_map(|r| r.captures(code).and_then(|c| c[1].parse().ok()))
}

/// A top-level definition of `name` in the project: a one-line assignment, or a whole
/// `def` / `class` block, with the file it came from.
fn project_definition(project: &Project, name: &str) -> Option<String> {
    let n = regex::escape(name);
    let assignment = Regex::new(&format!(r"(?m)^{n}\s*(?::[^=\n]*)?=[^=\n][^\n]*$")).ok()?;
    let block = Regex::new(&format!(r"(?m)^(?:def|class)\s+{n}\b")).ok()?;
    for file in project.python_files() {
        if let Some(m) = assignment.find(&file.text) {
            let line = m.as_str().trim_end();
            // Only a complete one-line value: an open bracket would need the lines after it.
            let opens = line.matches(['(', '[', '{']).count();
            let closes = line.matches([')', ']', '}']).count();
            if opens == closes {
                return Some(format!("{line}  # from {}", file.path));
            }
        }
        if let Some(m) = block.find(&file.text) {
            let rest = &file.text[m.start()..];
            let mut lines = rest.lines();
            let mut text = lines.next().unwrap_or("").to_owned();
            for line in lines {
                if !line.trim().is_empty() && !line.starts_with([' ', '\t']) {
                    break;
                }
                text.push('\n');
                text.push_str(line);
            }
            return Some(format!("# from {}\n{}", file.path, text.trim_end()));
        }
    }
    // Else how the project's own entry point builds it: `model = Net().fit(X, y)` in an
    // `if __name__ == "__main__":` block (its names are resolved in the next round).
    let target = Regex::new(&format!(
        r"(?m)^(?:{n}|[\w\s,]*,\s*{n}|{n}\s*,[\w\s,]*)\s*(?::[^=\n]*)?=[^=\n][^\n]*$"
    ))
    .ok()?;
    project.python_files().find_map(|file| {
        let (_, body) = split_entry_point(&file.text);
        let line = target.find(&body)?.as_str().trim_end();
        let balanced = line.matches(['(', '[', '{']).count() == line.matches([')', ']', '}']).count();
        balanced.then(|| format!("{line}  # from {} (its entry point)", file.path))
    })
}

/// The rows of the first syntax error: its ERROR node (or the MISSING node's line).
fn first_error_rows(code: &str) -> Option<(usize, usize)> {
    let tree = parse(code)?;
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    let mut best: Option<(usize, usize)> = None;
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            let rows = (
                node.start_position().row,
                node.end_position().row.max(node.start_position().row),
            );
            if best.is_none_or(|b| rows.0 < b.0) {
                best = Some(rows);
            }
        } else if node.has_error() {
            stack.extend(node.children(&mut cursor));
        }
    }
    best
}

/// The next candidate without a model, driven by the feedback; `None` when no edit applies.
pub fn rule_refine(input: &GenInput<'_>, previous: &Candidate, feedback: &Feedback<'_>) -> Option<Candidate> {
    let mut code = previous.code.clone();
    let mut edits = Vec::new();
    let failed = |kind: CheckKind| feedback.verdicts.iter().any(|v| v.check == kind && !v.passed);
    let shape = inferred_shape(&format!(
        "{}\n{}",
        input.restructured.problem, input.restructured.observed
    ));

    if failed(CheckKind::Structural)
        && let Some((first, last)) = first_error_rows(&code)
    {
        let lines: Vec<String> = code
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if (first..=last).contains(&i) && !l.trim().is_empty() {
                    format!("# replayground: does not parse: {l}")
                } else {
                    l.to_owned()
                }
            })
            .collect();
        code = lines.join("\n") + "\n";
        edits.push(format!(
            "commented out line(s) {}-{} that do not parse",
            first + 1,
            last + 1
        ));
    }

    let mut undefined: Vec<String> = feedback
        .diagnostics
        .iter()
        .filter(|d| d.code.as_deref() == Some("F821"))
        .filter_map(|d| d.message.split('`').nth(1).map(str::to_owned))
        .collect();
    if let Some(edit) = detach_project_imports(&mut code, input.project_modules, input.project) {
        edits.push(edit);
    }
    if let Some(t) = feedback
        .run
        .and_then(|run| run.traceback.as_ref())
        .filter(|t| t.error_type == "NameError")
        && let Some(name) = t.message.split('\'').nth(1)
    {
        undefined.push(name.to_owned());
    }
    undefined.sort();
    undefined.dedup();
    let mut imports = Vec::new();
    let mut definitions = Vec::new();
    for name in &undefined {
        // Reported undefined at module level: a parameter of the same name elsewhere does
        // not define it (only an edit of this round may have).
        if defines_at_module_level(&code, name) {
            continue;
        }
        if let Some(line) = import_for(name) {
            imports.push(line);
        } else if let Some(definition) = input.project.and_then(|p| project_definition(p, name)) {
            definitions.push(definition);
        } else if let Some(definition) = synthetic_definition(name, &shape, &code) {
            definitions.push(definition);
        }
    }
    if !definitions.is_empty() {
        // Functions and classes first: the assignments of this round may call them.
        definitions.sort_by_key(|d| !d.starts_with("# from "));
        insert_after_imports(&mut code, &format!("{}\n", definitions.join("\n")));
        edits.push(format!("defined undefined data: {}", definitions.join("; ")));
        if !defines(&code, "np") {
            imports.push("import numpy as np");
        }
    }
    if !imports.is_empty() {
        imports.dedup();
        add_imports(&mut code, &imports);
        edits.push(format!("added imports for undefined names: {}", imports.join("; ")));
    }

    if let Some(run) = feedback.run {
        if matches!(run.termination, Termination::Stopped(_))
            && let Some(edit) = shrink_loops(&mut code, 5, 100)
        {
            edits.push(edit);
        }
        if run.missing.is_none()
            && matches!(run.termination, Termination::Exited(0))
            && let Some(edit) = append_observer(&mut code, input.restructured)
        {
            edits.push(edit);
        }
    }
    if let Some(edit) = synthesize_data(&mut code, &shape) {
        edits.push(edit);
    }
    if let Some(edit) = complete_imports(&mut code) {
        edits.push(edit);
    }
    (code != previous.code).then_some(Candidate { code, edits })
}

/// The code of an LLM's answer: its first `` ```python `` block (an unclosed one up to the
/// end), or the whole answer when it has no fence.
pub fn extract_code(answer: &str) -> String {
    static FENCED: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?s)```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)(?:```|\z)"));
    match FENCED.captures(answer) {
        Some(c) => c[1].trim_end().to_owned() + "\n",
        None => answer.trim().to_owned() + "\n",
    }
}

/// Characters of project context put into a prompt.
const MAX_CONTEXT_CHARS: usize = 6000;

/// The generation prompt: report, plan, the report's code, the context, and the
/// previous attempt with its feedback when refining.
pub fn generation_messages(input: &GenInput<'_>, previous: Option<(&Candidate, &str)>) -> Vec<ChatMessage> {
    let r = input.restructured;
    let mut user = String::new();
    let _ = writeln!(
        user,
        "Problem:\n{}\n\nObserved:\n{}\n\nExpected:\n{}",
        r.problem, r.observed, r.expected
    );
    let _ = writeln!(
        user,
        "\nSymptom: {} {}",
        r.symptom.class.as_str(),
        r.symptom.error_type.as_deref().unwrap_or("")
    );
    if let Some(framework) = &r.framework {
        let _ = writeln!(user, "Framework: {framework}");
    }
    if !input.plan.is_empty() {
        user.push_str("\nPlan:\n");
        for (i, step) in input.plan.iter().enumerate() {
            let _ = writeln!(user, "{}. [{:?}] {}", i + 1, step.kind, step.description);
        }
    }
    let snippets = code_snippets(input.report);
    if !snippets.is_empty() {
        let _ = writeln!(
            user,
            "\nCode from the report:\n```python\n{}\n```",
            snippets.join("\n\n")
        );
    }
    if let Some(context) = input.context {
        let code: String = context.code.chars().take(MAX_CONTEXT_CHARS).collect();
        let _ = writeln!(
            user,
            "\nRelevant project code ({} `{}`):\n```python\n{code}\n```",
            context.path, context.name
        );
    }
    match previous {
        Some((candidate, feedback)) => {
            let _ = writeln!(
                user,
                "\nYour previous script:\n```python\n{}```\nFeedback on it:\n{feedback}\n\nWrite the corrected, complete script.",
                candidate.code
            );
        }
        None => user.push_str("\nWrite the reproduction script.\n"),
    }
    vec![
        ChatMessage::system(
            "You write minimal, self-contained Python scripts that reproduce deep-learning bugs (task: generate). \
             Use the libraries of the report; replace data files with small synthetic data; fix the random seeds; \
             keep training to a few iterations; print the values that show the bug (loss, shapes, metrics); \
             do not catch the exception that is the bug. Answer with exactly one ```python code block.",
        ),
        ChatMessage::user(user),
    ]
}

/// A candidate from an LLM, streamed to `on_token`.
pub async fn llm_candidate(
    llm: &dyn Llm,
    input: &GenInput<'_>,
    previous: Option<(&Candidate, &str)>,
    seed: u64,
    on_token: &mut (dyn FnMut(&str) + Send),
) -> Result<Candidate, LlmError> {
    let messages = generation_messages(input, previous);
    let params = GenParams {
        seed,
        ..GenParams::new(LlmTask::Generate, 1500)
    };
    let answer = llm.complete(&messages, &params, on_token).await?;
    let mut code = extract_code(&answer);
    let mut edits = vec![match previous {
        Some(_) => format!("{} refined the previous script with the checks' feedback", llm.name()),
        None => format!("written by {} from the report, the plan and the context", llm.name()),
    }];
    edits.extend(polish_draft(input, &mut code));
    Ok(Candidate { code, edits })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::restructure_rules;

    fn input_for(report: &BugReport, restructured: &RestructuredReport) -> Candidate {
        rule_candidate(&GenInput {
            project_modules: &[],
            project: None,
            report,
            restructured,
            plan: &[],
            context: None,
        })
    }

    #[test]
    fn synthetic_labels_follow_how_the_code_uses_them() {
        let one_hot = "Y = np.eye(10)[y]\nloss = -np.mean(np.log(p) * Y)\n";
        assert_eq!(
            synthetic_definition("y", &[64, 3], one_hot).unwrap(),
            "y = np.random.default_rng(1).integers(0, 10, size=64)"
        );
        let keras = "labels = to_categorical(y_train, num_classes=7)\n";
        assert!(
            synthetic_definition("y_train", &[8], keras)
                .unwrap()
                .contains("integers(0, 7,")
        );
        // A log-loss needs 0/1 labels; with nothing said, labels are binary.
        let log_loss = "loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))\n";
        assert!(
            synthetic_definition("y", &[8], log_loss)
                .unwrap()
                .contains("integers(0, 2,")
        );
        assert_eq!(class_count("Y = np.eye(10)[labels]", "y"), None);
    }

    #[tokio::test]
    async fn an_llms_draft_goes_through_the_rules_as_tools() {
        use crate::llm::{ScriptedLlm, ScriptedReply};
        let report = BugReport {
            observed: "The loss is nan after the first epoch.".into(),
            ..BugReport::default()
        };
        let restructured = restructure_rules(&report);
        let input = GenInput {
            project_modules: &[],
            project: None,
            report: &report,
            restructured: &restructured,
            plan: &[],
            context: None,
        };
        // A draft without its imports or seeds, training for far too long.
        let draft = "Here it is:\n```python\nw = np.zeros(3)\nfor epoch in range(500000):\n    w -= 0.1 * np.ones(3)\nprint(w)\n```\n";
        let llm = ScriptedLlm::new(vec![ScriptedReply::Any(draft.into())]);
        let candidate = llm_candidate(&llm, &input, None, 0, &mut |_| {}).await.unwrap();
        assert!(candidate.code.starts_with("import numpy as np\n"), "{}", candidate.code);
        assert!(candidate.code.contains("np.random.seed(0)"), "{}", candidate.code);
        assert!(candidate.code.contains("range(10000)"), "{}", candidate.code);
        assert!(candidate.code.contains("print(w)"), "the draft's own output stays");
        assert!(
            candidate.edits[0].starts_with("written by scripted"),
            "{:?}",
            candidate.edits
        );
        assert!(
            candidate.edits.iter().any(|e| e.starts_with("shrank loops")),
            "{:?}",
            candidate.edits
        );
    }

    #[test]
    fn snippets_get_their_missing_imports_and_seeds() {
        let report = BugReport {
            observed: "ValueError: shapes (3,4) and (3,4) not aligned".into(),
            snippets: vec!["a = np.ones((3, 4))\nb = np.ones((3, 4))\nprint(np.dot(a, b))".into()],
            ..BugReport::default()
        };
        let c = input_for(&report, &restructure_rules(&report));
        assert!(c.code.starts_with("import numpy as np\n"), "{}", c.code);
        assert!(c.code.contains("np.random.seed(0)"));
        assert!(
            c.edits.iter().any(|e| e.contains("added missing imports")),
            "{:?}",
            c.edits
        );
        // A crash is its own evidence: no observer.
        assert!(!c.code.contains(OBSERVER_MARK));
    }

    #[test]
    fn notebooks_deprecations_and_data_files_are_handled() {
        let report = BugReport {
            title: "loss becomes nan; X has shape (50, 3)".into(),
            snippets: vec![
                "!pip install numpy\n%matplotlib inline\nimport numpy as np\nX = np.load('data/train.npy')\ny = np.loadtxt(\"labels.csv\", delimiter=\",\")\nw = np.zeros(3, dtype=np.float)\nfor epoch in range(100000):\n    pass\ndisplay(X)\n".into(),
            ],
            ..BugReport::default()
        };
        let r = restructure_rules(&report);
        let c = input_for(&report, &r);
        assert!(
            !c.code.contains("!pip") && !c.code.contains("%matplotlib"),
            "{}",
            c.code
        );
        assert!(
            c.code.contains("np.random.default_rng(0).standard_normal((50, 3))"),
            "{}",
            c.code
        );
        assert!(!c.code.contains("train.npy") && !c.code.contains("labels.csv"));
        assert!(c.code.contains("dtype=float"));
        assert!(c.code.contains("range(10000)"));
        assert!(c.code.contains("print(X)"));
        assert!(c.code.contains(OBSERVER_MARK));
        assert!(crate::checks::structural(&c.code).passed, "{}", c.code);
        assert!(c.edits.len() >= 6, "{:?}", c.edits);
    }

    #[test]
    fn pandas_frames_keep_the_columns_the_code_uses() {
        let mut code = "df = pd.read_csv('train.csv')\ny = df['label']\n".to_owned();
        synthesize_data(&mut code, &[10, 2]).unwrap();
        assert!(code.contains("columns=[\"label\"]"), "{code}");
        complete_imports(&mut code).unwrap();
        assert!(
            code.contains("import pandas as pd") && code.contains("import numpy as np"),
            "{code}"
        );
    }

    #[test]
    fn refinement_follows_the_feedback() {
        let report = BugReport {
            title: "loss is nan".into(),
            snippets: vec!["loss = np.log(x)\n".into()],
            ..BugReport::default()
        };
        let r = restructure_rules(&report);
        let input = GenInput {
            project_modules: &[],
            project: None,
            report: &report,
            restructured: &r,
            plan: &[],
            context: None,
        };
        let first = rule_candidate(&input);
        let diagnostics: Vec<RuffDiagnostic> = serde_json::from_str(
            r#"[{"code": "F821", "message": "Undefined name `x`", "location": {"row": 3, "column": 1}}]"#,
        )
        .unwrap();
        let verdicts = [CheckVerdict {
            check: CheckKind::Static,
            passed: false,
            score: None,
            detail: "ruff".into(),
            approximated: false,
            missing: None,
        }];
        let next = rule_refine(
            &input,
            &first,
            &Feedback {
                verdicts: &verdicts,
                diagnostics: &diagnostics,
                run: None,
            },
        )
        .unwrap();
        assert!(
            next.code
                .contains("x = np.random.default_rng(0).standard_normal((100, 4))"),
            "{}",
            next.code
        );
        // Nothing left to fix: no new candidate.
        assert!(rule_refine(&input, &next, &Feedback::default()).is_none());

        let broken = Candidate {
            code: "import numpy as np\nx = (1,\nprint(x)\ny = 2\n".into(),
            edits: vec![],
        };
        let verdicts = [crate::checks::structural(&broken.code)];
        let fixed = rule_refine(
            &input,
            &broken,
            &Feedback {
                verdicts: &verdicts,
                ..Feedback::default()
            },
        )
        .unwrap();
        assert!(fixed.edits[0].contains("commented out"), "{:?}", fixed.edits);

        // Names the project defines: its functions first, then how its entry point builds
        // the objects, so that the assignments can call them.
        let project = Project {
            files: vec![SourceFile {
                path: "report.py".into(),
                text: "def build():\n    return [1]\n\nif __name__ == \"__main__\":\n    a_model = build()\n".into(),
            }],
            notes: vec![],
        };
        let with_project = GenInput {
            project: Some(&project),
            ..input
        };
        let uses = Candidate {
            code: "import numpy as np\nprint(a_model)\n".into(),
            edits: vec![],
        };
        let diagnostics: Vec<RuffDiagnostic> = serde_json::from_str(
            r#"[{"code": "F821", "message": "Undefined name `a_model`", "location": {"row": 2, "column": 7}},
                {"code": "F821", "message": "Undefined name `build`", "location": {"row": 2, "column": 7}}]"#,
        )
        .unwrap();
        let defined = rule_refine(
            &with_project,
            &uses,
            &Feedback {
                verdicts: &verdicts,
                diagnostics: &diagnostics,
                run: None,
            },
        )
        .unwrap();
        // `a_model` sorts before `build`, yet the function comes first.
        let (function, built) = (
            defined.code.find("def build").expect("the function"),
            defined.code.find("a_model = build()").expect("the entry point's line"),
        );
        assert!(function < built, "{}", defined.code);
    }

    #[test]
    fn uncalled_context_functions_are_driven_with_synthetic_inputs() {
        let context = "import numpy as np\n\ndef helper(v):\n    return v * 2\n\ndef train(X, y, lr=0.1, epochs=5):\n    return helper(X).sum() + y.sum()\n";
        let mut code = context.to_owned();
        let edit = drive_context(&mut code, context, &[20, 3]).unwrap();
        assert!(code.contains("result_train = train(np.random.default_rng(0).standard_normal((20, 3)), np.random.default_rng(1).integers(0, 2, size=20))"), "{code}");
        // `helper` is called by `train`, so only `train` is driven.
        assert!(!code.contains("result_helper"), "{code}");
        assert!(edit.contains("train"));
        assert!(drive_context(&mut code, context, &[20, 3]).is_none(), "driven twice");
    }

    #[test]
    fn project_imports_are_inlined_and_the_entry_point_goes_last() {
        let modules = vec!["train".to_owned(), "pkg.data".to_owned(), "losses".to_owned()];
        let mut code = "# --- train.py ---\nimport numpy as np\nfrom losses import (\n    bce,\n)\nimport pkg.data as data\nfrom .model import Net\n\ndef fit(X):\n    return data.load(X)\n\nif __name__ == \"__main__\":\n    fit(np.ones(3))\n\n# --- losses.py ---\ndef bce(p):\n    return p\n\nif __name__ == '__main__':\n    print(bce(1))\n".to_owned();
        let edit = detach_project_imports(&mut code, &modules, None).unwrap();
        assert!(edit.contains("losses") && edit.contains("pkg.data"), "{edit}");
        assert!(
            !code.contains("from losses") && !code.contains("bce,") && !code.contains("from .model"),
            "{code}"
        );
        assert!(
            code.contains("import numpy as np") && code.contains("return load(X)"),
            "{code}"
        );
        hoist_main_blocks(&mut code).unwrap();
        assert!(code.trim_end().ends_with("fit(np.ones(3))"), "{code}");
        assert!(!code.contains("__main__") && !code.contains("print(bce(1))"), "{code}");
        assert!(crate::checks::structural(&code).passed, "{code}");
    }

    #[test]
    fn imported_project_modules_are_inlined_dependencies_first() {
        let project = Project {
            files: vec![
                SourceFile { path: "config.py".into(), text: "CONFIG = {\"learning_rate\": 0.1}\n".into() },
                SourceFile {
                    path: "pkg/trainer.py".into(),
                    text: "from config import CONFIG\n\nclass Trainer:\n    def __init__(self):\n        self.lr = CONFIG[\"lr\"]\n\nif __name__ == \"__main__\":\n    Trainer()\n".into(),
                },
            ],
            notes: vec![],
        };
        let modules = vec!["config".to_owned(), "pkg.trainer".to_owned()];
        let mut code = "import numpy as np\nfrom pkg.trainer import Trainer\n\nTrainer()\n".to_owned();
        let edit = detach_project_imports(&mut code, &modules, Some(&project)).unwrap();
        assert!(
            edit.contains("inlined the project's module(s) pkg/trainer.py, config.py"),
            "{edit}"
        );
        let config = code.find("CONFIG = ").unwrap();
        let trainer = code.find("class Trainer").unwrap();
        assert!(config < trainer && trainer < code.rfind("Trainer()").unwrap(), "{code}");
        assert!(!code.contains("__main__") && !code.contains("from config"), "{code}");
        assert!(crate::checks::structural(&code).passed, "{code}");
    }

    #[test]
    fn a_removed_api_that_is_the_bug_is_kept() {
        let mut code = "x = np.float(1)\ny = np.int(2)\n".to_owned();
        let edit = migrate_deprecated(&mut code, "AttributeError: module 'numpy' has no attribute 'float'").unwrap();
        assert_eq!(code, "x = np.float(1)\ny = int(2)\n");
        assert!(edit.contains("np.int") && !edit.contains("np.float"), "{edit}");
    }

    #[test]
    fn undefined_names_are_found_in_the_project() {
        let project = Project {
            files: vec![SourceFile {
                path: "featurize/helpers.py".into(),
                text:
                    "import numpy as np\nN_FEATURES = 4\nBIG = [\n  1,\n]\n\ndef scale(x):\n    return x * 2\n\nY = 1\n"
                        .into(),
            }],
            notes: vec![],
        };
        assert_eq!(
            project_definition(&project, "N_FEATURES").unwrap(),
            "N_FEATURES = 4  # from featurize/helpers.py"
        );
        assert_eq!(
            project_definition(&project, "scale").unwrap(),
            "# from featurize/helpers.py\ndef scale(x):\n    return x * 2"
        );
        assert!(project_definition(&project, "BIG").is_none());
        assert!(project_definition(&project, "missing").is_none());

        // Objects the entry point builds: taken from its `__main__` block, dedented.
        let project = Project {
            files: vec![SourceFile {
                path: "report.py".into(),
                text: "from fit import Net\n\nif __name__ == \"__main__\":\n    X, y = load(), labels()\n    model = Net().fit(X, y)\n    print(model)\n"
                    .into(),
            }],
            notes: vec![],
        };
        assert_eq!(
            project_definition(&project, "model").unwrap(),
            "model = Net().fit(X, y)  # from report.py (its entry point)"
        );
        assert_eq!(
            project_definition(&project, "y").unwrap(),
            "X, y = load(), labels()  # from report.py (its entry point)"
        );
        assert!(
            project_definition(&project, "Net").is_none(),
            "an import is not a definition"
        );
    }

    #[test]
    fn synthetic_data_follows_the_shapes_and_dtypes_a_line_states() {
        let mut code = "X = np.load(\"f.npy\")   # (120, 8)\ny = np.load(\"t.npy\")  # (120,)\nl = np.loadtxt(\"l.txt\", dtype=int)  # digits 0..9\ni = np.load(\"i.npy\")  # (5, 28, 28) uint8\n".to_owned();
        synthesize_data(&mut code, &[100, 4]).unwrap();
        assert!(code.contains("standard_normal((120, 8))"), "{code}");
        assert!(code.contains("standard_normal((120,))"), "{code}");
        assert!(code.contains("integers(0, 10, (100,))"), "{code}");
        assert!(
            code.contains("integers(0, 256, (5, 28, 28)).astype(np.uint8)"),
            "{code}"
        );
    }

    #[test]
    fn module_level_entry_code_goes_after_the_definitions_it_uses() {
        let context =
            "# --- main.py ---\nimport numpy as np\nm = Linear(3)\n\n# --- linear.py ---\nclass Linear:\n    pass\n";
        let code = entry_last(context);
        assert!(
            code.find("class Linear").unwrap() < code.find("m = Linear(3)").unwrap(),
            "{code}"
        );
        let defs_only = "# --- a.py ---\ndef f():\n    return g()\n\n# --- b.py ---\ndef g():\n    return 1\n";
        assert_eq!(entry_last(defs_only), defs_only);
    }

    #[test]
    fn code_is_taken_from_the_answer() {
        assert_eq!(extract_code("Here:\n```python\nprint(1)\n```\nDone."), "print(1)\n");
        assert_eq!(extract_code("```\nx = 1\n"), "x = 1\n");
        assert_eq!(extract_code("print(2)"), "print(2)\n");
    }

    #[test]
    fn defined_names_are_not_imported_again() {
        assert!(defines("import numpy as np", "np"));
        assert!(defines("for i, x in enumerate(d):\n    pass", "x"));
        assert!(defines("x, y = 1, 2", "y"));
        assert!(!defines("print(np.zeros(2))", "np"));
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
