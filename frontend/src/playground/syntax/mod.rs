//! The program's syntax tree, kept in the browser: tree-sitter-python, re-parsed
//! incrementally (`Tree::edit` + the old tree) on every change of the text.
//!
//! Everything the editor shows is derived from the tree here, without any DOM, so it is
//! tested natively and in the browser alike: highlighted HTML, syntax problems (ERROR and
//! MISSING nodes), the outline of classes and functions, and the lines where a breakpoint
//! can stop (lines that start a statement).

mod analysis;
mod highlight;
mod layout;
#[cfg(test)]
mod tests;

use std::ops::Range;

use tree_sitter::{InputEdit, Parser, Point, Tree};

pub use self::analysis::{Analysis, OutlineItem, OutlineKind, SyntaxProblem};
pub use self::highlight::push_escaped;
pub use self::layout::layout_problem;

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
