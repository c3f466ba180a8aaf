//! Python source as the server reads it without running it: tree-sitter trees and module
//! names. Shared by the reproduction agent (chunking, extraction, checks) and the neural
//! debugger (rollouts, the `PyPI` corpus), so neither imports the other to parse Python.

use tree_sitter::{Parser, Tree};

/// Parses Python source; `None` only if tree-sitter gives up (cancelled or no language).
pub fn parse(source: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_python::LANGUAGE.into()).ok()?;
    parser.parse(source, None)
}

/// The dotted module name of a project path: `pkg/train.py` → `pkg.train`,
/// `pkg/__init__.py` → `pkg`.
pub fn module_name(path: &str) -> String {
    let stem = path.strip_suffix(".py").unwrap_or(path);
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    stem.replace('/', ".")
}
