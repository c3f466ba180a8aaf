//! The program as highlighted HTML: one walk of the tree over the rows asked for, each
//! token in a `<span class="tok-…">` from its kind and its place in the tree.

use std::fmt::Write as _;
use std::ops::Range;

use tree_sitter::Node;

use super::SyntaxDocument;

impl SyntaxDocument {
    /// The highlighted HTML of rows `rows`, one string per row: a walk of only the
    /// nodes that overlap them, a token across a line break split at it.
    pub(super) fn highlight_rows(&self, rows: Range<usize>) -> Vec<String> {
        let text = self.text.as_str();
        let Range { start: from, end: to } = self.row_bytes(&rows);
        let mut out = String::with_capacity((to - from) * 2);
        let mut emitted = from;
        let mut cursor = self.tree.walk();
        // For each ancestor of the cursor's node: its kind and whether it is an ERROR.
        let mut parents: Vec<(&str, bool)> = Vec::new();
        let mut errors = 0usize;
        'walk: loop {
            let node = cursor.node();
            let (node_start, node_end) = (node.start_byte(), node.end_byte());
            let leaf = node.child_count() == 0 || is_atomic(node.kind());
            // A zero-width (MISSING) token at a line's end belongs to that line.
            let zero_width = node_start == node_end;
            if node_start > to || (leaf && !zero_width && node_start >= to) {
                break 'walk;
            }
            let before = node_end < from || (leaf && !zero_width && node_end <= from);
            if !before {
                if !leaf && cursor.goto_first_child() {
                    if node.is_error() {
                        errors += 1;
                    }
                    parents.push((node.kind(), node.is_error()));
                    continue;
                }
                let (start, end) = (node_start.max(emitted), node_end.min(to));
                push_escaped(&mut out, &text[emitted.min(start)..start]);
                if node.is_missing() {
                    let _ = write!(
                        out,
                        r#"<span class="missing" title="missing {}"></span>"#,
                        escape(node.kind())
                    );
                } else if start < end {
                    let parent = parents.last().map_or("", |p| p.0);
                    let class = token_class(node, parent, cursor.field_name(), &text[node_start..node_end]);
                    let in_error = errors > 0 || node.is_error();
                    push_token(&mut out, class, in_error, &text[start..end]);
                }
                emitted = end.max(emitted);
            }
            // Next: the following sibling, or the sibling of the nearest ancestor that has one.
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
                if parents.pop().is_some_and(|p| p.1) {
                    errors -= 1;
                }
            }
        }
        push_escaped(&mut out, &text[emitted.min(to)..to]);
        let lines: Vec<String> = out.split('\n').map(str::to_owned).collect();
        debug_assert_eq!(lines.len(), rows.len(), "one string per row");
        lines
    }
}

/// A token's HTML: its text in a span with its class (and `syntax-error` inside an
/// ERROR node), one span per line so that every line's HTML stands alone.
fn push_token(out: &mut String, class: &str, in_error: bool, text: &str) {
    if class.is_empty() && !in_error {
        push_escaped(out, text);
        return;
    }
    for (i, piece) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if piece.is_empty() {
            continue;
        }
        out.push_str("<span class=\"");
        out.push_str(class);
        if in_error {
            out.push_str(if class.is_empty() {
                "syntax-error"
            } else {
                " syntax-error"
            });
        }
        out.push_str("\">");
        push_escaped(out, piece);
        out.push_str("</span>");
    }
}

/// Nodes highlighted as one token although they have children.
fn is_atomic(kind: &str) -> bool {
    matches!(kind, "comment" | "escape_sequence")
}

const BUILTINS: [&str; 36] = [
    "abs",
    "all",
    "any",
    "bool",
    "dict",
    "divmod",
    "enumerate",
    "filter",
    "float",
    "format",
    "getattr",
    "hasattr",
    "id",
    "input",
    "int",
    "isinstance",
    "iter",
    "len",
    "list",
    "map",
    "max",
    "min",
    "next",
    "object",
    "open",
    "print",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "sorted",
    "str",
    "sum",
    "tuple",
    "zip",
];

/// The CSS class of a token, from its kind and place in the tree ("" for none).
fn token_class(node: Node<'_>, parent: &str, field: Option<&str>, text: &str) -> &'static str {
    let kind = node.kind();
    match kind {
        "comment" => "tok-comment",
        "string_start" | "string_content" | "string_end" | "string" => "tok-string",
        "escape_sequence" => "tok-escape",
        "integer" | "float" => "tok-number",
        "true" | "false" | "none" | "ellipsis" => "tok-constant",
        "identifier" => match (parent, field) {
            ("function_definition", Some("name")) => "tok-function",
            ("class_definition", Some("name")) => "tok-class",
            ("call", Some("function")) if BUILTINS.contains(&text) => "tok-builtin",
            ("call", Some("function")) | ("attribute", Some("attribute")) if is_called(node) => "tok-call",
            ("decorator", _) => "tok-decorator",
            _ if text == "self" || text == "cls" => "tok-self",
            ("parameters" | "default_parameter" | "typed_parameter", _) => "tok-parameter",
            _ if BUILTINS.contains(&text) && parent != "attribute" => "tok-builtin",
            _ => "",
        },
        "@" => "tok-decorator",
        _ if kind.starts_with(|c: char| c.is_ascii_lowercase()) && !node.is_named() => "tok-keyword",
        _ if !node.is_named() && kind.chars().all(|c| "+-*/%<>=!&|^~".contains(c)) && kind != "=" => "tok-operator",
        _ => "",
    }
}

/// An identifier that is the callee of a call (directly or as `obj.method`).
fn is_called(node: Node<'_>) -> bool {
    let mut callee = node;
    if let Some(parent) = node.parent()
        && parent.kind() == "attribute"
    {
        callee = parent;
    }
    callee
        .parent()
        .is_some_and(|p| p.kind() == "call" && p.child_by_field_name("function") == Some(callee))
}

/// Appends `text` escaped for HTML text and double-quoted attribute values.
pub fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_escaped(&mut out, text);
    out
}
