//! Refinement edit: the lines of the first syntax error commented out, when the
//! structural check failed.

use replayground_exec::python::parse;

/// The rows of the first syntax error: its ERROR node (or the MISSING node's line).
fn first_error_rows(code: &str) -> Option<(usize, usize)> {
    let tree = parse(code)?;
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    let mut best: Option<(usize, usize)> = None;
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            let rows = (
                node.start_position().row,
                node.end_position().row.max(node.start_position().row),
            );
            if best.is_none_or(|b| rows.0 < b.0) {
                best = Some(rows);
            }
        } else if node.has_error() {
            stack.extend(node.children(&mut cursor));
        }
    }
    best
}

/// Comments out the lines of the first syntax error.
pub(crate) fn comment_out_unparsable(code: &mut String) -> Option<String> {
    let (first, last) = first_error_rows(code)?;
    let lines: Vec<String> = code
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if (first..=last).contains(&i) && !l.trim().is_empty() {
                format!("# replayground: does not parse: {l}")
            } else {
                l.to_owned()
            }
        })
        .collect();
    *code = lines.join("\n") + "\n";
    Some(format!(
        "commented out line(s) {}-{} that do not parse",
        first + 1,
        last + 1
    ))
}
