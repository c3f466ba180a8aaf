//! A Python module as the corpus needs it: its top-level definitions (functions,
//! classes, simple assignments), the names each one uses, and its imports, read with
//! tree-sitter. Enough to copy one function together with the helpers it needs.

use std::collections::HashSet;

use tree_sitter::Node;

use replayground_exec::python;

/// One parameter of a function, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub annotation: Option<String>,
    pub default: Option<String>,
    pub keyword_only: bool,
}

/// A top-level function's signature and docstring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub params: Vec<Param>,
    /// The docstring's text without quotes (empty when there is none).
    pub doc: String,
    pub is_async: bool,
    pub is_generator: bool,
    /// `*args` and `**kwargs` parameters (calls leave them empty).
    pub splats: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefKind {
    Function,
    Class,
    Assignment,
}

/// A top-level definition: its text (docstrings shortened to their first line) and the
/// names it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Def {
    pub name: String,
    pub kind: DefKind,
    pub text: String,
    pub uses: Vec<String>,
    /// Names called or reached through: `open(...)`, `os.environ`, `time.time()` give
    /// `open`, `os`, `environ`, `time` (a local variable that is only read is not here).
    pub reached: Vec<String>,
    /// For functions only.
    pub signature: Option<Signature>,
    /// For classes: the methods an instance can call (no static, class or property
    /// methods), with their signatures (`self` included).
    pub methods: Vec<(String, Signature)>,
}

/// A top-level import statement and the names it binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    pub text: String,
    /// `from X import a as b` binds `b` to `X.a`: (bound name, module, imported name);
    /// `import x.y as z` binds `z` to module `x.y` with no imported name.
    pub binds: Vec<(String, String, Option<String>)>,
    /// `from __future__ import ...`: kept whenever anything of the module is.
    pub future: bool,
}

/// The parts of one module the corpus reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Module {
    /// Dotted name, e.g. `algorithms.sorting.bubble_sort`.
    pub name: String,
    /// Whether the file is a package's `__init__.py` (relative imports start there).
    pub is_package: bool,
    pub imports: Vec<Import>,
    pub defs: Vec<Def>,
}

impl Module {
    /// Parses `source`; `None` when tree-sitter cannot.
    pub fn parse(path: &str, source: &str) -> Option<Self> {
        let tree = python::parse(source)?;
        let root = tree.root_node();
        let mut module = Self {
            name: python::module_name(path),
            is_package: path.ends_with("__init__.py"),
            ..Self::default()
        };
        let mut cursor = root.walk();
        // Under `from __future__ import annotations` annotations are never evaluated,
        // so the names in them need not exist.
        let lazy = root
            .named_children(&mut cursor)
            .any(|n| n.kind() == "future_import_statement" && source[n.byte_range()].contains("annotations"));
        let mut cursor = root.walk();
        let mut statements: Vec<Node<'_>> = Vec::new();
        for node in root.named_children(&mut cursor) {
            // `try: from binascii import b2a_qp` / `except ImportError: ...`: the
            // first choice is the one this Python takes.
            if node.kind() == "try_statement"
                && let Some(body) = node.child_by_field_name("body")
            {
                let mut inner = body.walk();
                statements.extend(body.named_children(&mut inner));
            } else {
                statements.push(node);
            }
        }
        for node in statements {
            match node.kind() {
                "import_statement" | "import_from_statement" | "future_import_statement" => {
                    if let Some(import) = module.import(node, source) {
                        module.imports.push(import);
                    }
                }
                "function_definition" | "class_definition" | "decorated_definition" => {
                    if let Some(def) = definition(node, source, lazy) {
                        module.defs.push(def);
                    }
                }
                "expression_statement" => module.defs.extend(assignment(node, source)),
                _ => {}
            }
        }
        Some(module)
    }

    /// The last top-level definition of `name` (Python keeps the last one).
    pub fn def(&self, name: &str) -> Option<&Def> {
        self.defs.iter().rev().find(|d| d.name == name)
    }

    /// The import that binds `name`, if any.
    pub fn import_of(&self, name: &str) -> Option<(&Import, &str, Option<&str>)> {
        self.imports.iter().rev().find_map(|import| {
            import
                .binds
                .iter()
                .find(|(bound, _, _)| bound == name)
                .map(|(_, module, item)| (import, module.as_str(), item.as_deref()))
        })
    }

    fn import(&self, node: Node<'_>, source: &str) -> Option<Import> {
        let text = source[node.byte_range()].to_owned();
        let mut binds = Vec::new();
        match node.kind() {
            "future_import_statement" => {
                return Some(Import {
                    text,
                    binds,
                    future: true,
                });
            }
            "import_statement" => {
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    let (dotted, alias) = aliased(name, source)?;
                    let bound = alias.unwrap_or_else(|| dotted.split('.').next().unwrap_or_default().to_owned());
                    // `import a.b` binds `a`, the top package.
                    let module = if name.kind() == "aliased_import" {
                        dotted
                    } else {
                        bound.clone()
                    };
                    binds.push((bound, module, None));
                }
            }
            _ => {
                let from = node.child_by_field_name("module_name")?;
                let module = self.absolute(&source[from.byte_range()])?;
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    let (item, alias) = aliased(name, source)?;
                    binds.push((alias.unwrap_or_else(|| item.clone()), module.clone(), Some(item)));
                }
            }
        }
        Some(Import {
            text,
            binds,
            future: false,
        })
    }

    /// `.sibling` and `..pkg.mod` resolved against this module; absolute names as they are.
    fn absolute(&self, from: &str) -> Option<String> {
        let dots = from.chars().take_while(|&c| c == '.').count();
        if dots == 0 {
            return Some(from.to_owned());
        }
        let mut parts: Vec<&str> = self.name.split('.').collect();
        // A module's own package is one level up; a package's `__init__` is its package.
        let up = if self.is_package { dots - 1 } else { dots };
        if up > parts.len() {
            return None;
        }
        parts.truncate(parts.len() - up);
        let rest = &from[dots..];
        if !rest.is_empty() {
            parts.push(rest);
        }
        Some(parts.join("."))
    }
}

/// `a.b as c` → (`a.b`, Some(`c`)); `a.b` → (`a.b`, None).
fn aliased(node: Node<'_>, source: &str) -> Option<(String, Option<String>)> {
    if node.kind() == "aliased_import" {
        let name = node.child_by_field_name("name")?;
        let alias = node.child_by_field_name("alias")?;
        Some((
            source[name.byte_range()].to_owned(),
            Some(source[alias.byte_range()].to_owned()),
        ))
    } else {
        Some((source[node.byte_range()].to_owned(), None))
    }
}

fn definition(node: Node<'_>, source: &str, lazy_annotations: bool) -> Option<Def> {
    let inner = if node.kind() == "decorated_definition" {
        node.child_by_field_name("definition")?
    } else {
        node
    };
    let name = source[inner.child_by_field_name("name")?.byte_range()].to_owned();
    let (kind, signature) = if inner.kind() == "function_definition" {
        (DefKind::Function, Some(signature(inner, source)?))
    } else {
        (DefKind::Class, None)
    };
    let methods = if kind == DefKind::Class {
        methods(inner, source)
    } else {
        Vec::new()
    };
    let locals = local_names(inner, source);
    Some(Def {
        uses: used_names(node, source, lazy_annotations)
            .into_iter()
            .filter(|name| !locals.contains(name))
            .collect(),
        reached: reached(node, source),
        text: shorten_docstrings(node, source),
        name,
        kind,
        signature,
        methods,
    })
}

fn methods(class: Node<'_>, source: &str) -> Vec<(String, Signature)> {
    let Some(body) = class.child_by_field_name("body") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut cursor = body.walk();
    for node in body.named_children(&mut cursor) {
        let function = match node.kind() {
            "function_definition" => node,
            // `@staticmethod`, `@classmethod`, `@property` and the like change the call.
            _ => continue,
        };
        let name = function
            .child_by_field_name("name")
            .map(|n| source[n.byte_range()].to_owned());
        if let (Some(name), Some(signature)) = (name, signature(function, source)) {
            out.push((name, signature));
        }
    }
    out
}

/// `NAME = value` and `A, B = value` at the top level.
fn assignment(node: Node<'_>, source: &str) -> Vec<Def> {
    let Some(assign) = node.named_child(0).filter(|n| n.kind() == "assignment") else {
        return Vec::new();
    };
    let Some(left) = assign.child_by_field_name("left") else {
        return Vec::new();
    };
    let names: Vec<String> = match left.kind() {
        "identifier" => vec![source[left.byte_range()].to_owned()],
        "pattern_list" | "tuple_pattern" => {
            let mut cursor = left.walk();
            left.named_children(&mut cursor)
                .filter(|n| n.kind() == "identifier")
                .map(|n| source[n.byte_range()].to_owned())
                .collect()
        }
        _ => Vec::new(),
    };
    let text = source[node.byte_range()].to_owned();
    let uses = assign
        .child_by_field_name("right")
        .map(|right| used_names(right, source, false))
        .unwrap_or_default();
    names
        .into_iter()
        .filter(|name| name != "__all__")
        .map(|name| Def {
            name,
            kind: DefKind::Assignment,
            text: text.clone(),
            uses: uses.clone(),
            reached: reached(node, source),
            signature: None,
            methods: Vec::new(),
        })
        .collect()
}

fn signature(function: Node<'_>, source: &str) -> Option<Signature> {
    let parameters = function.child_by_field_name("parameters")?;
    let text = |n: Node<'_>| source[n.byte_range()].to_owned();
    let mut params = Vec::new();
    let mut splats = 0;
    let mut keyword_only = false;
    let mut cursor = parameters.walk();
    for param in parameters.named_children(&mut cursor) {
        let field = |name| param.child_by_field_name(name).map(text);
        let (name, annotation, default) = match param.kind() {
            "identifier" => (text(param), None, None),
            "typed_parameter" => {
                let first = param.named_child(0)?;
                if first.kind() != "identifier" {
                    // `*args: int` and `**kw: str` are typed splats.
                    splats += 1;
                    keyword_only |= first.kind() == "list_splat_pattern";
                    continue;
                }
                (text(first), field("type"), None)
            }
            "default_parameter" => (field("name")?, None, field("value")),
            "typed_default_parameter" => (field("name")?, field("type"), field("value")),
            "list_splat_pattern" => {
                splats += 1;
                keyword_only = true;
                continue;
            }
            "dictionary_splat_pattern" => {
                splats += 1;
                continue;
            }
            "keyword_separator" => {
                keyword_only = true;
                continue;
            }
            _ => continue,
        };
        params.push(Param {
            name,
            annotation,
            default,
            keyword_only,
        });
    }
    let doc = function
        .child_by_field_name("body")
        .and_then(|body| docstring(body))
        .map(|node| unquote(&source[node.byte_range()]))
        .unwrap_or_default();
    Some(Signature {
        params,
        doc,
        is_async: source[function.byte_range()].starts_with("async"),
        is_generator: has_yield(function.child_by_field_name("body")?),
        splats,
    })
}

/// The string node that is a block's first statement.
fn docstring(body: Node<'_>) -> Option<Node<'_>> {
    let first = body.named_child(0)?;
    let string = first.named_child(0)?;
    (first.kind() == "expression_statement" && string.kind() == "string").then_some(string)
}

fn unquote(literal: &str) -> String {
    let body = literal.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    for quote in ["\"\"\"", "'''", "\"", "'"] {
        if let Some(inner) = body.strip_prefix(quote).and_then(|b| b.strip_suffix(quote)) {
            return inner.to_owned();
        }
    }
    body.to_owned()
}

fn has_yield(node: Node<'_>) -> bool {
    if node.kind() == "yield" {
        return true;
    }
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        // A nested function's yield makes that function a generator, not this one.
        .filter(|child| !matches!(child.kind(), "function_definition" | "lambda" | "class_definition"))
        .any(has_yield)
}

/// Every identifier read in `node`, in order of first appearance (attribute names and
/// keyword-argument names are not reads).
fn used_names(node: Node<'_>, source: &str, skip_annotations: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut stack = vec![node];
    let mut ordered = Vec::new();
    while let Some(n) = stack.pop() {
        if n.kind() == "identifier" {
            let parent = n.parent();
            let is_attribute =
                parent.is_some_and(|p| p.kind() == "attribute" && p.child_by_field_name("attribute") == Some(n));
            let is_keyword =
                parent.is_some_and(|p| p.kind() == "keyword_argument" && p.child_by_field_name("name") == Some(n));
            if !is_attribute && !is_keyword {
                ordered.push((n.start_byte(), source[n.byte_range()].to_owned()));
            }
        }
        let mut cursor = n.walk();
        stack.extend(
            n.named_children(&mut cursor)
                .filter(|child| !(skip_annotations && child.kind() == "type")),
        );
    }
    ordered.sort();
    for (_, name) in ordered {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Names bound inside a definition (parameters, assignment and loop targets): a read of
/// one is not a read of the module's name, whatever the module defines.
fn local_names(node: Node<'_>, source: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut targets = Vec::new();
    let mut globals = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "global_statement" => {
                let mut cursor = n.walk();
                globals.extend(n.named_children(&mut cursor).map(|g| source[g.byte_range()].to_owned()));
            }
            "function_definition" | "lambda" => {
                if let Some(parameters) = n.child_by_field_name("parameters") {
                    targets.push(parameters);
                }
            }
            "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                targets.extend(n.child_by_field_name("left"));
            }
            "named_expression" => targets.extend(n.child_by_field_name("name")),
            "as_pattern" => targets.extend(n.child_by_field_name("alias")),
            _ => {}
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    while let Some(target) = targets.pop() {
        match target.kind() {
            "identifier" => {
                out.insert(source[target.byte_range()].to_owned());
            }
            // `xs[i] = v` and `self.x = v` bind no name; default values are reads.
            "subscript" | "attribute" | "type" => {}
            "default_parameter" | "typed_default_parameter" => targets.extend(target.child_by_field_name("name")),
            _ => {
                let mut cursor = target.walk();
                targets.extend(target.named_children(&mut cursor));
            }
        }
    }
    // `global NAME` makes an assignment a write to the module's name.
    for name in globals {
        out.remove(&name);
    }
    out
}

/// Names called or reached through; a bare call is written `name()` (`open()`, `id()`),
/// so that `re.compile` does not read as the builtin `compile()`.
fn reached(node: Node<'_>, source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        let parent = n.parent();
        let called = parent.is_some_and(|p| p.kind() == "call" && p.child_by_field_name("function") == Some(n));
        let in_attribute = parent.is_some_and(|p| p.kind() == "attribute");
        if n.kind() == "identifier" && (called || in_attribute) {
            let name = &source[n.byte_range()];
            out.push(if called { format!("{name}()") } else { name.to_owned() });
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    out.sort();
    out.dedup();
    out
}

/// The definition's text with every multi-line docstring cut to its first line: the
/// story of a function is in its code, and the model's context is short.
fn shorten_docstrings(node: Node<'_>, source: &str) -> String {
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if matches!(n.kind(), "function_definition" | "class_definition")
            && let Some(string) = n.child_by_field_name("body").and_then(|b| docstring(b))
        {
            let literal = &source[string.byte_range()];
            if literal.contains('\n') {
                let summary: String = unquote(literal)
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .unwrap_or("...")
                    .chars()
                    .filter(|&c| c != '"' && c != '\\')
                    .collect();
                edits.push((string.byte_range(), format!("\"\"\"{summary}\"\"\"")));
            }
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    edits.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
    let start = node.start_byte();
    let mut text = source[node.byte_range()].to_owned();
    for (range, replacement) in edits {
        text.replace_range(range.start - start..range.end - start, &replacement);
    }
    text
}

/// The calls in a docstring's examples (`>>> name(...)` on one line), as written.
pub fn doctest_calls(doc: &str, name: &str) -> Vec<String> {
    doc.lines()
        .filter_map(|line| line.trim().strip_prefix(">>> "))
        .filter(|call| {
            call.starts_with(&format!("{name}("))
                && call.ends_with(')')
                && python::parse(call).is_some_and(|tree| {
                    let root = tree.root_node();
                    // Arguments that name the example's earlier variables cannot stand alone.
                    let arguments = root
                        .named_child(0)
                        .and_then(|statement| statement.named_child(0))
                        .and_then(|call| call.child_by_field_name("arguments"));
                    !root.has_error() && arguments.is_some_and(|a| only_literals(a, call))
                })
        })
        .map(str::to_owned)
        .collect()
}

fn only_literals(node: Node<'_>, source: &str) -> bool {
    match node.kind() {
        "identifier" => matches!(&source[node.byte_range()], "True" | "False" | "None"),
        "keyword_argument" => node
            .child_by_field_name("value")
            .is_some_and(|v| only_literals(v, source)),
        "integer" | "float" | "string" | "concatenated_string" | "true" | "false" | "none" => true,
        "argument_list"
        | "list"
        | "tuple"
        | "set"
        | "dictionary"
        | "pair"
        | "unary_operator"
        | "parenthesized_expression" => {
            let mut cursor = node.walk();
            node.named_children(&mut cursor)
                .all(|child| only_literals(child, source))
        }
        _ => false,
    }
}

/// A parameter's description in a Google-style `Args:` section (or any line that starts
/// with its name), lowercased; empty when the docstring does not describe it.
pub fn param_doc(doc: &str, param: &str) -> String {
    let mut lines = doc.lines().map(str::trim);
    let mut out = String::new();
    while let Some(line) = lines.next() {
        let described = line
            .strip_prefix(param)
            .and_then(|rest| rest.trim_start().strip_prefix([':', '(']))
            .or_else(|| line.strip_prefix(&format!("{param} --")));
        if let Some(rest) = described {
            out.push_str(rest);
            // A description may run on to the next line.
            if let Some(next) = lines.next().filter(|l| !l.is_empty() && !l.contains(':')) {
                out.push(' ');
                out.push_str(next);
            }
            break;
        }
    }
    out.to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r#""""A module."""
from __future__ import annotations

import math
from collections import deque as queue
from .helpers import clamp, other as renamed

LIMIT = 3


def area(radius: float, *, exact: bool = False) -> float:
    """Area of a circle.

    Args:
        radius: the circle's radius, non-negative.

    Examples:
        >>> area(2.0)
        12.56
        >>> print(area(1))
        >>> area(radius)
        >>> area(-1.5)
    """
    if exact:
        return math.pi * radius ** 2
    return round(clamp(radius, LIMIT) ** 2 * 3.14, 2)


def walk(items, *rest, **options):
    for item in items:
        yield item
"#;

    #[test]
    fn definitions_imports_and_signatures_are_read() {
        let module = Module::parse("pkg/geometry.py", SOURCE).unwrap();
        assert_eq!(module.name, "pkg.geometry");
        assert_eq!(module.imports.len(), 4);
        assert!(module.imports[0].future);
        assert_eq!(module.import_of("math").unwrap().1, "math");
        assert_eq!(
            module.import_of("queue").map(|(_, m, i)| (m, i)),
            Some(("collections", Some("deque")))
        );
        assert_eq!(
            module.import_of("renamed").map(|(_, m, i)| (m, i)),
            Some(("pkg.helpers", Some("other")))
        );
        let area = module.def("area").unwrap();
        assert_eq!(area.kind, DefKind::Function);
        for name in ["math", "round", "clamp", "LIMIT"] {
            assert!(area.uses.contains(&name.to_owned()), "{name} in {:?}", area.uses);
        }
        for local in ["exact", "radius"] {
            assert!(
                !area.uses.contains(&local.to_owned()),
                "parameters are locals: {:?}",
                area.uses
            );
        }
        assert!(!area.uses.contains(&"pi".to_owned()), "attribute names are not reads");
        assert!(
            area.text.contains("\"\"\"Area of a circle.\"\"\"\n    if exact:"),
            "{}",
            area.text
        );
        let signature = area.signature.as_ref().unwrap();
        assert_eq!(signature.params.len(), 2);
        assert_eq!(signature.params[0].annotation.as_deref(), Some("float"));
        assert!(signature.params[1].keyword_only);
        assert_eq!(signature.params[1].default.as_deref(), Some("False"));
        assert_eq!(doctest_calls(&signature.doc, "area"), ["area(2.0)", "area(-1.5)"]);
        assert_eq!(
            param_doc(&signature.doc, "radius"),
            " the circle's radius, non-negative."
        );
        let walk = module.def("walk").unwrap().signature.clone().unwrap();
        assert!(walk.is_generator && walk.splats == 2 && walk.params.len() == 1);
        assert_eq!(module.def("LIMIT").unwrap().kind, DefKind::Assignment);
    }

    #[test]
    fn relative_imports_resolve_from_packages_and_modules() {
        let package = Module {
            name: "pkg.sub".into(),
            is_package: true,
            ..Module::default()
        };
        assert_eq!(package.absolute(".tree").as_deref(), Some("pkg.sub.tree"));
        assert_eq!(package.absolute("..common").as_deref(), Some("pkg.common"));
        let module = Module {
            name: "pkg.sub.mod".into(),
            ..Module::default()
        };
        assert_eq!(module.absolute(".tree").as_deref(), Some("pkg.sub.tree"));
        assert_eq!(module.absolute(".").as_deref(), Some("pkg.sub"));
        assert_eq!(module.absolute("....x"), None);
    }
}
