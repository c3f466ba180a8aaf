//! What the whole program's text says about its functions and classes as values: the
//! `__init__` a class call runs first, whether any of them is ever held as a value that a
//! library could call, the attributes it could define, the names only an `import` binds.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use super::builtins::PLAIN_BASES;
use super::effects::{Effects, Program, collect, text, yields};
use super::line_of;

/// Adds to `program` what its functions and classes are as values, given what
/// [`Program::new`] read from the same text (`everything`: the whole text's effects).
pub(super) fn add_values(program: &mut Program, everything: &Effects, root: Node<'_>, source: &[u8]) {
    let bound_once = |name: &str| everything.times_bound(name) == 1 && !program.parameters.contains(name);
    let inits = class_inits(root, source, bound_once);
    let imported = imported_names(root, source)
        .into_iter()
        .filter(|n| bound_once(n))
        .collect();
    (program.class_inits, program.imported) = (inits, imported);
    program.defaultdicts = String::from_utf8_lossy(source).contains("defaultdict");
    values_of_code(root, source, program);
}

/// Fills [`Program::functions_escape`] and [`Program::attributes`].
fn values_of_code(root: Node<'_>, source: &[u8], program: &mut Program) {
    let mut definitions = HashSet::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if matches!(node.kind(), "function_definition" | "class_definition") {
            definitions.insert(text(node.child_by_field_name("name"), source));
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    let is_field = |node: Node<'_>, name: &str| {
        node.parent()
            .and_then(|p| p.child_by_field_name(name))
            .is_some_and(|f| f.id() == node.id())
    };
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "lambda" | "decorator" => program.functions_escape = true,
            "string_content" => {
                let words = text(Some(node), source);
                if !words.is_empty() && words.chars().all(|c| c == '_' || c.is_alphanumeric()) {
                    program.attributes.insert(words.to_owned());
                }
            }
            "attribute" => {
                let name = node.child_by_field_name("attribute");
                let called = is_field(node, "function") && parent_kind(node) == "call";
                if definitions.contains(text(name, source)) && !called {
                    program.functions_escape = true;
                }
                if is_field(node, "left") || parent_kind(node) == "pattern_list" {
                    program.attributes.insert(text(name, source).to_owned());
                }
            }
            "identifier" if definitions.contains(text(Some(node), source)) => {
                let parent = parent_kind(node);
                let named = is_field(node, "name") && matches!(parent, "function_definition" | "class_definition");
                let called = is_field(node, "function") && parent == "call";
                let object = is_field(node, "object") && parent == "attribute";
                // `x.push`'s name: the "attribute" arm above judges it.
                let member = is_field(node, "attribute") && parent == "attribute";
                // Through a tuple, a parenthesis or `as`: what holds the name.
                let mut holder = node.parent();
                while let Some(h) =
                    holder.filter(|h| matches!(h.kind(), "tuple" | "parenthesized_expression" | "as_pattern"))
                {
                    holder = h.parent();
                }
                let owner = holder.filter(|h| h.kind() == "argument_list").and_then(|a| a.parent());
                let typed = owner.is_some_and(|o| {
                    o.kind() == "class_definition"
                        || (o.kind() == "call"
                            && matches!(
                                text(o.child_by_field_name("function"), source),
                                "isinstance" | "issubclass"
                            ))
                });
                let caught = holder.is_some_and(|h| matches!(h.kind(), "except_clause" | "except_group_clause"));
                if !(named || called || object || member || typed || caught) {
                    program.functions_escape = true;
                }
            }
            _ => {}
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    program.protocol_methods = PROTOCOL_METHODS.iter().any(|m| definitions.contains(m));
    program.attributes.extend(definitions.into_iter().map(str::to_owned));
}

/// Methods the standard library calls by name on objects it is handed (files, mappings,
/// iterators, generators, context managers, copies).
pub(super) const PROTOCOL_METHODS: [&str; 16] = [
    "write",
    "read",
    "readline",
    "readlines",
    "flush",
    "close",
    "keys",
    "items",
    "values",
    "get",
    "send",
    "throw",
    "fileno",
    "seek",
    "copy",
    "next",
];

fn parent_kind(node: Node<'_>) -> &str {
    node.parent().map(|p| p.kind()).unwrap_or_default()
}

/// The names `import` statements bind.
fn imported_names(root: Node<'_>, source: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if matches!(node.kind(), "import_statement" | "import_from_statement") {
            let mut effects = Effects::default();
            collect(node, source, None, &Program::default(), &mut effects, false);
            found.extend(effects.bindings.into_iter().map(|b| b.name));
            continue;
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    found
}

/// The classes a call of whose name surely runs an `__init__` of the program before
/// anything else of it, each with that `def`'s line: undecorated top-level classes bound
/// once (`bound_once`), without keywords (no metaclass), which define no `__new__` and
/// never rebind `__init__` but by one plain `def` (not `async`, not a generator), theirs
/// or, when they define none, their one base's (a class of the same kind). A builtin base
/// (`Exception`) makes no frame of the program's before it.
fn class_inits(root: Node<'_>, source: &[u8], bound_once: impl Fn(&str) -> bool) -> HashMap<String, u32> {
    // Each class: its own `__init__`'s line, and its base (`None`: none, `object` or a
    // builtin exception or container, whose `__new__` runs nothing of the program).
    let mut classes: HashMap<&str, (Option<u32>, Option<&str>)> = HashMap::new();
    let mut cursor = root.walk();
    for class in root
        .named_children(&mut cursor)
        .filter(|n| n.kind() == "class_definition")
    {
        let name = text(class.child_by_field_name("name"), source);
        let bases: Vec<Node<'_>> = class.child_by_field_name("superclasses").map_or_else(Vec::new, |b| {
            let mut cursor = b.walk();
            b.named_children(&mut cursor).collect()
        });
        let Some(body) = class
            .child_by_field_name("body")
            .filter(|_| bound_once(name) && bases.len() <= 1)
        else {
            continue;
        };
        let base = match bases.first() {
            None => None,
            Some(b) if b.kind() == "identifier" => Some(text(Some(*b), source)).filter(|b| !PLAIN_BASES.contains(b)),
            Some(_) => continue,
        };
        let mut inits = Vec::new();
        let mut plain = true;
        let mut cursor = body.walk();
        for statement in body.named_children(&mut cursor) {
            let defined = text(statement.child_by_field_name("name"), source);
            let words = text(Some(statement), source);
            match statement.kind() {
                "function_definition" if defined == "__init__" => {
                    plain &= !words.starts_with("async") && !yields(statement);
                    inits.push(line_of(statement.start_position().row));
                }
                "function_definition" => plain &= defined != "__new__",
                _ => plain &= !words.contains("__init__") && !words.contains("__new__"),
            }
        }
        if plain && inits.len() <= 1 {
            classes.insert(name, (inits.first().copied(), base));
        }
    }
    // The first `__init__` along the bases, every one of them such a class.
    let resolve = |name: &str| {
        let (mut init, mut base) = *classes.get(name)?;
        for _ in 0..8 {
            let Some(next) = base else {
                return init;
            };
            let (next_init, next_base) = *classes.get(next)?;
            init = init.or(next_init);
            base = next_base;
        }
        None
    };
    classes
        .keys()
        .filter_map(|name| resolve(name).map(|line| ((*name).to_owned(), line)))
        .collect()
}
