//! Edit action: a check appended that prints each numeric result (value or shape) and
//! flags NaN/inf, so a silent symptom becomes observable.

use replayground_shared::repro::{RestructuredReport, SymptomClass};

/// Marks the start of the appended check, so it is appended once.
pub(crate) const OBSERVER_MARK: &str = "# replayground: make the symptom observable";

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

pub(crate) fn append_observer(code: &mut String, report: &RestructuredReport) -> Option<String> {
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
