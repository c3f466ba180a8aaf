//! What the editor shows beside the code: syntax problems (ERROR and MISSING nodes), the
//! outline of classes and functions, and the lines where a breakpoint can stop (lines that
//! start a statement), found in one walk of the tree and kept up to date edit by edit.

use std::collections::BTreeSet;
use std::ops::Range;

use tree_sitter::{InputEdit, Node, Point};

use super::{SyntaxDocument, layout_problem, line_count};

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

impl SyntaxDocument {
    /// The analysis after `edit`, from the one before it: entries on the `dirty` rows
    /// (new text) are looked for again, the others moved by the edit.
    pub(super) fn reanalyse(&self, before: &Analysis, edit: &InputEdit, dirty: &[Range<usize>]) -> Analysis {
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
