//! Edit action: every warning made visible when the report is about one.

use replayground_shared::repro::{RestructuredReport, SymptomClass};

use super::code::add_imports;

pub(crate) fn show_warnings(code: &mut String, report: &RestructuredReport) -> Option<String> {
    if report.symptom.class != SymptomClass::Warning || code.contains("simplefilter(\"always\")") {
        return None;
    }
    add_imports(code, &["import warnings", "warnings.simplefilter(\"always\")"]);
    Some("made every warning visible".to_owned())
}
