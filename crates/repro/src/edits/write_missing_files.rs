//! Refinement edit: a `.npy` file a run found missing (`FileNotFoundError: … 'data/x.npy'`),
//! read through a path the code passes around (`np.load(features_path)`, which
//! `synthesize_data` cannot see), written before the script runs: synthetic values of the
//! shape the report states for that file (`features.npy is float32 of shape (1000, 8)`).

use std::sync::LazyLock;

use regex::Regex;

use super::code::{insert_after_imports, re, shape_literal};
use super::stated_data::{LABEL_NAMES, stated};
use crate::checks::RunObservation;

const HELPER: &str = "_replayground_write_array";

/// The relative path of the `.npy` file whose absence made the run fail, if it did.
pub(crate) fn missing_array_file(run: &RunObservation) -> Option<String> {
    static PATH: LazyLock<Regex> = LazyLock::new(|| re(r#"No such file or directory: ['"]([^'"]+\.npy)['"]"#));
    let traceback = run.traceback.as_ref().filter(|t| t.error_type == "FileNotFoundError")?;
    let path = PATH.captures(&traceback.message)?[1].to_owned();
    // Only where the sandbox can write: its working folder, not above it.
    let relative = !path.starts_with('/') && !path.split('/').any(|part| part == "..");
    relative.then_some(path)
}

/// Writes `path` (a `.npy` file the code names as a string) with synthetic values at the
/// start of the script: the shape and dtype the `report` states for it, else `shape`.
pub(crate) fn write_missing_file(code: &mut String, path: &str, report: &str, shape: &[usize]) -> Option<String> {
    let named = [format!("\"{path}\""), format!("'{path}'")];
    if !named.iter().any(|literal| code.contains(literal.as_str())) {
        return None;
    }
    let call_prefix = format!("{HELPER}({path:?},");
    if code.contains(&call_prefix) {
        // Written already: the run failed for another reason.
        return None;
    }
    let file = path.rsplit('/').next().unwrap_or(path);
    let stated = stated(report, file);
    let shape = stated.shape.unwrap_or_else(|| shape.to_vec());
    let role = role_of(file);
    let dtype = if stated.float32 {
        "float32"
    } else if role == "label" {
        "int64"
    } else {
        "float64"
    };
    let call = format!("{call_prefix} {}, \"{dtype}\", \"{role}\")\n", shape_literal(&shape));
    let calls_end = code
        .match_indices(&format!("\n{HELPER}("))
        .last()
        .map(|(at, _)| code[at + 1..].find('\n').map_or(code.len(), |end| at + 1 + end + 1));
    match calls_end {
        Some(at) => code.insert_str(at.min(code.len()), &call),
        None => insert_after_imports(code, &format!("\n\n{}\n\n{call}", helper_definition())),
    }
    Some(format!(
        "wrote {path}, which the report does not include, with synthetic values of shape {}",
        shape_literal(&shape)
    ))
}

/// What a file holds, by its name: `label` (0/1 classes: `labels.npy`, `y_class.npy`),
/// `target` (a continuous value: `targets.npy`, `y.npy`), else `feature`.
fn role_of(file: &str) -> &'static str {
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem).to_lowercase();
    if stem.contains("label") || stem.contains("class") {
        "label"
    } else if LABEL_NAMES.contains(&stem.as_str()) || stem.contains("target") || stem.starts_with("y_") {
        "target"
    } else {
        "feature"
    }
}

/// The helper: labels and targets follow the features written before them (a linear
/// signal, its sign for labels), so that a model can learn them and a bug that keeps it
/// from learning shows as a difference.
fn helper_definition() -> String {
    format!(
        r#"{HELPER}_written = []


def {HELPER}(path, shape, dtype, role):
    """Writes a synthetic array where the script reads a data file that is not here."""
    import os
    import numpy as np
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    values = np.random.default_rng(sum(map(ord, path))).standard_normal(shape)
    rows = [a for a in {HELPER}_written if a.ndim == 2 and a.shape[0] == shape[0]]
    if role != "feature" and rows and int(np.prod(shape)) == shape[0]:
        signal = rows[0] @ np.linspace(1.0, -0.5, rows[0].shape[1])
        values = ((signal > 0) if role == "label" else signal).reshape(shape)
    values = values.astype(dtype)
    {HELPER}_written.append(values)
    np.save(path, values)"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::observe;
    use replayground_exec::sandbox::Termination;

    fn failed_with(stderr: &str) -> RunObservation {
        observe(Termination::Exited(1), "", stderr, 1)
    }

    #[test]
    fn a_missing_array_file_the_code_names_is_written_first() {
        let stderr = "Traceback (most recent call last):\n  File \"x.py\", line 9, in __init__\nFileNotFoundError: [Errno 2] No such file or directory: 'data/features.npy'\n";
        let path = missing_array_file(&failed_with(stderr)).unwrap();
        assert_eq!(path, "data/features.npy");
        let report = "features.npy is float32 of shape (1000, 8), targets.npy is (1000,).";
        let mut code = "import numpy as np\n\nclass D:\n    def __init__(self, f, t):\n        self.x = np.load(f)\n        self.y = np.load(t)\n\nds = D(\"data/features.npy\", \"data/targets.npy\")\n".to_owned();
        let edit = write_missing_file(&mut code, &path, report, &[100, 4]).unwrap();
        assert!(edit.contains("(1000, 8)"), "{edit}");
        assert!(
            code.contains("\n_replayground_write_array(\"data/features.npy\", (1000, 8), \"float32\", \"feature\")\n"),
            "{code}"
        );
        assert!(
            write_missing_file(&mut code, &path, report, &[100, 4]).is_none(),
            "written once"
        );
        write_missing_file(&mut code, "data/targets.npy", report, &[100, 4]).unwrap();
        let (features, targets, read) = (
            code.find("_replayground_write_array(\"data/features.npy\"").unwrap(),
            code.find("_replayground_write_array(\"data/targets.npy\", (1000,), \"float64\", \"target\")")
                .unwrap(),
            code.find("ds = D(").unwrap(),
        );
        assert!(features < targets && targets < read, "{code}");
        assert_eq!(code.matches("def _replayground_write_array").count(), 1, "{code}");
        assert_eq!(
            (role_of("labels.npy"), role_of("y.npy"), role_of("x_train.npy")),
            ("label", "target", "feature")
        );
        // A file the code does not name, or one outside the working folder, is left alone.
        assert!(write_missing_file(&mut code, "other.npy", report, &[100, 4]).is_none());
        let absolute = stderr.replace("'data/features.npy'", "'/data/features.npy'");
        assert_eq!(missing_array_file(&failed_with(&absolute)), None);
    }
}
