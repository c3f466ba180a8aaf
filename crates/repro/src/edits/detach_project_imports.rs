//! Edit action: imports of the project's own modules replaced by their code (each file
//! once, dependencies first, entry points dropped), since the sandbox has only the script.

use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::Regex;

use super::code::{after_imports, re};
use super::hoist_main_blocks::split_entry_point;
use crate::project::{Project, SourceFile};

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

/// Inlines the project modules that `code` imports (each file once, dependencies first,
/// their entry points dropped) until no project import is left; at most 20 files.
pub(crate) fn detach_project_imports(
    code: &mut String,
    modules: &[String],
    project: Option<&Project>,
) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::super::hoist_main_blocks::hoist_main_blocks;
    use super::*;

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
}
