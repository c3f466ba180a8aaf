//! The suite on disk: one folder per case with its report, an optional project and its
//! ground truth (`case.json`), checked as it loads so a typo cannot hide a case.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use replayground_shared::repro::{BugReport, SymptomClass};
use serde::{Deserialize, Serialize};

use crate::project::Project;

/// The packages a case may require, by import name; anything else is refused so a typo
/// cannot hide a case.
pub const PACKAGES: [&str; 7] = [
    "numpy",
    "torch",
    "tensorflow",
    "torchvision",
    "pandas",
    "sklearn",
    "matplotlib",
];

/// What a case's `case.json` says is true.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseTruth {
    pub symptom: SymptomClass,
    /// For crashes and warnings: the exception or warning type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// The file to fix, inside the case's project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buggy_file: Option<String>,
    /// The project's files holding a loop that trains a model, whatever the framework.
    #[serde(default)]
    pub training_loop_files: Vec<String>,
    /// Python packages the reproduction needs, by import name (`numpy`, `torch`, `sklearn`, ...).
    pub requires: Vec<String>,
    #[serde(default)]
    pub notes: String,
}

/// One case of a suite, loaded and checked.
#[derive(Debug, Clone)]
pub struct Case {
    /// The case's folder name, e.g. `01-nan-log-zero`.
    pub name: String,
    pub report: BugReport,
    pub project: Option<Arc<Project>>,
    pub truth: CaseTruth,
    /// The lines a reproduction's output must show (`truth.json`'s `expected_output`,
    /// where the case has one): for a crash, its exception message.
    pub expected_output: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("The suite folder {} cannot be read ({source}). Pass --suite a folder of cases such as tests/repro-suite.", path.display())]
    Suite { path: PathBuf, source: std::io::Error },
    #[error("The suite folder {} holds no cases (sub-folders with a case.json). Pass --suite a folder of cases such as tests/repro-suite.", .0.display())]
    Empty(PathBuf),
    #[error("Case {case}: {reason}")]
    Case { case: String, reason: String },
    #[error("{}: {reason}", path.display())]
    Split { path: PathBuf, reason: String },
}

/// The file of a suite that names its splits: `{"development": ["01-…", …], "held_out": […]}`.
pub const SPLITS_FILE: &str = "splits.json";

/// The cases of `split`, as the suite's [`SPLITS_FILE`] names them, in name order.
pub fn select_split(dir: &Path, cases: Vec<Case>, split: &str) -> Result<Vec<Case>, BenchError> {
    let path = dir.join(SPLITS_FILE);
    let fail = |reason: String| BenchError::Split {
        path: path.clone(),
        reason,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        fail(format!(
            "cannot be read ({e}); --split needs a suite that names its splits"
        ))
    })?;
    let splits: std::collections::BTreeMap<String, Vec<String>> =
        serde_json::from_str(&text).map_err(|e| fail(format!("is not a JSON object of case lists ({e})")))?;
    let Some(names) = splits.get(split) else {
        let known: Vec<&str> = splits.keys().map(String::as_str).collect();
        return Err(fail(format!("has no split `{split}`; it has {}", known.join(", "))));
    };
    if let Some(missing) = names.iter().find(|n| !cases.iter().any(|c| &c.name == *n)) {
        return Err(fail(format!(
            "split `{split}` names {missing}, which is not a case of the suite"
        )));
    }
    Ok(cases.into_iter().filter(|c| names.contains(&c.name)).collect())
}

pub(super) fn case_error(case: &str, reason: impl Into<String>) -> BenchError {
    BenchError::Case {
        case: case.to_owned(),
        reason: reason.into(),
    }
}

/// Loads one case folder and checks its ground truth against its project.
pub fn load_case(dir: &Path) -> Result<Case, BenchError> {
    let name = dir
        .file_name()
        .map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned());
    let truth_text = std::fs::read_to_string(dir.join("case.json"))
        .map_err(|e| case_error(&name, format!("case.json cannot be read ({e})")))?;
    let truth: CaseTruth = serde_json::from_str(&truth_text).map_err(|e| {
        case_error(
            &name,
            format!("case.json is not valid ({e}); see tests/repro-suite/README.md"),
        )
    })?;
    if let Some(unknown) = truth.requires.iter().find(|r| !PACKAGES.contains(&r.as_str())) {
        return Err(case_error(
            &name,
            format!("requires `{unknown}`; known packages are {}", PACKAGES.join(", ")),
        ));
    }
    if truth.requires.is_empty() {
        return Err(case_error(
            &name,
            "requires is empty; name the packages the reproduction needs",
        ));
    }
    let report_path = ["report.json", "report.md", "report.txt"]
        .iter()
        .map(|file| dir.join(file))
        .find(|path| path.is_file())
        .ok_or_else(|| case_error(&name, "has no report.json, report.md or report.txt"))?;
    let report = crate::report::read_report(&report_path).map_err(|e| case_error(&name, e))?;
    let project_dir = dir.join("project");
    let project = if project_dir.is_dir() {
        let project = Project::from_dir(&project_dir)
            .map_err(|e| case_error(&name, format!("its project cannot be read: {e}")))?;
        Some(Arc::new(project))
    } else {
        None
    };
    let named_files = truth.buggy_file.iter().chain(&truth.training_loop_files);
    for file in named_files {
        let present = project.as_ref().is_some_and(|p| p.file(file).is_some());
        if !present {
            return Err(case_error(
                &name,
                format!("case.json names `{file}`, which is not in its project/"),
            ));
        }
    }
    if project.is_some() && truth.buggy_file.is_none() {
        return Err(case_error(&name, "has a project/ but case.json names no buggy_file"));
    }
    Ok(Case {
        expected_output: expected_output(dir, &name)?,
        name,
        report,
        project,
        truth,
    })
}

/// `truth.json`'s `expected_output` (the lines a reproduction must show), when the case has
/// that file; its other fields (the case's source) are for people.
fn expected_output(dir: &Path, name: &str) -> Result<Vec<String>, BenchError> {
    #[derive(Deserialize)]
    struct TruthFile {
        #[serde(default)]
        expected_output: Vec<String>,
    }
    let path = dir.join("truth.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(Vec::new());
    };
    let file: TruthFile = serde_json::from_str(&text).map_err(|e| {
        case_error(
            name,
            format!("truth.json is not valid ({e}); expected_output is a list of lines"),
        )
    })?;
    Ok(file.expected_output)
}

/// Loads every case of a suite folder, sorted by name.
pub fn load_suite(dir: &Path) -> Result<Vec<Case>, BenchError> {
    let entries = std::fs::read_dir(dir).map_err(|source| BenchError::Suite {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut folders: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join("case.json").is_file())
        .collect();
    folders.sort();
    if folders.is_empty() {
        return Err(BenchError::Empty(dir.to_path_buf()));
    }
    folders.iter().map(|folder| load_case(folder)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_keeps_the_cases_it_names_and_bad_splits_are_explained() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["01-a", "02-b", "03-c"] {
            let case = dir.path().join(name);
            std::fs::create_dir_all(&case).unwrap();
            std::fs::write(case.join("report.md"), "loss is nan").unwrap();
            std::fs::write(
                case.join("case.json"),
                r#"{"symptom": "wrong_calculation", "requires": ["numpy"]}"#,
            )
            .unwrap();
        }
        let cases = || load_suite(dir.path()).unwrap();
        let error = select_split(dir.path(), cases(), "held_out").unwrap_err().to_string();
        assert!(
            error.contains("splits.json") && error.contains("cannot be read"),
            "{error}"
        );
        std::fs::write(
            dir.path().join(SPLITS_FILE),
            r#"{"development": ["02-b"], "held_out": ["01-a", "03-c"]}"#,
        )
        .unwrap();
        let names = |split| -> Vec<String> {
            select_split(dir.path(), cases(), split)
                .unwrap()
                .into_iter()
                .map(|c| c.name)
                .collect()
        };
        assert_eq!(names("held_out"), ["01-a", "03-c"]);
        assert_eq!(names("development"), ["02-b"]);
        let error = select_split(dir.path(), cases(), "test").unwrap_err().to_string();
        assert!(
            error.contains("no split `test`; it has development, held_out"),
            "{error}"
        );
        std::fs::write(dir.path().join(SPLITS_FILE), r#"{"x": ["09-z"]}"#).unwrap();
        let error = select_split(dir.path(), cases(), "x").unwrap_err().to_string();
        assert!(error.contains("09-z, which is not a case"), "{error}");
    }

    #[test]
    fn bad_ground_truth_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let case = dir.path().join("01-x");
        std::fs::create_dir_all(case.join("project")).unwrap();
        std::fs::write(case.join("report.md"), "loss is nan").unwrap();
        std::fs::write(case.join("project/train.py"), "x = 1\n").unwrap();
        std::fs::write(
            case.join("case.json"),
            r#"{"symptom": "nan_loss", "requires": ["numpy"]}"#,
        )
        .unwrap();
        assert!(
            load_case(&case)
                .unwrap_err()
                .to_string()
                .contains("case.json is not valid")
        );
        std::fs::write(
            case.join("case.json"),
            r#"{"symptom": "wrong_calculation", "buggy_file": "loss.py", "requires": ["numpy"]}"#,
        )
        .unwrap();
        assert!(load_case(&case).unwrap_err().to_string().contains("`loss.py`"));
        std::fs::write(
            case.join("case.json"),
            r#"{"symptom": "crash", "buggy_file": "train.py", "requires": ["jax"]}"#,
        )
        .unwrap();
        assert!(load_case(&case).unwrap_err().to_string().contains("`jax`"));
        std::fs::write(
            case.join("case.json"),
            r#"{"symptom": "crash", "buggy_file": "train.py", "requires": ["numpy"]}"#,
        )
        .unwrap();
        let loaded = load_case(&case).unwrap();
        assert_eq!(loaded.report.free_text, "loss is nan");
        assert!(load_suite(&case).is_err(), "a case folder is not a suite");
        assert_eq!(load_suite(dir.path()).unwrap().len(), 1);
    }
}
