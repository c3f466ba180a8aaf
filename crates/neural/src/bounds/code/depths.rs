//! How deep a frame of each scope can run, read from who calls what (no run).
//!
//! A frame's depth is its caller's plus one. The module runs at depth 0; a comprehension
//! and a class body run in the frame that reaches them; a top-level function that is only
//! ever called by its name (never handed around as a value, never recursive, through any
//! chain of calls) runs one deeper than each frame that calls it, and so does a method
//! of a top-level class of the program's own that only `obj.name(...)` calls (no other
//! scope shares its name, no library class is a base that could call it by name).
//! `to_roman` called only in a dict comprehension at module level runs at depth 2, never 1.
//! Everything else (a special method, a lambda, a generator's frame, whoever a function
//! handed out is called by, a function that recurses) is not bounded.

use std::collections::{BTreeSet, HashMap, HashSet};

use tree_sitter::Node;

use super::{MODULE, Scope, ScopeKind};
use crate::bounds::effects::Program;
use crate::bounds::flow::field;
use crate::bounds::line_of;
use crate::bounds::program::PROTOCOL_METHODS;

/// Text that can call a function without its name in a call: `getattr(module, "f")`,
/// `globals()["f"]()`, the module object. A program holding any is not bounded.
const INDIRECT: [&str; 7] = [
    "getattr",
    "globals",
    "locals",
    "eval",
    "exec",
    "__main__",
    "sys.modules",
];

/// The depths a frame of each scope (by index in `scopes`) can run at: `None` where the
/// text cannot tell.
pub(super) fn depths(root: Node<'_>, source: &[u8], scopes: &[Scope], program: &Program) -> Vec<Option<BTreeSet<u32>>> {
    let text = String::from_utf8_lossy(source);
    let mut graph = Graph {
        plain: &program.plain_functions,
        methods: methods(root, source, scopes),
        parent: vec![None; scopes.len()],
        callers: HashMap::new(),
        escaped: HashSet::new(),
        ambiguous: HashSet::new(),
    };
    if INDIRECT.iter().any(|t| text.contains(t)) {
        graph.escaped.extend(program.plain_functions.iter().cloned());
        graph.escaped.extend(graph.methods.iter().cloned());
    } else {
        graph.walk(root, source, scopes);
    }
    let mut memo = HashMap::new();
    (0..scopes.len())
        .map(|i| graph.depths(i, scopes, &mut memo, &mut Vec::new()))
        .collect()
}

struct Graph<'p> {
    /// The program's plain functions ([`Program::plain_functions`]): names that can only
    /// mean one top-level `def`, whose every call the tracer sees.
    plain: &'p HashSet<String>,
    /// Methods only ever called as `obj.name(...)` ([`methods`]).
    methods: HashSet<String>,
    /// The scope each scope's frame is reached from, where it runs where it is written.
    parent: Vec<Option<usize>>,
    /// For each plain function's name, the scopes whose frames call it by that name.
    callers: HashMap<String, Vec<usize>>,
    /// Plain functions named other than in a call (handed around, so anything may call them).
    escaped: HashSet<String>,
    /// Scopes the walk could not tell apart from another (same name, same line).
    ambiguous: HashSet<usize>,
}

impl Graph<'_> {
    fn walk(&mut self, root: Node<'_>, source: &[u8], scopes: &[Scope]) {
        let words = |node: Node<'_>| node.utf8_text(source).unwrap_or_default();
        // Parts of a scope's node that run in the frame around it: a function's defaults
        // and annotations, a class's bases, a comprehension's first iterable.
        let mut outside: HashMap<usize, usize> = HashMap::new();
        let mut stack = vec![(root, 0_usize)];
        while let Some((node, enclosing)) = stack.pop() {
            let mut inner = enclosing;
            if let Some(index) = scope_of(node, source, scopes) {
                inner = match index {
                    Ok(index) => {
                        self.parent[index] = Some(enclosing);
                        index
                    }
                    Err(indices) => {
                        self.ambiguous.extend(&indices);
                        indices[0]
                    }
                };
                let mut cursor = node.walk();
                if matches!(node.kind(), "function_definition" | "class_definition" | "lambda") {
                    let body = field(node, "body");
                    for child in node.children(&mut cursor).filter(|c| Some(*c) != body) {
                        outside.insert(child.id(), enclosing);
                    }
                } else {
                    let first = node.named_children(&mut cursor).find(|c| c.kind() == "for_in_clause");
                    if let Some(iterable) = first.and_then(|f| field(f, "right")) {
                        outside.insert(iterable.id(), enclosing);
                    }
                }
            }
            let name = words(node);
            if node.kind() == "identifier" && (self.plain.contains(name) || self.methods.contains(name)) {
                let name = name.to_owned();
                let parent = node.parent();
                let called = if self.plain.contains(&name) {
                    parent.is_some_and(|p| p.kind() == "call" && field(p, "function") == Some(node))
                } else {
                    parent.is_some_and(|p| {
                        p.kind() == "attribute"
                            && field(p, "attribute") == Some(node)
                            && p.parent()
                                .is_some_and(|c| c.kind() == "call" && field(c, "function") == Some(p))
                    })
                };
                let defined =
                    parent.is_some_and(|p| p.kind() == "function_definition" && field(p, "name") == Some(node));
                if called {
                    self.callers.entry(name).or_default().push(enclosing);
                } else if !defined {
                    self.escaped.insert(name);
                }
            }
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                stack.push((child, outside.get(&child.id()).copied().unwrap_or(inner)));
            }
        }
    }

    fn depths(
        &self,
        index: usize,
        scopes: &[Scope],
        memo: &mut HashMap<usize, Option<BTreeSet<u32>>>,
        visiting: &mut Vec<usize>,
    ) -> Option<BTreeSet<u32>> {
        if let Some(known) = memo.get(&index) {
            return known.clone();
        }
        // A function reached again through its own calls recurses: any depth.
        if visiting.contains(&index) || self.ambiguous.contains(&index) {
            return None;
        }
        visiting.push(index);
        let scope = &scopes[index];
        let deeper = |set: BTreeSet<u32>| set.into_iter().map(|d| d + 1).collect::<BTreeSet<u32>>();
        let found = match scope.kind {
            ScopeKind::Module => Some(BTreeSet::from([0])),
            ScopeKind::Comprehension | ScopeKind::Class => self.parent[index]
                .and_then(|p| self.depths(p, scopes, memo, visiting))
                .map(deeper),
            ScopeKind::Function
                if (self.parent[index] == Some(0) && self.plain.contains(&scope.name)
                    || self.parent[index]
                        .is_some_and(|p| scopes[p].kind == ScopeKind::Class && self.parent[p] == Some(0))
                        && self.methods.contains(&scope.name))
                    && !self.escaped.contains(&scope.name)
                    && scopes.iter().filter(|s| s.name == scope.name).count() == 1 =>
            {
                // One nothing calls by name may still run where no name shows it (a
                // doctest's text): not bounded.
                self.callers.get(&scope.name).and_then(|callers| {
                    let mut all = BTreeSet::new();
                    for &caller in callers {
                        all.extend(deeper(self.depths(caller, scopes, memo, visiting)?));
                    }
                    Some(all)
                })
            }
            _ => None,
        };
        visiting.pop();
        // What was found while an enclosing call was being resolved may rest on that
        // call's recursion being cut short: keep it only once nothing is being resolved.
        if visiting.is_empty() || found.is_some() {
            memo.insert(index, found.clone());
        }
        found
    }
}

/// The names of methods whose every call shows as `obj.name(...)`: `def`s, undecorated and
/// not generators, in the body of a top-level class whose bases are the program's own such
/// classes (a library base may call a method by name: `run`, `visit_Name`, `default`),
/// undecorated but for `dataclass`, with a name no other scope has that is neither a
/// special method (an operator, a builtin or a class call runs those) nor one the standard
/// library calls on what it is handed.
fn methods(root: Node<'_>, source: &[u8], scopes: &[Scope]) -> HashSet<String> {
    let words = |node: Node<'_>| node.utf8_text(source).unwrap_or_default();
    let mut own: HashMap<&str, Node<'_>> = HashMap::new();
    let mut cursor = root.walk();
    for node in root.named_children(&mut cursor) {
        let class = match node.kind() {
            "class_definition" => node,
            "decorated_definition" => match field(node, "definition") {
                Some(d) if d.kind() == "class_definition" => d,
                _ => continue,
            },
            _ => continue,
        };
        let mut decorators = node.walk();
        let dataclass_at_most = node
            .named_children(&mut decorators)
            .filter(|d| d.kind() == "decorator")
            .all(|d| {
                words(d)
                    .trim_start_matches('@')
                    .trim_start_matches("dataclasses.")
                    .starts_with("dataclass")
            });
        if dataclass_at_most && let Some(name) = field(class, "name") {
            own.insert(words(name), class);
        }
    }
    // A class counts once every base does: grow the set until it stops.
    let mut plain: HashSet<&str> = HashSet::new();
    loop {
        let before = plain.len();
        for (&name, &class) in &own {
            let bases_own = field(class, "superclasses").is_none_or(|bases| {
                let mut cursor = bases.walk();
                bases
                    .named_children(&mut cursor)
                    .all(|b| b.kind() == "identifier" && (words(b) == "object" || plain.contains(words(b))))
            });
            if bases_own {
                plain.insert(name);
            }
        }
        if plain.len() == before {
            break;
        }
    }
    let mut names = HashSet::new();
    for name in plain {
        let Some(body) = field(own[name], "body") else { continue };
        let mut cursor = body.walk();
        for def in body
            .named_children(&mut cursor)
            .filter(|d| d.kind() == "function_definition")
        {
            let method = words(field(def, "name").unwrap_or(def));
            let special = method.starts_with("__") && method.ends_with("__");
            let mut same = scopes.iter().filter(|s| s.name == method);
            let alone = same.next().is_some_and(|s| !s.generator) && same.next().is_none();
            if !special && alone && !PROTOCOL_METHODS.contains(&method) {
                names.insert(method.to_owned());
            }
        }
    }
    names
}

/// The name the tracer gives a frame of the scope `node` starts, if it starts one.
pub(super) fn frame_name<'s>(node: Node<'_>, source: &'s [u8]) -> Option<&'s str> {
    match node.kind() {
        "function_definition" | "class_definition" => node.child_by_field_name("name")?.utf8_text(source).ok(),
        "lambda" => Some("<lambda>"),
        "list_comprehension" => Some("<listcomp>"),
        "set_comprehension" => Some("<setcomp>"),
        "dictionary_comprehension" => Some("<dictcomp>"),
        "generator_expression" => Some("<genexpr>"),
        _ => None,
    }
}

/// The index in `scopes` of the scope `node` starts, if it starts one: `Err` with every
/// candidate where two scopes share its name and line.
fn scope_of(node: Node<'_>, source: &[u8], scopes: &[Scope]) -> Option<Result<usize, Vec<usize>>> {
    let name = frame_name(node, source)?;
    let header = line_of(node.start_position().row);
    let found: Vec<usize> = (scopes.iter().enumerate())
        .filter(|(_, s)| s.name != MODULE && s.name == name && s.header == header)
        .map(|(i, _)| i)
        .collect();
    match found.as_slice() {
        [] => None,
        [one] => Some(Ok(*one)),
        _ => Some(Err(found)),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use replayground_shared::Action;

    use crate::bounds::code::CodeFacts;
    use crate::bounds::tests::after_one;

    fn depths_of(code: &str, name: &str) -> Option<BTreeSet<u32>> {
        let facts = CodeFacts::new(code).expect("parses");
        let mut scopes = facts.scopes.iter().filter(|s| s.name == name);
        let scope = scopes.next().expect("a scope of that name");
        assert!(scopes.next().is_none());
        scope.depths.clone()
    }

    #[test]
    fn a_function_called_only_by_name_runs_one_deeper_than_its_callers() {
        let roman = "def to_roman(n):\n    return 'X' * n\n\n\ndef show(ys):\n    print(to_roman(ys[0]))\n\n\nnumerals = {y: to_roman(y) for y in [1, 2]}\nshow([3])\n";
        assert_eq!(depths_of(roman, "<dictcomp>"), Some(BTreeSet::from([1])));
        assert_eq!(depths_of(roman, "to_roman"), Some(BTreeSet::from([2])));
        assert_eq!(depths_of(roman, "show"), Some(BTreeSet::from([1])));
        // A comprehension's first iterable runs in the frame around it.
        let outside = "def one():\n    return 1\n\n\nys = [y for y in range(one())]\n";
        assert_eq!(depths_of(outside, "one"), Some(BTreeSet::from([1])));
        assert_eq!(depths_of(outside, "<listcomp>"), Some(BTreeSet::from([1])));
        assert_eq!(depths_of("def unused():\n    return 1\n", "unused"), None);
    }

    #[test]
    fn a_method_only_called_by_attribute_runs_one_deeper_than_its_callers() {
        let code = "class Heap:\n    def __init__(self):\n        self.items = []\n\n    def push(self, v):\n        self.items.append(v)\n        self.fix()\n\n    def fix(self):\n        return len(self.items)\n\n\nh = Heap()\nfor v in [3, 1]:\n    h.push(v)\n";
        assert_eq!(depths_of(code, "push"), Some(BTreeSet::from([1])));
        assert_eq!(depths_of(code, "fix"), Some(BTreeSet::from([2])));
        assert_eq!(depths_of(code, "__init__"), None, "a class call runs it");
        // A library base may call a method by name; a method handed out may run anywhere.
        let library = "import threading\n\n\nclass Worker(threading.Thread):\n    def run(self):\n        return 1\n\n\nWorker().start()\n";
        assert_eq!(depths_of(library, "run"), None);
        let handed =
            "class A:\n    def key(self, x):\n        return -x\n\n\na = A()\nprint(sorted([1, 2], key=a.key))\n";
        assert_eq!(depths_of(handed, "key"), None);
        let overridden = "class A:\n    def f(self):\n        return 1\n\n\nclass B(A):\n    def f(self):\n        return 2\n\n\nB().f()\n";
        assert!(
            CodeFacts::new(overridden)
                .expect("parses")
                .scopes
                .iter()
                .filter(|s| s.name == "f")
                .all(|s| s.depths.is_none())
        );
        let through_a_special_method = "class A:\n    def __len__(self):\n        return self.size()\n\n    def size(self):\n        return 0\n\n\nprint(len(A()))\n";
        assert_eq!(depths_of(through_a_special_method, "size"), None);
    }

    #[test]
    fn what_recurses_or_is_handed_around_is_not_bounded() {
        let recursive = "def walk(n):\n    return walk(n - 1) if n else 0\n\n\nwalk(3)\n";
        assert_eq!(depths_of(recursive, "walk"), None);
        let mutual = "def even(n):\n    return n == 0 or odd(n - 1)\n\n\ndef odd(n):\n    return n != 0 and even(n - 1)\n\n\ndef use():\n    return even(4)\n\n\nuse()\n";
        assert_eq!(depths_of(mutual, "odd"), None);
        assert_eq!(depths_of(mutual, "use"), Some(BTreeSet::from([1])));
        let handed = "def key(x):\n    return -x\n\n\nprint(sorted([1, 2], key=key))\n";
        assert_eq!(depths_of(handed, "key"), None);
        let lambda = "def inc(x):\n    return x + 1\n\n\nf = lambda x: inc(x)\nf(1)\n";
        assert_eq!(depths_of(lambda, "inc"), None);
        let indirect = "def f():\n    return 1\n\n\nglobals()['f']()\n";
        assert_eq!(depths_of(indirect, "f"), None);
        let nested = "def outer():\n    def inner():\n        return 1\n\n    return inner()\n\n\nouter()\n";
        assert_eq!(depths_of(nested, "inner"), None, "a closure may be handed out");
        assert_eq!(depths_of(nested, "outer"), Some(BTreeSet::from([1])));
    }

    #[test]
    fn a_breakpoint_in_a_function_a_comprehension_calls_stops_at_its_depth() {
        let code = "def to_roman(n):\n    out = ''\n    return out\n\n\nyears = [14, 9]\nnumerals = {y: to_roman(y) for y in years}\nprint(numerals)\n";
        let to = after_one(
            code,
            r#"<|line|>6 0 <module> <|vars|>{"to_roman":"<function to_roman>"}"#,
            Action::Breakpoint(2),
        );
        assert!(to.admits(r#"<|line|>2 2 to_roman <|vars|>{"n":"14"}"#));
        assert!(!to.admits(r#"<|line|>2 1 to_roman <|vars|>{"n":"14"}"#));
    }
}
