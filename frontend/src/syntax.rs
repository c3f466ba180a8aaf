//! The program's syntax tree, kept in the browser: tree-sitter-python, re-parsed
//! incrementally (`Tree::edit` + the old tree) on every change of the text.
//!
//! Everything the editor shows is derived from the tree here, without any DOM, so it is
//! tested natively and in the browser alike: highlighted HTML, syntax problems (ERROR and
//! MISSING nodes), the outline of classes and functions, and the lines where a breakpoint
//! can stop (lines that start a statement).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use tree_sitter::{InputEdit, Node, Parser, Point, Tree};

/// The text of the program and its syntax tree, always in step.
pub struct SyntaxDocument {
    parser: Parser,
    tree: Tree,
    text: String,
}

impl std::fmt::Debug for SyntaxDocument {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyntaxDocument")
            .field("bytes", &self.text.len())
            .finish_non_exhaustive()
    }
}

/// A syntax error the parser recovered from, where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxProblem {
    /// 1-based.
    pub line: u32,
    /// 1-based, in characters.
    pub column: u32,
    /// Byte offset of the problem in the text.
    pub offset: usize,
    pub message: String,
}

/// What an outline entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutlineKind {
    Class,
    Function,
    Method,
}

impl OutlineKind {
    pub fn keyword(self) -> &'static str {
        match self {
            Self::Class => "class",
            Self::Function | Self::Method => "def",
        }
    }
}

/// A class or function definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlineItem {
    pub kind: OutlineKind,
    pub name: String,
    /// 1-based line of the name.
    pub line: u32,
    /// Byte offset of the name.
    pub offset: usize,
    /// Definitions it is nested in.
    pub depth: u32,
}

/// What the editor shows beside the code, recomputed after each parse.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    pub problems: Vec<SyntaxProblem>,
    pub outline: Vec<OutlineItem>,
    /// 1-based lines that start a statement: the lines a breakpoint can stop on.
    pub statement_lines: BTreeSet<u32>,
    pub line_count: u32,
}

fn python() -> tree_sitter::Language {
    tree_sitter_python::LANGUAGE.into()
}

impl SyntaxDocument {
    pub fn new(text: &str) -> Self {
        let mut parser = Parser::new();
        parser
            .set_language(&python())
            .expect("the bundled Python grammar matches the tree-sitter library");
        let tree = parser
            .parse(text, None)
            .expect("a parser with a language and no timeout always returns a tree");
        Self {
            parser,
            tree,
            text: text.to_owned(),
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// Replaces the text with `new_text`, re-parsing only what changed: the difference
    /// is one edit (common prefix and suffix kept), applied to the old tree first.
    /// Returns false when the text is unchanged.
    pub fn update(&mut self, new_text: &str) -> bool {
        let Some(edit) = single_edit(&self.text, new_text) else {
            return false;
        };
        self.tree.edit(&edit);
        self.tree = self
            .parser
            .parse(new_text, Some(&self.tree))
            .expect("a parser with a language and no timeout always returns a tree");
        new_text.clone_into(&mut self.text);
        true
    }

    /// The text as HTML for a `<pre>`: tokens in `<span class="tok-…">`, tokens inside
    /// an ERROR node also in `syntax-error`, a MISSING token as an empty marker.
    pub fn highlight_html(&self) -> String {
        let text = self.text.as_str();
        let mut out = String::with_capacity(text.len() * 2);
        let mut emitted = 0;
        let mut cursor = self.tree.walk();
        // For each ancestor of the cursor's node: its kind and whether it is an ERROR.
        let mut parents: Vec<(&str, bool)> = Vec::new();
        let mut errors = 0usize;
        loop {
            let node = cursor.node();
            let atomic = node.child_count() == 0 || is_atomic(node.kind());
            if !atomic && cursor.goto_first_child() {
                if node.is_error() {
                    errors += 1;
                }
                parents.push((node.kind(), node.is_error()));
                continue;
            }
            let (start, end) = (node.start_byte().max(emitted), node.end_byte());
            push_escaped(&mut out, &text[emitted..start]);
            if node.is_missing() {
                let _ = write!(
                    out,
                    r#"<span class="missing" title="missing {}"></span>"#,
                    escape(node.kind())
                );
            } else if start < end {
                let parent = parents.last().map_or("", |p| p.0);
                let class = token_class(node, parent, cursor.field_name(), &text[start..end]);
                let in_error = errors > 0 || node.is_error();
                match (class, in_error) {
                    ("", false) => push_escaped(&mut out, &text[start..end]),
                    (class, in_error) => {
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
                        push_escaped(&mut out, &text[start..end]);
                        out.push_str("</span>");
                    }
                }
            }
            emitted = end.max(emitted);
            // Next: the following sibling, or the sibling of the nearest ancestor that has one.
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    push_escaped(&mut out, &text[emitted..]);
                    // A final newline in a <pre> would not get a line of its own.
                    out.push('\n');
                    return out;
                }
                if parents.pop().is_some_and(|p| p.1) {
                    errors -= 1;
                }
            }
        }
    }

    /// Problems, outline and statement lines in one walk of the tree.
    pub fn analyse(&self) -> Analysis {
        let mut analysis = Analysis {
            line_count: line_count(&self.text),
            ..Analysis::default()
        };
        self.walk_node(self.tree.root_node(), 0, false, &mut analysis);
        analysis
    }

    fn walk_node(&self, node: Node<'_>, depth: u32, in_class: bool, analysis: &mut Analysis) {
        if node.is_error() {
            analysis.problems.push(self.problem_at(node));
            return;
        }
        if node.is_missing() {
            analysis.problems.push(self.problem_at(node));
            return;
        }
        let kind = node.kind();
        let (mut depth, mut in_class) = (depth, in_class);
        if matches!(kind, "class_definition" | "function_definition")
            && let Some(name) = node.child_by_field_name("name")
        {
            let kind = match (kind, in_class) {
                ("class_definition", _) => OutlineKind::Class,
                (_, true) => OutlineKind::Method,
                _ => OutlineKind::Function,
            };
            analysis.outline.push(OutlineItem {
                kind,
                name: self.text[name.byte_range()].to_owned(),
                line: name.start_position().row as u32 + 1,
                offset: name.start_byte(),
                depth,
            });
            depth += 1;
            in_class = kind == OutlineKind::Class;
        }
        let starts_statements = matches!(kind, "module" | "block");
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            let statement = (starts_statements && child.is_named() && child.kind() != "comment")
                || matches!(child.kind(), "elif_clause" | "except_clause" | "case_clause");
            if statement && !child.is_error() && !child.is_missing() {
                analysis.statement_lines.insert(child.start_position().row as u32 + 1);
            }
            // Only subtrees with definitions, blocks or errors need a visit.
            if child.child_count() > 0 || child.is_missing() || child.is_error() {
                self.walk_node(child, depth, in_class, analysis);
            }
        }
    }

    fn problem_at(&self, node: Node<'_>) -> SyntaxProblem {
        let offset = node.start_byte();
        let Point { row, column } = node.start_position();
        let line_start = offset - column;
        let column = self.text[line_start..offset].chars().count() as u32 + 1;
        let message = if node.is_missing() {
            format!("missing `{}`", node.kind())
        } else {
            let snippet: String = self.text[node.byte_range()]
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("")
                .chars()
                .take(24)
                .collect();
            if snippet.is_empty() {
                "unexpected end of the program".to_owned()
            } else {
                format!("invalid syntax near `{snippet}`")
            }
        };
        SyntaxProblem {
            line: row as u32 + 1,
            column,
            offset,
            message,
        }
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

fn push_escaped(out: &mut String, text: &str) {
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

/// Lines as an editor counts them: a trailing newline starts one more (empty) line.
pub fn line_count(text: &str) -> u32 {
    text.bytes().filter(|&b| b == b'\n').count() as u32 + 1
}

/// The one edit that turns `old` into `new`: everything between their common prefix
/// and common suffix. `None` when they are equal.
pub fn single_edit(old: &str, new: &str) -> Option<InputEdit> {
    if old == new {
        return None;
    }
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let mut prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    while !old.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = a.len().min(b.len()) - prefix;
    let mut suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    while !old.is_char_boundary(a.len() - suffix) || !new.is_char_boundary(b.len() - suffix) {
        suffix -= 1;
    }
    let (old_end, new_end) = (a.len() - suffix, b.len() - suffix);
    Some(InputEdit {
        start_byte: prefix,
        old_end_byte: old_end,
        new_end_byte: new_end,
        start_position: point_at(old, prefix),
        old_end_position: point_at(old, old_end),
        new_end_position: point_at(new, new_end),
    })
}

/// Row and byte column of a byte offset.
fn point_at(text: &str, offset: usize) -> Point {
    let before = &text.as_bytes()[..offset];
    let row = text[..offset].matches('\n').count();
    let column = offset - before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    Point { row, column }
}

/// The offset in UTF-16 code units (what a textarea's selection uses) of a byte offset.
pub fn utf16_offset(text: &str, byte: usize) -> u32 {
    let mut byte = byte.min(text.len());
    while !text.is_char_boundary(byte) {
        byte -= 1;
    }
    text[..byte].encode_utf16().count() as u32
}

/// Byte offset where 1-based `line` starts.
pub fn line_start(text: &str, line: u32) -> usize {
    if line <= 1 {
        return 0;
    }
    text.match_indices('\n')
        .nth(line as usize - 2)
        .map_or(text.len(), |(i, _)| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRAM: &str = "class Stack:\n    def push(self, x):\n        self.items.append(x)  # keep\n\n\ndef main():\n    s = Stack()\n    if s:\n        print(\"hi\", 42)\n    elif True:\n        pass\n";

    #[test]
    fn highlighting_marks_keywords_names_strings_and_comments() {
        let doc = SyntaxDocument::new(PROGRAM);
        let html = doc.highlight_html();
        assert!(html.starts_with(r#"<span class="tok-keyword">class</span> <span class="tok-class">Stack</span>:"#));
        assert!(html.contains(r#"<span class="tok-function">push</span>"#));
        assert!(html.contains(r#"<span class="tok-self">self</span>"#));
        assert!(html.contains(r#"<span class="tok-call">append</span>"#));
        assert!(html.contains(r#"<span class="tok-comment"># keep</span>"#));
        assert!(html.contains(r#"<span class="tok-builtin">print</span>"#));
        assert!(html.contains(r#"<span class="tok-string">&quot;</span><span class="tok-string">hi</span>"#));
        assert!(html.contains(r#"<span class="tok-number">42</span>"#));
        assert!(!html.contains("syntax-error"));
        // The text is all there, in order.
        let plain = html
            .split('<')
            .map(|part| part.split_once('>').map_or(part, |(_, t)| t))
            .collect::<String>()
            .replace("&quot;", "\"");
        assert_eq!(plain, format!("{PROGRAM}\n"));
    }

    #[test]
    fn outline_lists_classes_methods_and_functions() {
        let analysis = SyntaxDocument::new(PROGRAM).analyse();
        let outline: Vec<_> = analysis
            .outline
            .iter()
            .map(|i| (i.kind, i.name.as_str(), i.line, i.depth))
            .collect();
        assert_eq!(
            outline,
            vec![
                (OutlineKind::Class, "Stack", 1, 0),
                (OutlineKind::Method, "push", 2, 1),
                (OutlineKind::Function, "main", 6, 0),
            ]
        );
    }

    #[test]
    fn breakpoints_go_on_lines_that_start_statements() {
        let analysis = SyntaxDocument::new(PROGRAM).analyse();
        let lines: Vec<u32> = analysis.statement_lines.iter().copied().collect();
        assert_eq!(lines, vec![1, 2, 3, 6, 7, 8, 9, 10, 11]);
        assert_eq!(analysis.line_count, 12);
        assert!(analysis.problems.is_empty());
    }

    #[test]
    fn syntax_errors_are_listed_and_underlined() {
        let doc = SyntaxDocument::new("def f(:\n    return 1\n\nx = (1 +\n");
        let analysis = doc.analyse();
        assert!(!analysis.problems.is_empty(), "{analysis:?}");
        assert_eq!(analysis.problems[0].line, 1, "{analysis:?}");
        assert!(doc.highlight_html().contains("syntax-error") || doc.highlight_html().contains("missing"));

        assert_eq!(analysis.problems[0].message, "missing `)`");
        assert!(analysis.problems.iter().any(|p| p.line == 4), "{analysis:?}");
        let html = doc.highlight_html();
        assert!(
            html.contains(r#"<span class="missing" title="missing )"></span>"#),
            "{html}"
        );
        assert!(html.contains(r#"<span class="syntax-error">x</span>"#), "{html}");
    }

    #[test]
    fn incremental_updates_match_a_fresh_parse() {
        let mut doc = SyntaxDocument::new(PROGRAM);
        let edits = [
            PROGRAM.replace("push", "pushé"),
            PROGRAM.replace("    if s:\n", "    if s:\n        t = 1\n"),
            PROGRAM.replace("42", "4"),
            String::new(),
            "x = 'ü'\n".to_owned(),
            PROGRAM.to_owned(),
        ];
        for text in edits {
            assert!(doc.update(&text));
            let fresh = SyntaxDocument::new(&text);
            assert_eq!(doc.tree().root_node().to_sexp(), fresh.tree().root_node().to_sexp());
            assert_eq!(doc.highlight_html(), fresh.highlight_html());
        }
        assert!(!doc.update(PROGRAM));
    }

    #[test]
    fn edits_are_the_changed_middle() {
        let edit = single_edit("abcdef", "abXYef").unwrap();
        assert_eq!((edit.start_byte, edit.old_end_byte, edit.new_end_byte), (2, 4, 4));
        let edit = single_edit("a\nb", "a\nbc").unwrap();
        assert_eq!(edit.start_position, Point { row: 1, column: 1 });
        assert_eq!(edit.new_end_position, Point { row: 1, column: 2 });
        let edit = single_edit("é", "è").unwrap();
        assert_eq!((edit.start_byte, edit.old_end_byte), (0, 2));
        assert!(single_edit("x", "x").is_none());
    }

    #[test]
    fn offsets_convert_to_textarea_positions() {
        assert_eq!(utf16_offset("a😀b", 5), 3);
        assert_eq!(line_start("a\nbc\nd", 3), 5);
        assert_eq!(line_start("a\nbc\nd", 1), 0);
    }
}
