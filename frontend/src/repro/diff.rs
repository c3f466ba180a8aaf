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
    let _ = myers::diff(
        &mut capture,
        &old_lines[..],
        0..old_lines.len(),
        &new_lines[..],
        0..new_lines.len(),
    );
    // Within each changed stretch, removed lines come before added ones, as diffs read.
    let mut out = Vec::new();
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    for op in capture.into_ops() {
        let (old_part, new_part, same) = match op {
            DiffOp::Equal { old_index, len, .. } => (old_index..old_index + len, 0..0, true),
            DiffOp::Delete { old_index, old_len, .. } => (old_index..old_index + old_len, 0..0, false),
            DiffOp::Insert { new_index, new_len, .. } => (0..0, new_index..new_index + new_len, false),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => (old_index..old_index + old_len, new_index..new_index + new_len, false),
        };
        if same {
            out.append(&mut removed);
            out.append(&mut added);
            out.extend(old_lines[old_part].iter().map(|l| DiffLine::Same((*l).to_owned())));
        } else {
            removed.extend(old_lines[old_part].iter().map(|l| DiffLine::Removed((*l).to_owned())));
            added.extend(new_lines[new_part].iter().map(|l| DiffLine::Added((*l).to_owned())));
        }
    }
    out.append(&mut removed);
    out.append(&mut added);
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
