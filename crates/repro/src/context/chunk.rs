//! The project's Python cut into retrievable chunks (RepGen §3.1): one module chunk with
//! the top-level statements, one chunk per class, one per function or method (named
//! `Trainer.fit`), from tree-sitter's syntax tree. Files with syntax errors still give
//! the chunks that parse.

use replayground_shared::repro::ChunkKind;
use tree_sitter::Node;

use replayground_exec::python::{module_name, parse};

use crate::project::Project;

/// A retrievable piece of a Python file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub path: String,
    /// Qualified name (`Trainer.fit`); the dotted module name for a module chunk.
    pub name: String,
    pub kind: ChunkKind,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// The line spans the chunk is made of (one for a class or function; the top-level
    /// statements for a module), 1-based and inclusive.
    pub spans: Vec<(u32, u32)>,
    pub text: String,
}

/// 1-based first and last line of a node.
pub fn lines_of(node: Node<'_>) -> (u32, u32) {
    let start = node.start_position().row as u32 + 1;
    let end_position = node.end_position();
    // A node ending at column 0 ends on the previous line (its trailing newline).
    let end = if end_position.column == 0 && end_position.row > node.start_position().row {
        end_position.row as u32
    } else {
        end_position.row as u32 + 1
    };
    (start, end)
}

/// The text of lines `start..=end` (1-based) of `source`.
pub fn line_text(source: &str, start: u32, end: u32) -> String {
    let lines: Vec<&str> = source
        .lines()
        .skip(start.saturating_sub(1) as usize)
        .take((end + 1).saturating_sub(start) as usize)
        .collect();
    lines.join("\n")
}

/// The definition a `decorated_definition` wraps, or the node itself.
pub fn definition_of(node: Node<'_>) -> Node<'_> {
    if node.kind() == "decorated_definition" {
        node.child_by_field_name("definition").unwrap_or(node)
    } else {
        node
    }
}

/// Chunks every Python file of the project, in path order.
pub fn chunk_project(project: &Project) -> Vec<Chunk> {
    project
        .python_files()
        .flat_map(|file| chunk_file(&file.path, &file.text))
        .collect()
}

/// Chunks one Python file: the module chunk first (when it has top-level statements),
/// then classes, methods and functions in source order.
pub fn chunk_file(path: &str, source: &str) -> Vec<Chunk> {
    let Some(tree) = parse(source) else { return Vec::new() };
    let mut chunks = Vec::new();
    let mut module_spans = Vec::new();
    collect_top_level(path, source, tree.root_node(), &mut chunks, &mut module_spans);
    if !module_spans.is_empty() {
        let text = module_spans
            .iter()
            .map(|&(start, end)| line_text(source, start, end))
            .collect::<Vec<_>>()
            .join("\n");
        let module = Chunk {
            path: path.to_owned(),
            name: module_name(path),
            kind: ChunkKind::Module,
            start_line: module_spans[0].0,
            end_line: module_spans[module_spans.len() - 1].1,
            spans: module_spans,
            text,
        };
        chunks.insert(0, module);
    }
    chunks
}

/// Walks a module's (or a top-level ERROR node's) children: definitions become chunks,
/// everything else joins the module chunk.
fn collect_top_level(
    path: &str,
    source: &str,
    parent: Node<'_>,
    chunks: &mut Vec<Chunk>,
    module_spans: &mut Vec<(u32, u32)>,
) {
    let mut cursor = parent.walk();
    for child in parent.named_children(&mut cursor) {
        let definition = definition_of(child);
        match definition.kind() {
            "function_definition" | "class_definition" => collect_definition(path, source, child, "", chunks),
            "comment" => {}
            // Code after a syntax error sits in an ERROR node; its definitions still count.
            "ERROR" if has_definition(child) => collect_top_level(path, source, child, chunks, module_spans),
            _ => {
                let (start, end) = lines_of(child);
                match module_spans.last_mut() {
                    Some(last) if only_blank_between(source, last.1, start) => last.1 = last.1.max(end),
                    _ => module_spans.push((start, end)),
                }
            }
        }
    }
}

/// Whether the lines strictly between `end` and `start` (1-based) are blank or comments,
/// so two top-level statements belong to one span.
fn only_blank_between(source: &str, end: u32, start: u32) -> bool {
    start <= end + 1
        || source
            .lines()
            .skip(end as usize)
            .take((start - end - 1) as usize)
            .all(|line| line.trim().is_empty() || line.trim_start().starts_with('#'))
}

fn has_definition(node: Node<'_>) -> bool {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .any(|child| matches!(definition_of(child).kind(), "function_definition" | "class_definition"))
}

/// Adds a chunk for a (possibly decorated) class or function, then for the methods and
/// nested classes of a class. Functions nested in functions stay part of their parent.
fn collect_definition(path: &str, source: &str, node: Node<'_>, prefix: &str, chunks: &mut Vec<Chunk>) {
    let definition = definition_of(node);
    let Some(name) = definition
        .child_by_field_name("name")
        .and_then(|n| n.utf8_text(source.as_bytes()).ok())
    else {
        return;
    };
    let qualified = if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    };
    let (start_line, end_line) = lines_of(node);
    let is_class = definition.kind() == "class_definition";
    chunks.push(Chunk {
        path: path.to_owned(),
        name: qualified.clone(),
        kind: if is_class {
            ChunkKind::Class
        } else {
            ChunkKind::Function
        },
        start_line,
        end_line,
        spans: vec![(start_line, end_line)],
        text: line_text(source, start_line, end_line),
    });
    if is_class && let Some(body) = definition.child_by_field_name("body") {
        let mut cursor = body.walk();
        for member in body.named_children(&mut cursor) {
            if matches!(definition_of(member).kind(), "function_definition" | "class_definition") {
                collect_definition(path, source, member, &qualified, chunks);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "\
import torch
LR = 0.1

@dataclass
class Config:
    lr: float = LR

class Trainer:
    def __init__(self, model):
        self.model = model

    @torch.no_grad()
    def evaluate(self):
        def inner():
            return 1
        return inner()

def main():
    Trainer(None).evaluate()

if __name__ == \"__main__\":
    main()
";

    #[test]
    fn a_file_is_cut_into_module_classes_and_functions() {
        let chunks = chunk_file("pkg/train.py", SOURCE);
        let names: Vec<(&str, ChunkKind, u32, u32)> = chunks
            .iter()
            .map(|c| (c.name.as_str(), c.kind, c.start_line, c.end_line))
            .collect();
        assert_eq!(
            names,
            vec![
                ("pkg.train", ChunkKind::Module, 1, 22),
                ("Config", ChunkKind::Class, 4, 6),
                ("Trainer", ChunkKind::Class, 8, 16),
                ("Trainer.__init__", ChunkKind::Function, 9, 10),
                ("Trainer.evaluate", ChunkKind::Function, 12, 16),
                ("main", ChunkKind::Function, 18, 19),
            ]
        );
        assert_eq!(chunks[0].spans, vec![(1, 2), (21, 22)]);
        let spaced = chunk_file(
            "m.py",
            "import os\n\n# paths\nROOT = os.getcwd()\n\ndef f():\n    pass\n",
        );
        assert_eq!(spaced[0].spans, vec![(1, 4)]);
        assert_eq!(
            chunks[0].text,
            "import torch\nLR = 0.1\nif __name__ == \"__main__\":\n    main()"
        );
        assert!(chunks[4].text.starts_with("    @torch.no_grad()"));
    }

    #[test]
    fn a_syntax_error_keeps_the_definitions_that_parse() {
        let source = "def good():\n    return 1\n\nx = (1,\n\ndef also_good(a):\n    return a\n";
        let names: Vec<String> = chunk_file("broken.py", source).into_iter().map(|c| c.name).collect();
        assert!(names.contains(&"good".to_owned()), "{names:?}");
    }

    #[test]
    fn module_names_follow_packages() {
        assert_eq!(module_name("pkg/sub/train.py"), "pkg.sub.train");
        assert_eq!(module_name("pkg/__init__.py"), "pkg");
        assert_eq!(module_name("main.py"), "main");
    }
}
