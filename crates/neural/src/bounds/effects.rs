//! What the statements on some lines do to their frame's variables, read from their
//! text: the names they bind, the repr the text fixes for some of them (a literal, a
//! `def`, a plain `class`), and whether anything else can change.

use std::collections::{BTreeSet, HashMap, HashSet};

use tree_sitter::Node;

use super::builtins::{PLAIN_BASES, PURE_BUILTINS, QUIET_DUNDERS};
use super::line_of;
use super::literal;

/// A name a statement binds in its frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding {
    pub(crate) name: String,
    /// The repr its text fixes (a literal, a `def`, a plain `class`), if any.
    pub(crate) repr: Option<String>,
    /// Whether the statement is written over several lines, so that a line event can
    /// come before the name is bound.
    pub(crate) multiline: bool,
    /// Whether the name is bound whenever the statement completes (an assignment or
    /// `import` statement, a `def`, a `class`), not only on some paths (a loop's target,
    /// a walrus).
    pub(crate) certain: bool,
    /// A comprehension's target: bound in the comprehension's own frame, never in the
    /// frame around it.
    pub(crate) comprehension: bool,
}

/// What running the statements on some lines does to their frame.
#[derive(Debug, Clone, Default)]
pub(crate) struct Effects {
    /// The lines the statements span.
    pub(crate) lines: BTreeSet<u32>,
    pub(crate) bindings: Vec<Binding>,
    /// Names an augmented assignment rebinds: a mutable value changes in place.
    pub(crate) augmented: Vec<String>,
    /// Names read with a subscript: a `defaultdict` inserts what is read.
    pub(crate) subscripted: Vec<String>,
    /// Nothing besides the bindings can change unless code the debugger would stop in
    /// runs: no call but to builtins that change nothing, no store into an object, no
    /// `del`, `yield`, `await`, `with` or class body.
    pub(crate) inert: bool,
    /// An operator, attribute, subscript, truth test or iteration is used, which can run
    /// the program's own methods (seen by a step into, hidden by a step over).
    pub(crate) operates: bool,
    /// A frame of the program's own runs: a comprehension's, or a function or lambda a
    /// builtin is handed.
    pub(crate) calls_back: bool,
}

impl Effects {
    /// How many of the bindings bind `name`.
    pub(crate) fn times_bound(&self, name: &str) -> usize {
        self.bindings.iter().filter(|b| b.name == name).count()
    }

    /// Whether running the statements can run any of the program's code (a frame the
    /// tracer sees), given what the whole `program` defines.
    pub(crate) fn may_run_program_code(&self, program: &Program) -> bool {
        !self.inert || self.calls_back || (self.operates && program.special_methods)
    }
}

/// What the whole program's text says about code that statements can run unseen.
#[derive(Debug, Clone, Default)]
#[allow(clippy::struct_excessive_bools)] // independent facts about the text, each gating its own bounds
pub(crate) struct Program {
    /// Every name the program binds somewhere (a builtin it shadows is not the builtin).
    pub(crate) bound: HashSet<String>,
    /// Every identifier a parameter list holds (a parameter, or a name its defaults read).
    pub(crate) parameters: HashSet<String>,
    /// Whether operators, attributes, truth tests or iteration can run the program's
    /// code that may change something: it defines special methods (beyond `__init__`,
    /// `__repr__`, `__str__`), properties or generators.
    pub(crate) hidden_code: bool,
    /// Whether they can run any of the program's code: any special method at all.
    pub(crate) special_methods: bool,
    /// Whether a builtin handed plain values, an operator or an attribute can start a
    /// frame of the program's: it defines special methods besides `__init__` (which only
    /// a call of its class runs), properties, generators or generator expressions.
    pub(crate) implicit_calls: bool,
    /// Whether an operator or a truth test can run the program's code: it defines
    /// special methods besides `__init__`, `__repr__` and `__str__`.
    pub(crate) operator_methods: bool,
    /// Names that can only mean one function of the program whose call the tracer always
    /// sees: bound once in the whole text, by a top-level `def` that is not decorated,
    /// `async` or a generator, and never a parameter.
    pub(crate) plain_functions: HashSet<String>,
    /// Names that can only mean one generator function of the program, by the same rules
    /// as [`Self::plain_functions`]: calling one runs none of its code (the frame starts
    /// at the generator's first `next`).
    pub(crate) generator_functions: HashSet<String>,
    /// Names that can only mean one class of the program whose call surely runs an
    /// `__init__` of the program first ([`class_inits`]): the line of that `def`.
    pub(crate) class_inits: HashMap<String, u32>,
    /// Whether the text names `defaultdict`, whose factory a subscript may call.
    pub(crate) defaultdicts: bool,
    /// Whether a function, method or class of the program can be held as a value (and
    /// so be called by a library it is handed): it is named other than to call it,
    /// subclass it, catch it or test an instance against it, or the program holds a
    /// lambda or a decorator.
    pub(crate) functions_escape: bool,
    /// Every name the program could have defined as an attribute: each `def`'s name,
    /// every attribute it stores, every name a string of it spells (`getattr`).
    pub(crate) attributes: HashSet<String>,
    /// Names bound only by one `import`: a library's function or class.
    pub(crate) imported: HashSet<String>,
    /// Whether it defines a method a library may call on an object it is handed by the
    /// method's name (`write`, `read`, `keys`, `close` …).
    pub(crate) protocol_methods: bool,
    /// Whether `print` without keywords runs none of the program's code: it is not
    /// rebound, no special method or property of the program can be called implicitly
    /// (`str()` of a value is a builtin's), and the text never reaches `sys.stdout`.
    pub(crate) quiet_print: bool,
}

impl Program {
    /// Whether `name` is a builtin that changes nothing, and the program never rebinds it.
    pub(crate) fn pure_builtin(&self, name: &str) -> bool {
        PURE_BUILTINS.contains(&name) && !self.bound.contains(name)
    }

    /// Whether `name`, called as a function or a method, cannot be the program's own: it
    /// never binds it, and no parameter is named so.
    pub(crate) fn builtin(&self, name: &str) -> bool {
        !self.bound.contains(name) && !self.parameters.contains(name)
    }

    pub(crate) fn new(root: Node<'_>, source: &[u8]) -> (Self, Effects) {
        let mut program = Self::default();
        let mut everything = Effects::default();
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            match node.kind() {
                "function_definition" => {
                    let name = text(node.child_by_field_name("name"), source);
                    let dunder = name.starts_with("__") && name.ends_with("__");
                    let generator = yields(node);
                    program.hidden_code |= (dunder && !QUIET_DUNDERS.contains(&name)) || generator;
                    program.special_methods |= dunder || generator;
                    program.implicit_calls |= (dunder && name != "__init__") || generator;
                    program.operator_methods |= dunder && !QUIET_DUNDERS.contains(&name);
                }
                "generator_expression" => program.implicit_calls = true,
                "decorator" => {
                    let decorator = text(Some(node), source);
                    if decorator.contains("property") || decorator.contains(".setter") {
                        program.hidden_code = true;
                        program.special_methods = true;
                        program.implicit_calls = true;
                    }
                }
                "parameters" | "lambda_parameters" => {
                    program.parameters.extend(identifiers(node, source));
                }
                _ => {}
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
        program.bound.extend(program.parameters.iter().cloned());
        collect(root, source, None, &program, &mut everything, true);
        let mut cursor = root.walk();
        let sole_defs = root.named_children(&mut cursor).filter(|node| {
            let name = text(node.child_by_field_name("name"), source);
            node.kind() == "function_definition"
                && !text(Some(*node), source).starts_with("async")
                && everything.times_bound(name) == 1
                && !program.bound.contains(name)
        });
        for def in sole_defs {
            let name = text(def.child_by_field_name("name"), source).to_owned();
            if yields(def) {
                program.generator_functions.insert(name);
            } else {
                program.plain_functions.insert(name);
            }
        }

        program.bound.extend(everything.bindings.iter().map(|b| b.name.clone()));
        program.quiet_print = !program.implicit_calls
            && !program.bound.contains("print")
            && !String::from_utf8_lossy(source).contains("stdout");
        (program, everything)
    }
}

/// The names the statements under `node` bind in its frame (not in nested functions'
/// or classes' frames, nor a comprehension's targets, which bind in its own).
pub(crate) fn bound_names(node: Node<'_>, source: &[u8]) -> HashSet<String> {
    let mut effects = Effects::default();
    collect(node, source, None, &Program::default(), &mut effects, false);
    effects
        .bindings
        .into_iter()
        .filter(|b| !b.comprehension)
        .map(|b| b.name)
        .collect()
}

/// The names a statement binds whenever it completes, in order.
pub(crate) fn certain_names(statement: Node<'_>, source: &[u8]) -> Vec<String> {
    let mut effects = Effects::default();
    collect(statement, source, None, &Program::default(), &mut effects, false);
    let mut names: Vec<String> = Vec::new();
    for binding in effects.bindings.into_iter().filter(|b| b.certain) {
        if !names.contains(&binding.name) {
            names.push(binding.name);
        }
    }
    names
}

/// The identifiers a function's parameters list holds (its parameters' names, and any
/// name a default or annotation reads).
pub(crate) fn parameter_names(function: Node<'_>, source: &[u8]) -> HashSet<String> {
    function
        .child_by_field_name("parameters")
        .map(|p| identifiers(p, source).into_iter().collect())
        .unwrap_or_default()
}

/// A function's parameters, in order: the names a call binds (`*args` and `**kwargs`
/// included, never a default's or an annotation's identifiers).
pub(crate) fn parameters(function: Node<'_>, source: &[u8]) -> Vec<String> {
    // `x`, `x=1`, `x: int`, `*args`, `**kwargs: Any`: the name is the first identifier
    // outside a default or an annotation.
    fn name_of(parameter: Node<'_>) -> Option<Node<'_>> {
        match parameter.kind() {
            "identifier" => Some(parameter),
            "default_parameter" | "typed_default_parameter" => parameter.child_by_field_name("name"),
            "typed_parameter" | "list_splat_pattern" | "dictionary_splat_pattern" => {
                let mut cursor = parameter.walk();
                let first = parameter.named_children(&mut cursor).next();
                first.and_then(name_of)
            }
            _ => None,
        }
    }
    let Some(list) = function.child_by_field_name("parameters") else {
        return Vec::new();
    };
    let mut cursor = list.walk();
    let all: Vec<Node<'_>> = list.named_children(&mut cursor).collect();
    all.into_iter()
        .filter_map(name_of)
        .map(|name| text(Some(name), source).to_owned())
        .collect()
}

/// The effects of the statements on `lines` (a line event's statement, or a compound
/// statement's header), or `None` when the text cannot tell (a `match`).
pub(crate) fn effects(root: Node<'_>, source: &[u8], lines: &BTreeSet<u32>, program: &Program) -> Option<Effects> {
    let mut effects = Effects {
        lines: lines.clone(),
        inert: true,
        ..Effects::default()
    };
    collect(root, source, Some(lines), program, &mut effects, false).then_some(effects)
}

pub(super) fn text<'s>(node: Option<Node<'_>>, source: &'s [u8]) -> &'s str {
    node.and_then(|n| n.utf8_text(source).ok()).unwrap_or_default()
}

fn span_meets(node: Node<'_>, lines: &BTreeSet<u32>) -> bool {
    let (first, last) = (line_of(node.start_position().row), line_of(node.end_position().row));
    lines.range(first..=last).next().is_some()
}

/// The block a compound statement runs after its header.
fn body(node: Node<'_>) -> Option<Node<'_>> {
    let owner = match node.kind() {
        "decorated_definition" => node.child_by_field_name("definition")?,
        _ => node,
    };
    owner
        .child_by_field_name("body")
        .or_else(|| owner.child_by_field_name("consequence"))
}

/// Whether a compound statement's header (its first line up to its body's) meets
/// `lines`; always, when no lines are given.
fn header_meets(node: Node<'_>, lines: Option<&BTreeSet<u32>>) -> bool {
    let Some(lines) = lines else { return true };
    let first = line_of(node.start_position().row);
    let last = body(node).map_or(first, |b| line_of(b.start_position().row).saturating_sub(1).max(first));
    lines.range(first..=last).next().is_some()
}

/// The identifiers under `node`.
pub(super) fn identifiers(node: Node<'_>, source: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        if node.kind() == "identifier" {
            names.push(text(Some(node), source).to_owned());
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    names
}

/// Walks `node` (only what meets `lines`, when given), adding to `effects`; false when
/// the text cannot tell. `everywhere`: into function and class bodies too (the program's
/// every binding).
pub(super) fn collect(
    node: Node<'_>,
    source: &[u8],
    lines: Option<&BTreeSet<u32>>,
    program: &Program,
    effects: &mut Effects,
    everywhere: bool,
) -> bool {
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        if lines.is_some_and(|lines| !span_meets(node, lines)) {
            continue;
        }
        let multiline = node.start_position().row != node.end_position().row;
        let bind = |effects: &mut Effects, name: Node<'_>, repr: Option<String>, multiline: bool| {
            effects.bindings.push(Binding {
                name: text(Some(name), source).to_owned(),
                repr,
                multiline,
                certain: false,
                comprehension: false,
            });
        };
        let field = |name: &str| node.child_by_field_name(name);
        // The children still to walk; a kind that handles its own returns early.
        let mut children: Vec<Node<'_>> = {
            let mut cursor = node.walk();
            node.named_children(&mut cursor).collect()
        };
        let compound = matches!(
            node.kind(),
            "function_definition"
                | "class_definition"
                | "decorated_definition"
                | "for_statement"
                | "while_statement"
                | "if_statement"
                | "with_statement"
        );
        if compound && !header_meets(node, lines) {
            // Only statements of its bodies ran (the header's parts do not meet the lines).
            stack.extend(children);
            continue;
        }
        let not_body = |c: &Node<'_>| everywhere || Some(c.id()) != body(node).map(|b| b.id());
        let bound_before = effects.bindings.len();
        match node.kind() {
            "match_statement" => return false,
            "function_definition" => {
                if let Some(name) = field("name") {
                    let decorated = node.parent().is_some_and(|p| p.kind() == "decorated_definition");
                    let repr = (!decorated).then(|| format!("<function {}>", literal::qualified_name(node, source)));
                    bind(effects, name, repr, header_multiline(node));
                }
                // Defaults and annotations run now; the body does not.
                children.retain(|c| not_body(c) && c.kind() != "identifier");
            }
            "class_definition" => {
                if let Some(name) = field("name") {
                    let decorated = node.parent().is_some_and(|p| p.kind() == "decorated_definition");
                    let repr = (!decorated && plain_class(node, source))
                        .then(|| format!("<class '__main__.{}'>", literal::qualified_name(node, source)));
                    bind(effects, name, repr, header_multiline(node));
                }
                // Its body runs in its own frame, and may do anything to this one.
                effects.inert = false;
                children.retain(|c| not_body(c) && c.kind() != "identifier");
            }
            "decorated_definition" | "with_statement" | "delete_statement" | "yield" | "await" => {
                effects.inert = false;
            }
            "lambda" => {
                children.retain(|c| everywhere || Some(c.id()) != field("body").map(|b| b.id()));
            }
            "assignment" => {
                let (Some(left), Some(right)) = (field("left"), field("right")) else {
                    // An annotation alone binds nothing.
                    continue;
                };
                let mut value = right;
                while value.kind() == "assignment" {
                    let Some(next) = value.child_by_field_name("right") else {
                        break;
                    };
                    value = next;
                }
                if left.kind() == "identifier" {
                    let repr = literal::repr(value, source);
                    bind(effects, left, repr, multiline);
                } else if let Some(pairs) = unpacked(left, value) {
                    for (target, item) in pairs {
                        bind(effects, target, literal::repr(item, source), multiline);
                    }
                } else {
                    targets(left, source, effects, multiline);
                }
                children = vec![right];
            }
            "augmented_assignment" => {
                if let Some(left) = field("left") {
                    if left.kind() == "identifier" {
                        effects.augmented.push(text(Some(left), source).to_owned());
                    }
                    targets(left, source, effects, multiline);
                }
                effects.operates = true;
                children = field("right").into_iter().collect();
            }
            "for_statement" | "for_in_clause" => {
                // A comprehension's targets bind in its own frame, which runs this line too.
                if let Some(left) = field("left") {
                    let start = effects.bindings.len();
                    targets(left, source, effects, multiline);
                    for binding in &mut effects.bindings[start..] {
                        binding.comprehension = node.kind() == "for_in_clause";
                    }
                }
                effects.operates = true;
                children.retain(|c| Some(c.id()) != field("left").map(|l| l.id()));
            }
            "named_expression" => {
                if let Some(name) = field("name") {
                    bind(effects, name, None, multiline);
                }
                children = field("value").into_iter().collect();
            }
            "import_statement" | "import_from_statement" | "future_import_statement" => {
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    let bound = match name.kind() {
                        "aliased_import" => name.child_by_field_name("alias"),
                        "dotted_name" if node.kind() == "import_statement" => name.named_child(0),
                        "dotted_name" => {
                            name.named_child(u32::try_from(name.named_child_count().saturating_sub(1)).unwrap_or(0))
                        }
                        _ => None,
                    };
                    if let Some(bound) = bound {
                        bind(effects, bound, None, multiline);
                    }
                }
                children.clear();
            }
            "except_clause" => {
                if let Some(alias) = field("alias") {
                    bind(effects, alias, None, multiline);
                }
            }
            "as_pattern" => {
                if let Some(alias) = field("alias") {
                    targets(alias, source, effects, multiline);
                }
            }
            "call" => {
                let function = field("function");
                let name = text(function.filter(|f| f.kind() == "identifier"), source);
                if !program.pure_builtin(name) {
                    effects.inert = false;
                }
                // A builtin reads its arguments through their special methods (`len`,
                // iteration, `str`), and calls what it is handed as `key=` or a lambda.
                effects.operates = true;
                let arguments = field("arguments").map(|a| {
                    let mut cursor = a.walk();
                    a.named_children(&mut cursor).map(|c| c.kind()).collect::<Vec<_>>()
                });
                if arguments.is_some_and(|kinds| kinds.iter().any(|k| matches!(*k, "keyword_argument" | "lambda"))) {
                    effects.calls_back = true;
                }
            }
            "subscript" => {
                effects.operates = true;
                match field("value").filter(|v| v.kind() == "identifier") {
                    Some(value) => effects.subscripted.push(text(Some(value), source).to_owned()),
                    // The object an expression gives may be a `defaultdict`.
                    None => effects.inert = false,
                }
            }
            // A comprehension runs in a frame of its own.
            "list_comprehension" | "set_comprehension" | "dictionary_comprehension" | "generator_expression" => {
                effects.calls_back = true;
            }
            "attribute"
            | "binary_operator"
            | "comparison_operator"
            | "unary_operator"
            | "boolean_operator"
            | "not_operator"
            | "conditional_expression"
            | "interpolation"
            | "list_splat"
            | "dictionary_splat"
            | "if_statement"
            | "while_statement"
            | "elif_clause"
            | "assert_statement" => {
                effects.operates = true;
            }
            _ => {}
        }
        let statement_level = node
            .parent()
            .is_some_and(|p| matches!(p.kind(), "expression_statement" | "assignment"));
        let certain = match node.kind() {
            "assignment" | "augmented_assignment" => statement_level,
            "function_definition"
            | "class_definition"
            | "import_statement"
            | "import_from_statement"
            | "future_import_statement" => true,
            _ => false,
        };
        for binding in &mut effects.bindings[bound_before..] {
            binding.certain |= certain;
        }
        stack.extend(children);
    }
    true
}

/// Whether a definition's header (up to its body) is written over several lines.
fn header_multiline(node: Node<'_>) -> bool {
    body(node).is_some_and(|b| b.start_position().row > node.start_position().row + 1)
}

/// Adds the names an assignment's targets bind; a store into an object (`a.b = …`,
/// `a[i] = …`) makes the statement not inert.
fn targets(node: Node<'_>, source: &[u8], effects: &mut Effects, multiline: bool) {
    match node.kind() {
        "identifier" => effects.bindings.push(Binding {
            name: text(Some(node), source).to_owned(),
            repr: None,
            multiline,
            certain: false,
            comprehension: false,
        }),
        "attribute" | "subscript" => {
            effects.inert = false;
            effects.operates = true;
        }
        _ => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                targets(child, source, effects, multiline);
            }
        }
    }
}

/// `a, b = 1, 2`: each target name with its item, when both sides have the same length
/// and every target is a plain name.
fn unpacked<'t>(left: Node<'t>, value: Node<'t>) -> Option<Vec<(Node<'t>, Node<'t>)>> {
    if !matches!(left.kind(), "pattern_list" | "tuple_pattern") || !matches!(value.kind(), "expression_list" | "tuple")
    {
        return None;
    }
    let named = |n: Node<'t>| {
        let mut cursor = n.walk();
        n.named_children(&mut cursor)
            .filter(|c| c.kind() != "comment")
            .collect::<Vec<_>>()
    };
    let (names, items) = (named(left), named(value));
    (names.len() == items.len() && names.iter().all(|n| n.kind() == "identifier"))
        .then(|| names.into_iter().zip(items).collect())
}

/// Whether a class's repr is `<class '__main__.Name'>` and its body starts from an empty
/// namespace: no metaclass or keyword, and bases that are plain builtins or plain
/// (undecorated) classes of the program.
pub(crate) fn plain_class(class: Node<'_>, source: &[u8]) -> bool {
    plain_class_within(class, source, 0)
}

fn plain_class_within(class: Node<'_>, source: &[u8], depth: usize) -> bool {
    if depth > 8 {
        return false;
    }
    let Some(bases) = class.child_by_field_name("superclasses") else {
        return true;
    };
    let mut cursor = bases.walk();
    let all: Vec<Node<'_>> = bases.named_children(&mut cursor).collect();
    all.iter().all(|base| {
        if base.kind() != "identifier" {
            return false;
        }
        let name = text(Some(*base), source);
        if PLAIN_BASES.contains(&name) {
            return true;
        }
        let root = {
            let mut root = class;
            while let Some(parent) = root.parent() {
                root = parent;
            }
            root
        };
        let definitions = class_definitions(root, source, name);
        !definitions.is_empty()
            && definitions.iter().all(|d| {
                d.parent().is_none_or(|p| p.kind() != "decorated_definition")
                    && plain_class_within(*d, source, depth + 1)
            })
    })
}

fn class_definitions<'t>(root: Node<'t>, source: &[u8], name: &str) -> Vec<Node<'t>> {
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == "class_definition" && text(node.child_by_field_name("name"), source) == name {
            found.push(node);
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    found
}

/// Whether a function's own body (not a nested function's) yields.
pub(crate) fn yields(function: Node<'_>) -> bool {
    let mut stack = vec![function];
    while let Some(node) = stack.pop() {
        if node.kind() == "yield" {
            return true;
        }
        let nested =
            node.id() != function.id() && matches!(node.kind(), "function_definition" | "lambda" | "class_definition");
        if !nested {
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }
    false
}
