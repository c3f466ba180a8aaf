//! The program's syntax tree, kept in the browser: tree-sitter-python, re-parsed
//! incrementally (`Tree::edit` + the old tree) on every change of the text.
//!
//! Everything the editor shows is derived from the tree here, without any DOM, so it is
//! tested natively and in the browser alike: highlighted HTML, syntax problems (ERROR and
//! MISSING nodes), the outline of classes and functions, and the lines where a breakpoint
//! can stop (lines that start a statement).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::ops::Range;

use tree_sitter::{InputEdit, Node, Parser, Point, Tree};

/// The text of the program and its syntax tree, always in step, with the highlighted
/// HTML of each line and the analysis kept up to date incrementally.
pub struct SyntaxDocument {
    parser: Parser,
    tree: Tree,
    text: String,
    /// Byte offset where each line (0-based row) starts.
    line_starts: Vec<usize>,
    /// The highlighted HTML of each line, without its newline.
    lines: Vec<String>,
    analysis: Analysis,
}

/// What one [`SyntaxDocument::edit`] changed, so views patch instead of rebuilding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changes {
    /// 0-based row where the edit starts.
    pub start_row: usize,
    /// Byte column in `start_row` where the edit starts (the text before it is unchanged).
    pub start_column: usize,
    /// Byte column in the old text's row `start_row + removed_rows - 1` where the edit
    /// ended (the text after it is now on the new row `start_row + inserted_rows - 1`).
    pub old_end_column: usize,
    /// Rows `start_row..start_row + removed_rows` of the old text ...
    pub removed_rows: usize,
    /// ... became rows `start_row..start_row + inserted_rows` of the new text.
    pub inserted_rows: usize,
    /// Rows of the new text whose highlighting was recomputed (sorted, disjoint); they
    /// include every inserted row.
    pub highlighted: Vec<Range<usize>>,
    /// Whether the outline, the problems, the statement lines or the line count changed;
    /// false when only byte offsets after the edit moved.
    pub analysis_changed: bool,
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
    /// Where tree-sitter's parse recovered from an error.
    pub problems: Vec<SyntaxProblem>,
    /// The first indentation or bracket error, as CPython names it ([`layout_problem`]).
    pub layout: Option<SyntaxProblem>,
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
        let mut doc = Self {
            parser,
            tree,
            text: text.to_owned(),
            line_starts: line_starts(text),
            lines: Vec::new(),
            analysis: Analysis::default(),
        };
        doc.lines = doc.highlight_rows(0..doc.line_starts.len());
        doc.analysis = doc.analyse();
        doc
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
        self.edit(new_text).is_some()
    }

    /// [`Self::update`], saying what changed: only the lines whose syntax changed (the
    /// edited lines and the tree's changed ranges) are highlighted again, and only their
    /// outline entries, problems and statement lines are looked for again; the rest is
    /// moved. `None` when the text is unchanged.
    pub fn edit(&mut self, new_text: &str) -> Option<Changes> {
        let edit = single_edit(&self.text, new_text)?;
        self.tree.edit(&edit);
        let new_tree = self
            .parser
            .parse(new_text, Some(&self.tree))
            .expect("a parser with a language and no timeout always returns a tree");
        // Outside these ranges every character keeps its ancestors, so its highlighting,
        // and any outline entry, problem or statement starting there, is unchanged.
        let changed: Vec<tree_sitter::Range> = self.tree.changed_ranges(&new_tree).collect();
        self.tree = new_tree;
        new_text.clone_into(&mut self.text);
        self.line_starts = line_starts(new_text);

        let start_row = edit.start_position.row;
        let removed_rows = edit.old_end_position.row - start_row + 1;
        let inserted_rows = edit.new_end_position.row - start_row + 1;
        let rows = self.line_starts.len();
        let mut dirty = Vec::with_capacity(1);
        dirty.push(start_row..start_row + inserted_rows);
        dirty.extend(
            changed
                .iter()
                .map(|r| r.start_point.row.min(rows)..(r.end_point.row + 1).min(rows)),
        );
        let dirty = merge_ranges(dirty);

        self.lines.splice(
            start_row..start_row + removed_rows,
            std::iter::repeat_with(String::new).take(inserted_rows),
        );
        for range in &dirty {
            let html = self.highlight_rows(range.clone());
            for (line, row) in html.into_iter().zip(range.clone()) {
                self.lines[row] = line;
            }
        }

        let before = std::mem::take(&mut self.analysis);
        self.analysis = self.reanalyse(&before, &edit, &dirty);
        self.analysis.layout = layout_problem(new_text);
        let analysis_changed = !before.same_apart_from_offsets(&self.analysis);
        Some(Changes {
            start_row,
            start_column: edit.start_position.column,
            old_end_column: edit.old_end_position.column,
            removed_rows,
            inserted_rows,
            highlighted: dirty,
            analysis_changed,
        })
    }

    /// The text as HTML for a `<pre>`: tokens in `<span class="tok-…">`, tokens inside
    /// an ERROR node also in `syntax-error`, a MISSING token as an empty marker.
    pub fn highlight_html(&self) -> String {
        let mut out = String::with_capacity(self.lines.iter().map(|l| l.len() + 1).sum::<usize>() + 1);
        for line in &self.lines {
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    /// The highlighted HTML of each line (0-based rows), without newlines.
    pub fn line_html(&self) -> &[String] {
        &self.lines
    }

    /// The analysis, kept up to date by [`Self::edit`].
    pub fn analysis(&self) -> &Analysis {
        &self.analysis
    }

    /// Byte range of rows `rows` of the text, without the last row's newline.
    fn row_bytes(&self, rows: &Range<usize>) -> Range<usize> {
        let from = self.line_starts[rows.start];
        let to = self.line_starts.get(rows.end).map_or(self.text.len(), |&next| next - 1);
        from..to
    }

    /// The highlighted HTML of rows `rows`, one string per row: a walk of only the
    /// nodes that overlap them, a token across a line break split at it.
    fn highlight_rows(&self, rows: Range<usize>) -> Vec<String> {
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

    /// The analysis after `edit`, from the one before it: entries on the `dirty` rows
    /// (new text) are looked for again, the others moved by the edit.
    fn reanalyse(&self, before: &Analysis, edit: &InputEdit, dirty: &[Range<usize>]) -> Analysis {
        let (start_row, old_end_row) = (edit.start_position.row, edit.old_end_position.row);
        let row_delta = edit.new_end_position.row as i64 - old_end_row as i64;
        let byte_delta = edit.new_end_byte as i64 - edit.old_end_byte as i64;
        // Old row -> new row, or None for an edited row.
        let moved = |line: u32| -> Option<u32> {
            let row = line as usize - 1;
            if row < start_row {
                Some(line)
            } else if row <= old_end_row {
                None
            } else {
                Some((i64::from(line) + row_delta) as u32)
            }
        };
        let shift = |offset: usize| {
            if offset >= edit.old_end_byte {
                (offset as i64 + byte_delta) as usize
            } else {
                offset
            }
        };
        let clean = |line: u32| !dirty.iter().any(|r| r.contains(&(line as usize - 1)));
        let mut analysis = Analysis {
            line_count: line_count(&self.text),
            ..Analysis::default()
        };
        analysis.outline = before
            .outline
            .iter()
            .filter_map(|item| {
                let line = moved(item.line).filter(|&l| clean(l))?;
                Some(OutlineItem {
                    line,
                    offset: shift(item.offset),
                    ..item.clone()
                })
            })
            .collect();
        analysis.problems = before
            .problems
            .iter()
            .filter_map(|problem| {
                let line = moved(problem.line).filter(|&l| clean(l))?;
                Some(SyntaxProblem {
                    line,
                    offset: shift(problem.offset),
                    ..problem.clone()
                })
            })
            .collect();
        analysis.statement_lines = if row_delta == 0 {
            let mut lines = before.statement_lines.clone();
            lines.retain(|&l| moved(l).is_some_and(clean));
            lines
        } else {
            before
                .statement_lines
                .iter()
                .filter_map(|&l| moved(l).filter(|&l| clean(l)))
                .collect()
        };

        let bytes: Vec<Range<usize>> = dirty.iter().map(|rows| self.row_bytes(rows)).collect();
        let mut found = Analysis::default();
        let mut refreshed = Vec::new();
        let mut walk = AnalysisWalk {
            doc: self,
            dirty: Some(Dirty {
                rows: dirty,
                bytes: &bytes,
                refreshed: &mut refreshed,
            }),
        };
        walk.node(self.tree.root_node(), 0, false, &mut found);
        // A problem's message quotes its node's first line, which an edit below its start
        // can change.
        for problem in refreshed {
            if let Some(kept) = analysis.problems.iter_mut().find(|p| p.offset == problem.offset) {
                *kept = problem;
            }
        }
        analysis.outline.extend(found.outline);
        analysis.outline.sort_by_key(|item| item.offset);
        analysis.problems.extend(found.problems);
        analysis.problems.sort_by_key(|problem| problem.offset);
        analysis.statement_lines.extend(found.statement_lines);
        analysis
    }

    /// Problems, outline and statement lines in one walk of the whole tree (what
    /// [`Self::analysis`] keeps up to date).
    pub fn analyse(&self) -> Analysis {
        let mut analysis = Analysis {
            line_count: line_count(&self.text),
            ..Analysis::default()
        };
        AnalysisWalk { doc: self, dirty: None }.node(self.tree.root_node(), 0, false, &mut analysis);
        analysis.layout = layout_problem(&self.text);
        analysis
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

/// The rows an analysis walk looks at, when not all of them.
struct Dirty<'a> {
    rows: &'a [Range<usize>],
    /// The same rows as byte ranges (without the last newline).
    bytes: &'a [Range<usize>],
    /// Problems that start on a clean row but overlap a dirty one.
    refreshed: &'a mut Vec<SyntaxProblem>,
}

impl Dirty<'_> {
    fn has_row(&self, row: usize) -> bool {
        self.rows.iter().any(|r| r.contains(&row))
    }

    fn overlaps(&self, node: Node<'_>) -> bool {
        let (start, end) = (node.start_byte(), node.end_byte());
        self.bytes.iter().any(|b| start <= b.end && end >= b.start)
    }
}

/// One walk of the tree collecting problems, outline and statement lines: of the whole
/// tree, or of the nodes overlapping some rows, keeping what starts on them.
struct AnalysisWalk<'d, 'a> {
    doc: &'d SyntaxDocument,
    dirty: Option<Dirty<'a>>,
}

impl AnalysisWalk<'_, '_> {
    fn keeps(&self, row: usize) -> bool {
        self.dirty.as_ref().is_none_or(|d| d.has_row(row))
    }

    fn node(&mut self, node: Node<'_>, depth: u32, in_class: bool, analysis: &mut Analysis) {
        if node.is_error() || node.is_missing() {
            let problem = self.doc.problem_at(node);
            if self.keeps(node.start_position().row) {
                analysis.problems.push(problem);
            } else if let Some(dirty) = &mut self.dirty {
                dirty.refreshed.push(problem);
            }
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
            if self.keeps(name.start_position().row) {
                analysis.outline.push(OutlineItem {
                    kind,
                    name: self.doc.text[name.byte_range()].to_owned(),
                    line: name.start_position().row as u32 + 1,
                    offset: name.start_byte(),
                    depth,
                });
            }
            depth += 1;
            in_class = kind == OutlineKind::Class;
        }
        let starts_statements = matches!(kind, "module" | "block");
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if self.dirty.as_ref().is_some_and(|d| !d.overlaps(child)) {
                continue;
            }
            let statement = (starts_statements && child.is_named() && child.kind() != "comment")
                || matches!(child.kind(), "elif_clause" | "except_clause" | "case_clause");
            let row = child.start_position().row;
            if statement && !child.is_error() && !child.is_missing() && self.keeps(row) {
                analysis.statement_lines.insert(row as u32 + 1);
            }
            // Only subtrees with definitions, blocks or errors need a visit.
            if child.child_count() > 0 || child.is_missing() || child.is_error() {
                self.node(child, depth, in_class, analysis);
            }
        }
    }
}

impl Analysis {
    /// The problems to show: CPython's indentation or bracket error first, then the
    /// parse's, except on that error's line (one line, one message).
    pub fn shown_problems(&self) -> impl Iterator<Item = &SyntaxProblem> {
        let line = self.layout.as_ref().map(|p| p.line);
        self.layout
            .iter()
            .chain(self.problems.iter().filter(move |p| Some(p.line) != line))
    }

    /// Equal but for byte offsets (which move with every edit above them).
    pub fn same_apart_from_offsets(&self, other: &Self) -> bool {
        let layout = |a: &Self| a.layout.as_ref().map(|p| (p.line, p.column, p.message.clone()));
        self.line_count == other.line_count
            && layout(self) == layout(other)
            && self.statement_lines == other.statement_lines
            && self.outline.len() == other.outline.len()
            && self.problems.len() == other.problems.len()
            && self.outline.iter().zip(&other.outline).all(|(a, b)| {
                OutlineItem {
                    offset: b.offset,
                    ..a.clone()
                } == *b
            })
            && self.problems.iter().zip(&other.problems).all(|(a, b)| {
                SyntaxProblem {
                    offset: b.offset,
                    ..a.clone()
                } == *b
            })
    }
}

/// Sorted, disjoint ranges covering the same rows (empty ones dropped).
fn merge_ranges(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    ranges.retain(|r| !r.is_empty());
    ranges.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match merged.last_mut() {
            Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
            _ => merged.push(range),
        }
    }
    merged
}

/// Byte offset where each line starts.
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect()
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

const TAB_ERROR: &str = "inconsistent use of tabs and spaces in indentation";

/// The first error of CPython's tokenizer that tree-sitter's recovery hides or places
/// elsewhere: indentation (`IndentationError`, `TabError`) and brackets (one never closed is
/// named on its own line, as CPython does). A block header on the last line is not an
/// error yet: its body is probably being typed.
pub fn layout_problem(text: &str) -> Option<SyntaxProblem> {
    let at = |row: usize, line: &str, line_offset: usize, i: usize, message: String| SyntaxProblem {
        line: row as u32 + 1,
        column: line[..i].chars().count() as u32 + 1,
        offset: line_offset + i,
        message,
    };
    // Indentation levels as CPython keeps them: a tab to the next multiple of 8, and a
    // tab as 1 column; levels that order differently under the two are a TabError.
    let mut levels = vec![(0_usize, 0_usize)];
    let mut open: Vec<(char, usize, usize, usize)> = Vec::new();
    let mut string: Option<(char, bool)> = None;
    let (mut continued, mut ends_with_colon) = (false, false);
    let mut header: Option<usize> = None;
    let mut logical_start = 0;
    let mut line_offset = 0;
    for (row, line) in text.split('\n').enumerate() {
        let this_offset = line_offset;
        line_offset += line.len() + 1;
        let mut start = 0;
        if string.is_none() && open.is_empty() && !continued {
            let (mut col, mut alt) = (0, 0);
            for c in line.chars() {
                match c {
                    ' ' => (col, alt) = (col + 1, alt + 1),
                    '\t' => (col, alt) = ((col / 8 + 1) * 8, alt + 1),
                    '\x0c' => (col, alt) = (0, 0),
                    _ => break,
                }
                start += 1;
            }
            let rest = line[start..].trim_end();
            if rest.is_empty() || rest.starts_with('#') {
                continue;
            }
            let problem = |message: &str| Some(at(row, line, this_offset, start, message.to_owned()));
            let (top, top_alt) = levels.last().copied().unwrap_or_default();
            if col > top {
                if header.is_none() {
                    return problem("unexpected indent");
                }
                if alt <= top_alt {
                    return problem(TAB_ERROR);
                }
                levels.push((col, alt));
            } else {
                if let Some(h) = header {
                    return problem(&format!("expected an indented block after line {}", h + 1));
                }
                while levels.last().is_some_and(|&(c, _)| col < c) {
                    levels.pop();
                }
                match levels.last() {
                    Some(&(c, a)) if c == col => {
                        if a != alt {
                            return problem(TAB_ERROR);
                        }
                    }
                    _ => return problem("unindent does not match any outer indentation level"),
                }
            }
            header = None;
            ends_with_colon = false;
            logical_start = row;
        }
        continued = false;
        let mut chars = line[start..].char_indices().map(|(i, c)| (i + start, c)).peekable();
        while let Some((i, c)) = chars.next() {
            if let Some((quote, triple)) = string {
                if c == '\\' {
                    chars.next();
                } else if c == quote && (!triple || line.as_bytes()[i..].starts_with(&[quote as u8; 3])) {
                    if triple {
                        chars.next();
                        chars.next();
                    }
                    string = None;
                    ends_with_colon = false;
                }
                continue;
            }
            match c {
                '#' => break,
                '\'' | '"' => {
                    let triple = line.as_bytes()[i..].starts_with(&[c as u8; 3]);
                    if triple {
                        chars.next();
                        chars.next();
                    }
                    string = Some((c, triple));
                }
                '(' | '[' | '{' => open.push((c, row, i, this_offset)),
                ')' | ']' | '}' => {
                    let opening = match c {
                        ')' => '(',
                        ']' => '[',
                        _ => '{',
                    };
                    match open.pop() {
                        Some((b, ..)) if b == opening => {}
                        Some((b, r, ..)) => {
                            let on = if r == row {
                                String::new()
                            } else {
                                format!(" on line {}", r + 1)
                            };
                            let message = format!("closing `{c}` does not match opening `{b}`{on}");
                            return Some(at(row, line, this_offset, i, message));
                        }
                        None => return Some(at(row, line, this_offset, i, format!("unmatched `{c}`"))),
                    }
                }
                '\\' if chars.peek().is_none() => continued = true,
                _ => {}
            }
            if !c.is_whitespace() {
                ends_with_colon = c == ':';
            }
        }
        // A one-line string left open: tree-sitter reports it.
        if string.is_some_and(|(_, triple)| !triple) {
            string = None;
        }
        if string.is_none() && open.is_empty() && !continued && ends_with_colon {
            header = Some(logical_start);
        }
    }
    let (bracket, row, i, line_offset) = open.pop()?;
    let line = text[line_offset..].split('\n').next().unwrap_or_default();
    Some(at(row, line, line_offset, i, format!("`{bracket}` was never closed")))
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
    fn indentation_and_bracket_errors_are_named_where_cpython_names_them() {
        let problem = |text: &str| layout_problem(text).map(|p| (p.line, p.column, p.message));
        assert_eq!(problem("x = 1\n    y = 2\n"), Some((2, 5, "unexpected indent".into())));
        assert_eq!(
            problem("if x:\n        a = 1\n    b = 2\n"),
            Some((3, 5, "unindent does not match any outer indentation level".into()))
        );
        assert_eq!(
            problem("if x:\n\ta = 1\n        b = 2\n"),
            Some((3, 9, TAB_ERROR.into()))
        );
        assert_eq!(
            problem("if x:\nprint(x)\n"),
            Some((2, 1, "expected an indented block after line 1".into()))
        );
        // CPython names the line of the bracket, not where the parse gave up.
        assert_eq!(
            problem("total = sum([1, 2\nprint(total)\n"),
            Some((1, 13, "`[` was never closed".into()))
        );
        assert_eq!(
            problem("x = (1, 2]\n"),
            Some((1, 10, "closing `]` does not match opening `(`".into()))
        );
        assert_eq!(problem("x = 1)\n"), Some((1, 6, "unmatched `)`".into())));
        // Brackets in strings and comments, continuations and a tab block do not confuse it.
        let fine = r#"def f(a,
      b):  # (
    s = '''(
  ['''
    t = "a)" + 'b\'('
    return (a +
        b) \
        + 1


if f(1, 2):
    pass
else:
	pass
"#;
        assert_eq!(problem(fine), None);
        // A header still being typed is not an error yet.
        assert_eq!(problem("for i in range(3):\n"), None);
        let with_error = SyntaxDocument::new("x = 1\n    y = (2\n");
        let shown: Vec<u32> = with_error.analysis().shown_problems().map(|p| p.line).collect();
        assert_eq!(shown.first(), Some(&2));
    }

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
            assert_eq!(doc.analysis(), &fresh.analyse());
        }
        assert!(!doc.update(PROGRAM));
    }

    /// Typing a program character by character, then deleting from the middle: after
    /// every keystroke the incremental highlighting and analysis equal a fresh parse's.
    #[test]
    fn keystroke_by_keystroke_the_incremental_view_is_exact() {
        let program = "class A:\n    def f(self, x):\n        '''doc\n        string'''\n        return [x,\n                1]  # c\n\n\ndef g(\"é\"):\n    try:\n        pass\n    except E:\n        g(1)\nprint(g, A().f(2))\n";
        let check = |doc: &mut SyntaxDocument, text: &str| {
            let before = doc.analysis().clone();
            let changes = doc.edit(text);
            let fresh = SyntaxDocument::new(text);
            assert_eq!(
                doc.highlight_html(),
                fresh.highlight_html(),
                "after the edit to {text:?}"
            );
            assert_eq!(doc.analysis(), &fresh.analyse(), "after the edit to {text:?}");
            if let Some(changes) = changes {
                assert_eq!(
                    changes.analysis_changed,
                    !before.same_apart_from_offsets(doc.analysis())
                );
            }
        };
        let mut doc = SyntaxDocument::new("");
        let mut typed = String::new();
        for c in program.chars() {
            typed.push(c);
            check(&mut doc, &typed);
        }
        let mut text = program.to_owned();
        while !text.is_empty() {
            let mut at = text.len() / 3;
            while !text.is_char_boundary(at) {
                at += 1;
            }
            text.remove(at.min(text.len() - 1));
            check(&mut doc, &text);
        }
        for (from, to) in [
            ("return", "yield"),
            ("(self, x)", "(self, x"),
            ("'''doc", "doc"),
            ("\n\n\n", "\n"),
            ("try:", "try"),
        ] {
            let edited = program.replace(from, to);
            doc = SyntaxDocument::new(program);
            check(&mut doc, &edited);
            check(&mut doc, program);
        }
    }

    /// Random single edits of the gallery's programs (a fixed-seed generator): the
    /// incremental view always equals a fresh parse's.
    #[test]
    fn random_edits_keep_the_incremental_view_exact() {
        const PIECES: [&str; 12] = [
            "(",
            ")",
            ":",
            "\n",
            "    ",
            "x",
            "'",
            "\"\"\"",
            "def ",
            "#",
            "é",
            "\n    pass\n",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for example in crate::playground::examples::EXAMPLES {
            let mut doc = SyntaxDocument::new(example.code);
            let mut text = example.code.to_owned();
            for _ in 0..40 {
                let mut at = next(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                if next(3) == 0 && at < text.len() {
                    let mut end = (at + 1 + next(8)).min(text.len());
                    while !text.is_char_boundary(end) {
                        end += 1;
                    }
                    text.replace_range(at..end, "");
                } else {
                    text.insert_str(at, PIECES[next(PIECES.len())]);
                }
                doc.update(&text);
                let fresh = SyntaxDocument::new(&text);
                assert_eq!(doc.highlight_html(), fresh.highlight_html(), "{text:?}");
                assert_eq!(doc.analysis(), &fresh.analyse(), "{text:?}");
            }
        }
    }

    #[test]
    fn a_keystroke_inside_a_line_rehighlights_that_line_only() {
        let mut doc = SyntaxDocument::new(PROGRAM);
        let changes = doc.edit(&PROGRAM.replace("s = Stack()", "st = Stack()")).unwrap();
        assert_eq!(
            (changes.start_row, changes.removed_rows, changes.inserted_rows),
            (6, 1, 1)
        );
        assert_eq!(changes.highlighted, vec![6..7]);
        assert!(!changes.analysis_changed);
        let changes = doc
            .edit(&PROGRAM.replace("s = Stack()", "st = Stack()\n    t = 1"))
            .unwrap();
        assert_eq!((changes.removed_rows, changes.inserted_rows), (1, 2));
        assert!(changes.analysis_changed);
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
