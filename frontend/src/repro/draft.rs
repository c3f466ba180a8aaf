//! The bug-report form's contents: what the person typed (kept in localStorage so a
//! reload or an error loses nothing), checked field by field, and turned into a
//! [`BugReport`].

use replayground_shared::repro::{BugReport, Environment, MAX_PROJECT_ARCHIVE_BYTES, MAX_REPORT_FIELD_BYTES};
use serde::{Deserialize, Serialize};

/// The whole report, as JSON, must fit in one WebSocket message (the server's default
/// limit is 512 KiB; the rest of the message needs a little room).
pub const MAX_REPORT_JSON_BYTES: usize = 480 * 1024;

/// Where the draft is kept between visits.
pub const DRAFT_KEY: &str = "replayground-repro-draft";

/// How the report is written: field by field, or pasted whole from an issue tracker.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    #[default]
    Structured,
    Paste,
}

/// One code snippet of the report; `id` keys it in the list while others are removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snippet {
    pub id: u32,
    pub code: String,
}

/// An archive the server accepted (`POST /api/projects`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadedProject {
    pub id: String,
    pub file_name: String,
    pub files: u32,
    pub python_files: u32,
}

/// Everything typed into the form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Draft {
    pub mode: Mode,
    pub title: String,
    pub description: String,
    pub observed: String,
    pub expected: String,
    pub snippets: Vec<Snippet>,
    pub python: String,
    /// One framework per line or comma-separated, e.g. `numpy 1.24`.
    pub frameworks: String,
    pub hardware: String,
    pub free_text: String,
    pub project: Option<UploadedProject>,
}

impl Default for Draft {
    fn default() -> Self {
        Self {
            mode: Mode::Structured,
            title: String::new(),
            description: String::new(),
            observed: String::new(),
            expected: String::new(),
            snippets: vec![Snippet {
                id: 1,
                code: String::new(),
            }],
            python: String::new(),
            frameworks: String::new(),
            hardware: String::new(),
            free_text: String::new(),
            project: None,
        }
    }
}

/// A form field a message is shown next to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    Title,
    Description,
    Observed,
    Expected,
    Snippet(u32),
    Python,
    Hardware,
    Frameworks,
    FreeText,
    Project,
    /// The report as a whole (shown above the Run button).
    Report,
}

impl Field {
    /// The id of the element that shows this field's message (`aria-describedby`).
    pub fn message_id(self) -> String {
        match self {
            Self::Title => "title-error".into(),
            Self::Description => "description-error".into(),
            Self::Observed => "observed-error".into(),
            Self::Expected => "expected-error".into(),
            Self::Snippet(id) => format!("snippet-{id}-error"),
            Self::Python => "python-error".into(),
            Self::Hardware => "hardware-error".into(),
            Self::Frameworks => "frameworks-error".into(),
            Self::FreeText => "free-text-error".into(),
            Self::Project => "project-error".into(),
            Self::Report => "report-error".into(),
        }
    }

    /// The id of the control to focus when this field needs fixing.
    pub fn input_id(self) -> String {
        match self {
            Self::Title => "title".into(),
            Self::Description => "description".into(),
            Self::Observed => "observed".into(),
            Self::Expected => "expected".into(),
            Self::Snippet(id) => format!("snippet-{id}"),
            Self::Python => "python".into(),
            Self::Hardware => "hardware".into(),
            Self::Frameworks => "frameworks".into(),
            Self::FreeText => "free-text".into(),
            Self::Project => "project-file".into(),
            Self::Report => "repro-run".into(),
        }
    }
}

/// A message for one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: Field,
    pub message: String,
}

fn too_long(text: &str) -> Option<String> {
    (text.len() > MAX_REPORT_FIELD_BYTES).then(|| {
        format!(
            "This is {} KB; the limit is {} KB. Keep the part that shows the bug.",
            text.len().div_ceil(1024),
            MAX_REPORT_FIELD_BYTES / 1024
        )
    })
}

impl Draft {
    /// The next free snippet id.
    pub fn next_snippet_id(&self) -> u32 {
        self.snippets.iter().map(|s| s.id).max().unwrap_or(0) + 1
    }

    /// Framework lines, split on newlines and commas, trimmed, without empties.
    pub fn framework_list(&self) -> Vec<String> {
        self.frameworks
            .split(['\n', ','])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// The report the agent gets. In paste mode only the pasted text (and the
    /// environment) is sent: the agent restructures it.
    pub fn report(&self) -> BugReport {
        let environment = Environment {
            python: self.python.trim().to_owned(),
            frameworks: self.framework_list(),
            hardware: self.hardware.trim().to_owned(),
        };
        match self.mode {
            Mode::Paste => BugReport {
                free_text: self.free_text.clone(),
                environment,
                ..BugReport::default()
            },
            Mode::Structured => BugReport {
                title: self.title.trim().to_owned(),
                description: self.description.clone(),
                observed: self.observed.clone(),
                expected: self.expected.clone(),
                snippets: self
                    .snippets
                    .iter()
                    .filter(|s| !s.code.trim().is_empty())
                    .map(|s| s.code.clone())
                    .collect(),
                environment,
                free_text: String::new(),
            },
        }
    }

    /// Fills the Environment fields from the versions the pasted issue names, keeping what
    /// the person typed: a field changes only while it is empty or still holds what the
    /// pasted text before this change filled in.
    pub fn fill_environment(&mut self, previous_text: &str) {
        let before = super::environment::found_in(previous_text);
        let now = super::environment::found_in(&self.free_text);
        for (field, was, is) in [
            (&mut self.python, before.python, now.python),
            (
                &mut self.frameworks,
                before.frameworks.join("\n"),
                now.frameworks.join("\n"),
            ),
            (&mut self.hardware, before.hardware, now.hardware),
        ] {
            if field.trim().is_empty() || *field == was {
                *field = is;
            }
        }
    }

    /// A draft showing `report` (a stored reproduction being rerun).
    pub fn from_report(report: &BugReport) -> Self {
        let mode = if report.free_text.trim().is_empty() {
            Mode::Structured
        } else {
            Mode::Paste
        };
        let mut snippets: Vec<Snippet> = report
            .snippets
            .iter()
            .zip(1..)
            .map(|(code, id)| Snippet { id, code: code.clone() })
            .collect();
        if snippets.is_empty() {
            snippets.push(Snippet {
                id: 1,
                code: String::new(),
            });
        }
        Self {
            mode,
            title: report.title.clone(),
            description: report.description.clone(),
            observed: report.observed.clone(),
            expected: report.expected.clone(),
            snippets,
            python: report.environment.python.clone(),
            frameworks: report.environment.frameworks.join("\n"),
            hardware: report.environment.hardware.clone(),
            free_text: report.free_text.clone(),
            project: None,
        }
    }

    /// Every problem, each next to its field; empty when the report can be run.
    pub fn validate(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let mut push = |field, message: String| errors.push(FieldError { field, message });
        match self.mode {
            Mode::Paste => {
                if self.free_text.trim().is_empty() {
                    push(
                        Field::FreeText,
                        "Paste the issue's text here: its title, what happens and any stack trace or code.".into(),
                    );
                } else if self.free_text.trim().len() < 20 {
                    push(
                        Field::FreeText,
                        "This is too short to reproduce: include what happens and what should happen.".into(),
                    );
                }
                if let Some(m) = too_long(&self.free_text) {
                    push(Field::FreeText, m);
                }
            }
            Mode::Structured => {
                if self.title.trim().is_empty() {
                    push(
                        Field::Title,
                        "Give the report a title: one line that names the bug.".into(),
                    );
                }
                let has_code = self.snippets.iter().any(|s| !s.code.trim().is_empty());
                if self.observed.trim().is_empty() && !has_code && self.description.trim().is_empty() {
                    push(
                        Field::Observed,
                        "Say what goes wrong: paste the error, the stack trace or the metrics, or add a code snippet below."
                            .into(),
                    );
                }
                for (field, text) in [
                    (Field::Title, &self.title),
                    (Field::Description, &self.description),
                    (Field::Observed, &self.observed),
                    (Field::Expected, &self.expected),
                ] {
                    if let Some(m) = too_long(text) {
                        push(field, m);
                    }
                }
                for snippet in &self.snippets {
                    if let Some(m) = too_long(&snippet.code) {
                        push(Field::Snippet(snippet.id), m);
                    }
                }
            }
        }
        if self.framework_list().len() > 32 {
            push(
                Field::Frameworks,
                "List at most 32 frameworks: the ones the bug involves.".into(),
            );
        }
        if !errors.is_empty() {
            return errors;
        }
        let report = self.report();
        let json_bytes = serde_json::to_vec(&report).map_or(0, |json| json.len());
        let message = if json_bytes > MAX_REPORT_JSON_BYTES {
            Some(format!(
                "The report is {} KB in all; the server takes at most {} KB. Shorten the longest fields or snippets.",
                json_bytes.div_ceil(1024),
                MAX_REPORT_JSON_BYTES / 1024
            ))
        } else {
            report.check().err()
        };
        if let Some(message) = message {
            errors.push(FieldError {
                field: Field::Report,
                message,
            });
        }
        errors
    }
}

/// Why an archive is refused before it is sent; `None` when it may be uploaded.
pub fn check_archive(name: &str, size: f64) -> Option<String> {
    let extension = std::path::Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let tar_gz = name.to_ascii_lowercase().ends_with(".tar.gz");
    if !(tar_gz || extension == "zip" || extension == "tgz") {
        return Some(format!(
            "{name} is not a .zip or .tar.gz archive; pack the project's folder as one."
        ));
    }
    #[allow(clippy::cast_precision_loss, reason = "20 MiB is exact in an f64")]
    let limit = MAX_PROJECT_ARCHIVE_BYTES as f64;
    if size > limit {
        return Some(format!(
            "{name} is {:.1} MB; the limit is {} MB. Leave out data, checkpoints and virtual environments.",
            size / 1_048_576.0,
            MAX_PROJECT_ARCHIVE_BYTES / 1_048_576
        ));
    }
    if size <= 0.0 {
        return Some(format!("{name} is empty."));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_form_names_the_fields_to_fill() {
        let errors = Draft::default().validate();
        let fields: Vec<Field> = errors.iter().map(|e| e.field).collect();
        assert_eq!(fields, vec![Field::Title, Field::Observed]);
        let paste = Draft {
            mode: Mode::Paste,
            ..Draft::default()
        };
        assert_eq!(paste.validate()[0].field, Field::FreeText);
    }

    #[test]
    fn a_filled_form_becomes_a_report_without_empty_snippets() {
        let mut draft = Draft {
            title: " NaN loss ".into(),
            observed: "loss is nan".into(),
            frameworks: "numpy 1.24, torch 2.3\n\n".into(),
            ..Draft::default()
        };
        draft.snippets.push(Snippet {
            id: 2,
            code: "import numpy as np".into(),
        });
        assert!(draft.validate().is_empty(), "{:?}", draft.validate());
        let report = draft.report();
        assert_eq!(report.title, "NaN loss");
        assert_eq!(report.snippets, vec!["import numpy as np".to_owned()]);
        assert_eq!(report.environment.frameworks, vec!["numpy 1.24", "torch 2.3"]);
        assert_eq!(Draft::from_report(&report).report(), report);
    }

    #[test]
    fn oversized_fields_are_named_next_to_them() {
        let mut draft = Draft {
            title: "t".into(),
            observed: "x".repeat(MAX_REPORT_FIELD_BYTES + 1),
            ..Draft::default()
        };
        draft.snippets[0].code = "y".repeat(MAX_REPORT_FIELD_BYTES + 1);
        let errors = draft.validate();
        assert!(
            errors
                .iter()
                .any(|e| e.field == Field::Observed && e.message.contains("64 KB"))
        );
        assert!(errors.iter().any(|e| e.field == Field::Snippet(1)));

        // Every field within its limit, the whole over one message.
        let mut draft = Draft {
            title: "t".into(),
            observed: "x".repeat(MAX_REPORT_FIELD_BYTES),
            ..Draft::default()
        };
        for id in 2..10 {
            draft.snippets.push(Snippet {
                id,
                code: "y".repeat(MAX_REPORT_FIELD_BYTES),
            });
        }
        let errors = draft.validate();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].field, Field::Report);
        assert!(errors[0].message.contains("at most 480 KB"), "{}", errors[0].message);
    }

    #[test]
    fn archives_are_checked_before_upload() {
        assert!(check_archive("p.zip", 1000.0).is_none());
        assert!(check_archive("p.tar.gz", 1000.0).is_none());
        assert!(check_archive("p.rar", 1000.0).unwrap().contains(".zip or .tar.gz"));
        assert!(
            check_archive("p.zip", 30.0 * 1_048_576.0)
                .unwrap()
                .contains("limit is 20 MB")
        );
    }

    #[test]
    fn a_pasted_issue_fills_the_environment_but_not_over_what_was_typed() {
        let mut draft = Draft {
            mode: Mode::Paste,
            hardware: "my laptop".into(),
            ..Draft::default()
        };
        draft.free_text = "NaN loss\nPython 3.10.4, torch==2.1.0\nGPU: NVIDIA T4".into();
        draft.fill_environment("");
        assert_eq!(
            (
                draft.python.as_str(),
                draft.frameworks.as_str(),
                draft.hardware.as_str()
            ),
            ("3.10.4", "torch 2.1.0", "my laptop")
        );
        // Another issue pasted over it replaces what the first one filled in.
        let first = std::mem::replace(&mut draft.free_text, "Python 3.12 with numpy 2.0.1".into());
        draft.fill_environment(&first);
        assert_eq!(
            (draft.python.as_str(), draft.frameworks.as_str()),
            ("3.12", "numpy 2.0.1")
        );
        // A version typed by hand stays.
        draft.python = "3.9".into();
        let second = std::mem::replace(&mut draft.free_text, "Python 3.13".into());
        draft.fill_environment(&second);
        assert_eq!(draft.python, "3.9");
    }

    #[test]
    fn old_drafts_still_load() {
        let draft: Draft = serde_json::from_str(r#"{"title":"x"}"#).unwrap();
        assert_eq!(draft.title, "x");
        assert_eq!(draft.snippets.len(), 1);
    }
}
