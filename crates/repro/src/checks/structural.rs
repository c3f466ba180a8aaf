//! The structural check: tree-sitter parses the script; every ERROR and MISSING node
//! fails it, with its line and column.

use replayground_shared::repro::{CheckKind, CheckVerdict};

use super::score::{first_few, verdict};
use replayground_exec::python::parse;

/// Syntax: every ERROR and MISSING node of the tree-sitter tree, with its position.
pub fn structural(code: &str) -> CheckVerdict {
    let Some(tree) = parse(code) else {
        return verdict(
            CheckKind::Structural,
            false,
            None,
            "tree-sitter could not parse the script at all.",
        );
    };
    let mut problems = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        let at = node.start_position();
        if node.is_missing() {
            problems.push(format!(
                "line {}, column {}: missing `{}`",
                at.row + 1,
                at.column + 1,
                node.kind()
            ));
        } else if node.is_error() {
            let text: String = code[node.byte_range()]
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(60)
                .collect();
            problems.push(format!(
                "line {}, column {}: syntax error at `{}`",
                at.row + 1,
                at.column + 1,
                text.trim()
            ));
        } else if node.has_error() {
            stack.extend(node.children(&mut cursor));
        }
    }
    problems.extend(comment_only_blocks(&tree));
    problems.sort_by_key(|p| {
        p.split(',')
            .next()
            .and_then(|l| l.trim_start_matches("line ").parse::<u32>().ok())
            .unwrap_or(0)
    });
    if problems.is_empty() {
        verdict(CheckKind::Structural, true, None, "The script parses.")
    } else {
        verdict(
            CheckKind::Structural,
            false,
            None,
            format!("The script does not parse: {}", first_few(&problems, 5)),
        )
    }
}

/// Blocks that hold nothing but comments: tree-sitter accepts them, Python does not
/// (`IndentationError: expected an indented block`).
fn comment_only_blocks(tree: &tree_sitter::Tree) -> Vec<String> {
    let mut problems = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        let children: Vec<_> = node.named_children(&mut cursor).collect();
        if node.kind() == "block" && !node.is_missing() && children.iter().all(|c| c.kind() == "comment") {
            // The header is the statement that owns the block; Python reports the line after it.
            let header = node.parent().unwrap_or(node).start_position();
            problems.push(format!(
                "line {}, column {}: the block after this line holds only comments (Python needs a statement there; `pass` will do)",
                header.row + 1,
                header.column + 1
            ));
        }
        stack.extend(children);
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structural_errors_have_a_position() {
        assert!(structural("import numpy as np\nx = np.zeros(3)\n").passed);
        let v = structural("x = (1,\nprint(x\n");
        assert!(!v.passed);
        assert!(v.detail.contains("line "), "{}", v.detail);
        let v = structural("def f(:\n    return 1\n");
        assert!(!v.passed && v.detail.contains("line 1"), "{}", v.detail);
    }

    #[test]
    fn a_block_of_comments_only_fails_as_python_would() {
        let v = structural("x = 1\ntry:\n    # load the data\nexcept ValueError:\n    pass\n");
        assert!(!v.passed, "{}", v.detail);
        assert!(
            v.detail.contains("line 2") && v.detail.contains("only comments"),
            "{}",
            v.detail
        );
        let v = structural("def f():\n    # todo\n\nprint(1)\n");
        assert!(!v.passed, "{}", v.detail);
        // A comment beside a statement is fine.
        assert!(structural("if True:\n    # keep\n    x = 1\n").passed);
        assert!(structural("class A:\n    '''doc'''\n    # nothing else\n").passed);
    }
}
