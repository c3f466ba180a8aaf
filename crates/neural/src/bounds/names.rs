//! What the program's text says about its names beyond each scope's own: which ones
//! `global` and `nonlocal` send elsewhere, which a frame can lose (`del`, `except ... as`),
//! and which classes an object's repr can name.

use std::collections::HashSet;

use tree_sitter::Node;

/// Whether a class's text writes a private name (`__secret`, which Python stores as
/// `_Class__secret` wherever it appears inside the class).
pub(super) fn mangles(class: Node<'_>, source: &[u8]) -> bool {
    let mut stack = vec![class];
    while let Some(node) = stack.pop() {
        if node.kind() == "identifier" {
            let name = node.utf8_text(source).unwrap_or_default();
            if name.starts_with("__") && !name.ends_with("__") {
                return true;
            }
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    false
}

/// The names `global` and `nonlocal` statements declare, and those `global` alone does.
pub(super) fn declared_names(root: Node<'_>, source: &[u8]) -> (HashSet<String>, HashSet<String>) {
    let (mut declared, mut globals) = (HashSet::new(), HashSet::new());
    // Each node with the declaration it is inside, if any.
    let mut stack = vec![(root, None)];
    while let Some((node, declaration)) = stack.pop() {
        if let Some(kind) = declaration
            && node.kind() == "identifier"
        {
            let name = node.utf8_text(source).unwrap_or_default().to_owned();
            if kind == "global_statement" {
                globals.insert(name.clone());
            }
            declared.insert(name);
        }
        let declaration = declaration
            .or_else(|| Some(node.kind()).filter(|k| matches!(*k, "global_statement" | "nonlocal_statement")));
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor).map(|c| (c, declaration)));
    }
    (declared, globals)
}

/// The names the program unbinds (`del NAME`, or an `except ... as NAME` handler, which
/// Python unbinds at its end), in functions' frames and in the module's.
#[derive(Debug, Clone, Default)]
pub(super) struct Unbound {
    pub(super) in_functions: HashSet<String>,
    pub(super) in_module: HashSet<String>,
}

impl Unbound {
    /// The names a frame at `depth` may stop showing: those the program unbinds in the
    /// module's frame (depth 0) or in a function's.
    pub(super) fn at_depth(&self, depth: u32) -> &HashSet<String> {
        if depth == 0 {
            &self.in_module
        } else {
            &self.in_functions
        }
    }
}

/// The names the program unbinds; `None` when a class body's namespace loses one.
pub(super) fn unbound_names(root: Node<'_>, source: &[u8]) -> Option<Unbound> {
    let mut unbound = Unbound::default();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let names: Vec<Node<'_>> = match node.kind() {
            "delete_statement" => {
                let mut cursor = node.walk();
                let targets: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                targets
                    .into_iter()
                    .flat_map(|t| match t.kind() {
                        "expression_list" | "tuple" | "list" | "parenthesized_expression" => {
                            let mut cursor = t.walk();
                            t.named_children(&mut cursor).collect::<Vec<_>>()
                        }
                        _ => vec![t],
                    })
                    .filter(|t| t.kind() == "identifier")
                    .collect()
            }
            kind if kind.starts_with("except") => {
                let mut cursor = node.walk();
                let pattern = node.children(&mut cursor).find(|c| c.kind() == "as_pattern");
                let alias = node
                    .child_by_field_name("alias")
                    .or_else(|| pattern.and_then(|p| p.child_by_field_name("alias")));
                let mut names = Vec::new();
                let mut walk = alias.into_iter().collect::<Vec<_>>();
                while let Some(n) = walk.pop() {
                    if n.kind() == "identifier" {
                        names.push(n);
                    }
                    let mut cursor = n.walk();
                    walk.extend(n.named_children(&mut cursor));
                }
                if names.is_empty() && (pattern.is_some() || node.child_by_field_name("alias").is_some()) {
                    return None;
                }
                names
            }
            _ => Vec::new(),
        };
        if !names.is_empty() {
            // The innermost definition around it: a function's frame, or a namespace.
            let mut around = node.parent();
            while let Some(n) = around.filter(|n| !matches!(n.kind(), "function_definition" | "class_definition")) {
                around = n.parent();
            }
            let frame = match around {
                None => &mut unbound.in_module,
                Some(n) if n.kind() == "class_definition" => return None,
                Some(_) => &mut unbound.in_functions,
            };
            frame.extend(names.iter().map(|n| n.utf8_text(source).unwrap_or_default().to_owned()));
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    Some(unbound)
}

/// Calls and attributes that name a class or an object by a string
/// (`namedtuple('Point', …)`, `type('Box', …)`, `Enum('Color', …)`, `f.__qualname__ = …`):
/// where the text writes none, no repr starts with a string's contents.
const NAMED_BY_STRING: [&str; 14] = [
    "namedtuple",
    "NamedTuple",
    "type",
    "ABCMeta",
    "new_class",
    "make_dataclass",
    "Enum",
    "IntEnum",
    "StrEnum",
    "Flag",
    "IntFlag",
    "NewType",
    "__name__",
    "__qualname__",
];

/// The names a class of the program can carry (its `__qualname__`): every class
/// statement's, and, where the code can make a class by a call or rename one (it writes a
/// name of [`NAMED_BY_STRING`]: `namedtuple('Point', …)`, `type(…)`, `__qualname__`),
/// every identifier and string it writes.
pub(super) fn class_qualnames(root: Node<'_>, source: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut words: HashSet<&str> = HashSet::new();
    let mut strings: HashSet<&str> = HashSet::new();
    let mut stack: Vec<(Node<'_>, String)> = vec![(root, String::new())];
    while let Some((node, path)) = stack.pop() {
        let name = node
            .child_by_field_name("name")
            .and_then(|n| n.utf8_text(source).ok())
            .unwrap_or_default();
        match node.kind() {
            "identifier" => _ = words.insert(node.utf8_text(source).unwrap_or_default()),
            "string_content" => _ = strings.insert(node.utf8_text(source).unwrap_or_default()),
            _ => {}
        }
        let inner = match node.kind() {
            "class_definition" => {
                let qualname = format!("{path}{name}");
                out.push(qualname.clone());
                format!("{qualname}.")
            }
            "function_definition" => format!("{path}{name}.<locals>."),
            _ => path,
        };
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor).map(|c| (c, inner.clone())));
    }
    // Only a call can name a class otherwise (a `class` statement writes its name).
    if NAMED_BY_STRING.iter().any(|n| words.contains(n)) {
        out.extend(words.into_iter().chain(strings).map(str::to_owned));
    }
    out
}

/// Whether the start of a value (the JSON string's contents) can still be a repr the
/// tracer writes: an object or a class of the program's only if `classes` holds its class.
pub(super) fn repr_prefix_admitted(classes: Option<&[String]>, written: &[u8]) -> bool {
    let Some(classes) = classes else { return true };
    for prefix in [&b"<__main__."[..], &b"<class '__main__."[..]] {
        let Some(rest) = written.strip_prefix(prefix) else {
            continue;
        };
        let end = rest.iter().position(|&c| matches!(c, b' ' | b'\''));
        let name = &rest[..end.unwrap_or(rest.len())];
        return classes.iter().any(|c| {
            let c = c.as_bytes();
            if end.is_some() { c == name } else { c.starts_with(name) }
        });
    }
    true
}

/// Standard modules whose objects all print in the shape [`super::repr_shape`] checks.
const PLAIN_MODULES: [&str; 44] = [
    "abc",
    "array",
    "bisect",
    "calendar",
    "cmath",
    "collections",
    "contextlib",
    "copy",
    "csv",
    "dataclasses",
    "datetime",
    "decimal",
    "enum",
    "fractions",
    "functools",
    "hashlib",
    "heapq",
    "io",
    "itertools",
    "json",
    "keyword",
    "math",
    "numbers",
    "operator",
    "os",
    "pathlib",
    "pprint",
    "queue",
    "random",
    "re",
    "statistics",
    "string",
    "struct",
    "sys",
    "textwrap",
    "time",
    "types",
    "typing",
    "unicodedata",
    "uuid",
    "warnings",
    "weakref",
    "zlib",
    "__future__",
];

/// Whether every module the program imports is one of [`PLAIN_MODULES`] (another library's
/// objects, a data frame's say, may print as a table).
pub(super) fn imports_plain_modules(root: Node<'_>, source: &[u8]) -> bool {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        let modules: Vec<Node<'_>> = match node.kind() {
            "import_statement" => node
                .named_children(&mut cursor)
                .filter_map(|n| {
                    if n.kind() == "aliased_import" {
                        n.child_by_field_name("name")
                    } else {
                        Some(n)
                    }
                })
                .collect(),
            "import_from_statement" => node.child_by_field_name("module_name").into_iter().collect(),
            _ => {
                stack.extend(node.named_children(&mut cursor));
                continue;
            }
        };
        if modules.is_empty() || !modules.iter().all(|m| top_module_plain(*m, source)) {
            return false;
        }
    }
    true
}

fn top_module_plain(dotted: Node<'_>, source: &[u8]) -> bool {
    let text = dotted.utf8_text(source).unwrap_or_default();
    let top = text.split('.').next().unwrap_or_default();
    !text.starts_with('.') && PLAIN_MODULES.contains(&top)
}

/// The names a repr of this program's values can start with (see
/// [`super::repr_shape::REPR_NAMES`]), sorted: the builtin ones, and those of `written`
/// (what [`class_qualnames`] gives: every identifier the text writes, and its strings
/// where it names something by one) that could be a name.
pub(super) fn repr_words(written: &[String]) -> Vec<String> {
    let name_like = |w: &&String| {
        !w.is_empty()
            && !w.starts_with(|c: char| c.is_ascii_digit())
            && w.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    let builtin = super::repr_shape::REPR_NAMES.iter().map(|w| (*w).to_owned());
    let mut words: Vec<String> = builtin.chain(written.iter().filter(name_like).cloned()).collect();
    words.sort();
    words.dedup();
    words
}
