//! Edit action: the imports of a module that is not installed here and that neither the
//! report nor the project uses (a generator made it up, e.g. `from reproduction_script
//! import fit` in a script that defines `fit` itself) are removed; the names they bound
//! are returned so that refinement can define the ones the script still lacks.

use std::sync::LazyLock;

use regex::Regex;

use super::code::re;

/// Whether `name` (a dotted module path) is `module` or inside it.
fn is_module(name: &str, module: &str) -> bool {
    name == module || name.strip_prefix(module).is_some_and(|rest| rest.starts_with('.'))
}

/// Removes every import of `module` from `code`; the edit made and the names those imports
/// bound, or `None` when `code` does not import it.
pub(crate) fn drop_imports_of(code: &mut String, module: &str) -> Option<(String, Vec<String>)> {
    // `from M import a, b as c` (parenthesised over several lines too) and `import M, N as X`.
    static FROM: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?m)^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)[ \t]*(?:\n|\z)"));
    static IMPORT: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^([ \t]*)import[ \t]+([^\n#]+)(?:#[^\n]*)?(\n|\z)"));
    let mut bound: Vec<String> = Vec::new();
    let mut removed = 0;
    let text = FROM
        .replace_all(code, |c: &regex::Captures<'_>| {
            if !is_module(&c[1], module) {
                return c[0].to_owned();
            }
            removed += 1;
            for item in c[2].trim_matches(['(', ')']).split(',') {
                let item = item.split('#').next().unwrap_or("").trim();
                if let Some(name) = item.split_whitespace().last().filter(|n| *n != "*") {
                    bound.push(name.to_owned());
                }
            }
            String::new()
        })
        .into_owned();
    let text = IMPORT
        .replace_all(&text, |c: &regex::Captures<'_>| {
            let items: Vec<&str> = c[2].split(',').map(str::trim).filter(|i| !i.is_empty()).collect();
            let (dropped, kept): (Vec<&str>, Vec<&str>) = items.into_iter().partition(|item| {
                item.split_whitespace()
                    .next()
                    .is_some_and(|name| is_module(name, module))
            });
            if dropped.is_empty() {
                return c[0].to_owned();
            }
            removed += dropped.len();
            for item in dropped {
                let words: Vec<&str> = item.split_whitespace().collect();
                let name = match words.as_slice() {
                    [_, "as", alias] => (*alias).to_owned(),
                    [path, ..] => path.split('.').next().unwrap_or(path).to_owned(),
                    [] => continue,
                };
                bound.push(name);
            }
            let (indent, end) = (&c[1], &c[3]);
            match (kept.is_empty(), indent.is_empty()) {
                // A statement must stay where a block needs one.
                (true, false) => format!("{indent}pass{end}"),
                (true, true) => String::new(),
                (false, _) => format!("{indent}import {}{end}", kept.join(", ")),
            }
        })
        .into_owned();
    if removed == 0 {
        return None;
    }
    *code = text;
    bound.sort();
    bound.dedup();
    Some((
        format!(
            "removed the import{} of `{module}`, which is not installed here and which neither the report nor the project uses",
            if removed == 1 { "" } else { "s" }
        ),
        bound,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invented_imports_go_and_say_what_they_bound() {
        let mut code = "import numpy as np\nfrom reproduction_script import fit, Model as M\nimport reproduction_script.util, os\n\ndef fit():\n    pass\n".to_owned();
        let (edit, bound) = drop_imports_of(&mut code, "reproduction_script").unwrap();
        assert!(edit.contains("`reproduction_script`"), "{edit}");
        assert_eq!(bound, ["M", "fit", "reproduction_script"]);
        assert_eq!(code, "import numpy as np\nimport os\n\ndef fit():\n    pass\n");
        assert!(drop_imports_of(&mut code, "reproduction_script").is_none());
        // A module whose name only starts the same way is kept.
        let mut other = "import reproduction_scripts\n".to_owned();
        assert!(drop_imports_of(&mut other, "reproduction_script").is_none());
    }

    #[test]
    fn an_indented_import_leaves_a_valid_block() {
        let mut code = "try:\n    import helpers\nexcept ImportError:\n    helpers = None\nfrom helpers import (\n    a,\n    b,  # two\n)\nprint(1)\n".to_owned();
        let (_, bound) = drop_imports_of(&mut code, "helpers").unwrap();
        assert_eq!(bound, ["a", "b", "helpers"]);
        assert_eq!(
            code,
            "try:\n    pass\nexcept ImportError:\n    helpers = None\nprint(1)\n"
        );
    }
}
