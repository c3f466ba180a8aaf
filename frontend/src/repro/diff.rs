//! The line diff between one attempt of the agent and the previous one.

use similar::DiffOp;
use similar::algorithms::{Capture, myers};

/// One line of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine {
    Same(String),
    Added(String),
    Removed(String),
}

impl DiffLine {
    pub fn class(&self) -> &'static str {
        match self {
            Self::Same(_) => "same",
            Self::Added(_) => "added",
            Self::Removed(_) => "removed",
        }
    }

    pub fn sign(&self) -> &'static str {
        match self {
            Self::Same(_) => " ",
            Self::Added(_) => "+",
            Self::Removed(_) => "-",
        }
    }

    pub fn text(&self) -> &str {
        match self {
            Self::Same(s) | Self::Added(s) | Self::Removed(s) => s,
        }
    }
}

/// `old` → `new`, line by line. Myers over line slices directly: `similar`'s `TextDiff`
/// would bring every algorithm it can dispatch to (about 190 KB of wasm).
pub fn line_diff(old: &str, new: &str) -> Vec<DiffLine> {
    let old_lines: Vec<&str> = old.lines().collect();
    let new_lines: Vec<&str> = new.lines().collect();
    let mut capture = Capture::default();
    // Capturing cannot fail (its error type is `Infallible`).
    let _ = myers::diff(&mut capture, &old_lines[..], 0..old_lines.len(), &new_lines[..], 0..new_lines.len());
    let owned = |lines: &[&str], make: fn(String) -> DiffLine| lines.iter().map(|l| make((*l).to_owned())).collect::<Vec<_>>();
    let mut out = Vec::new();
    for op in capture.into_ops() {
        match op {
            DiffOp::Equal { old_index, len, .. } => out.extend(owned(&old_lines[old_index..old_index + len], DiffLine::Same)),
            DiffOp::Delete { old_index, old_len, .. } => {
                out.extend(owned(&old_lines[old_index..old_index + old_len], DiffLine::Removed));
            }
            DiffOp::Insert { new_index, new_len, .. } => {
                out.extend(owned(&new_lines[new_index..new_index + new_len], DiffLine::Added));
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                out.extend(owned(&old_lines[old_index..old_index + old_len], DiffLine::Removed));
                out.extend(owned(&new_lines[new_index..new_index + new_len], DiffLine::Added));
            }
        }
    }
    out
}

/// Lines added and removed.
pub fn counts(diff: &[DiffLine]) -> (usize, usize) {
    let added = diff.iter().filter(|l| matches!(l, DiffLine::Added(_))).count();
    let removed = diff.iter().filter(|l| matches!(l, DiffLine::Removed(_))).count();
    (added, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_is_removed_then_added() {
        let diff = line_diff("a\nb\nc\n", "a\nB\nc\nd\n");
        assert_eq!(
            diff,
            vec![
                DiffLine::Same("a".into()),
                DiffLine::Removed("b".into()),
                DiffLine::Added("B".into()),
                DiffLine::Same("c".into()),
                DiffLine::Added("d".into()),
            ]
        );
        assert_eq!(counts(&diff), (2, 1));
        assert!(line_diff("x\n", "x\n").iter().all(|l| matches!(l, DiffLine::Same(_))));
    }
}
