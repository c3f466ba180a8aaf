//! Module names whose value never changes once bound: a top-level plain `def` or `class`
//! that is the only statement of the program binding its name.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use super::body::Body;
use super::{effects, hidden, json_contents};

/// The module names bound once and for all by a top-level undecorated `def`
/// (`<function f>`) or plain `class` (`<class '__main__.C'>`), each with that repr as a
/// JSON string's contents: no other statement of the module's `body` binds the name, no function
/// declares it `global` or `nonlocal` (`declared`), and the module never unbinds it
/// (`unbound`). The caller checks that the program binds no name its text does not write.
pub(super) fn constant_globals(
    root: Node<'_>,
    source: &[u8],
    body: &Body,
    declared: &HashSet<String>,
    unbound: &HashSet<String>,
) -> HashMap<String, Vec<u8>> {
    let mut cursor = root.walk();
    let statements: Vec<Node<'_>> = root
        .named_children(&mut cursor)
        .filter(|s| s.kind() != "comment")
        .collect();
    statements
        .iter()
        .filter_map(|statement| {
            let name = statement.child_by_field_name("name")?.utf8_text(source).ok()?;
            let repr = match statement.kind() {
                "function_definition" => format!("<function {name}>"),
                "class_definition" if effects::plain_class(*statement, source) => format!("<class '__main__.{name}'>"),
                _ => return None,
            };
            let binders = body.0.iter().filter(|s| s.names.contains(name)).count();
            (binders == 1 && !declared.contains(name) && !unbound.contains(name) && !hidden(name))
                .then(|| (name.to_owned(), json_contents(&repr)))
        })
        .collect()
}
