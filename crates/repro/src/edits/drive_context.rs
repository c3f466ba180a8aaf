//! Edit action: the retrieved context's entry points (top-level functions nothing calls)
//! called with synthetic arguments, so the project's code actually runs.

use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::Regex;

use super::code::{defines, re, shape_literal, strip_strings};
use super::define_undefined::synthetic_definition;
use super::stated_data::Stated;

/// Calls the context's top-level functions that nothing calls (at most the last two, the
/// likely entry points) with synthetic arguments, so the retrieved code actually runs.
pub(crate) fn drive_context(code: &mut String, context_code: &str, shape: &[usize]) -> Option<String> {
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
            let value = synthetic_definition(param, shape, &Stated::default(), code)
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
