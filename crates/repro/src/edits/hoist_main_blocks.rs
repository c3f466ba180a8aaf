//! Edit action: the `if __name__ == "__main__":` body of the first inlined file moved to
//! the end, after every definition, and the other files' entry points dropped.

use std::sync::LazyLock;

use regex::Regex;

use super::code::re;

/// Moves the `if __name__ == "__main__":` body of the first file to the end (every
/// definition of the inlined files comes first) and drops the other files' entry points.
pub(crate) fn hoist_main_blocks(code: &mut String) -> Option<String> {
    static MAIN: LazyLock<Regex> = LazyLock::new(|| re(r#"^if\s+__name__\s*==\s*['"]__main__['"]\s*:\s*$"#));
    let lines: Vec<&str> = code.lines().collect();
    let mut kept = String::new();
    let mut blocks: Vec<Vec<&str>> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if MAIN.is_match(lines[i].trim_end()) {
            let mut body = Vec::new();
            i += 1;
            while i < lines.len() && (lines[i].trim().is_empty() || lines[i].starts_with([' ', '\t'])) {
                body.push(lines[i]);
                i += 1;
            }
            blocks.push(body);
            continue;
        }
        kept.push_str(lines[i]);
        kept.push('\n');
        i += 1;
    }
    let first = blocks.first()?;
    let indent = first
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    kept.push_str(ENTRY_POINT_MARKER);
    for line in first {
        kept.push_str(line.get(indent..).unwrap_or("").trim_end());
        kept.push('\n');
    }
    let edit = if blocks.len() > 1 {
        format!(
            "moved the entry point to the end and dropped {} other file(s)' entry points",
            blocks.len() - 1
        )
    } else {
        "moved the entry point (`if __name__ == \"__main__\"`) to the end".to_owned()
    };
    *code = kept;
    Some(edit)
}

/// Marks where [`hoist_main_blocks`] put the entry point.
const ENTRY_POINT_MARKER: &str = "\n# replayground: the entry point, after every definition\n";

/// A file split at its entry point: everything else, and the statements of its (first)
/// `if __name__ == "__main__":` block, dedented; the second part is empty without one.
pub(crate) fn split_entry_point(text: &str) -> (String, String) {
    let mut copy = text.to_owned();
    if hoist_main_blocks(&mut copy).is_none() {
        return (copy, String::new());
    }
    match copy.split_once(ENTRY_POINT_MARKER) {
        Some((definitions, entry)) => (definitions.to_owned(), entry.to_owned()),
        None => (copy, String::new()),
    }
}
