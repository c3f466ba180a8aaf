//! What the program's text says about every state of its runs: the lines that hold
//! code, the scopes a frame can run and the names each can bind (tree-sitter, never a run).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use replayground_shared::StopKind;
use replayground_shared::trace_lang;
use tree_sitter::Node;

use super::body::Body;
use super::constants::constant_globals;
use super::effects::{self, Effects, Program};
use super::flow;
use super::function_reprs::FunctionNames;
use super::handlers::Handlers;
use super::names::{
    Unbound, class_qualnames, declared_names, imports_plain_modules, mangles, repr_words, unbound_names,
};
use super::program;
use super::shape::{Events, Shape};

mod depths;

use depths::frame_name;

/// The name the module's frame carries.
pub(super) const MODULE: &str = "<module>";

/// A name a comprehension's frame holds for its iterator.
const ITERATOR_ARGUMENT: &str = ".0";

/// Identifiers that let a program bind names its text never writes: a frame's names
/// cannot be bounded in a program that uses one.
const DYNAMIC_NAMES: [&str; 5] = ["globals", "locals", "vars", "exec", "eval"];

/// How a program reaches its own module object, whose attributes are its globals:
/// `setattr` on anything else (an instance, a class once its body ran, a function)
/// binds no name a frame shows.
const MODULE_OBJECT: [&str; 5] = ["__main__", "sys.modules", "importlib", "__import__", "getmodule"];

/// One scope a frame can run: where it is and what it can bind.
#[derive(Debug, Clone)]
pub(super) struct Scope {
    pub(super) name: String,
    pub(super) first: u32,
    /// The `def` or `class` line (after any decorators).
    pub(super) header: u32,
    pub(super) last: u32,
    /// The first line of a `def`'s or `class`'s body: the lines from here to `last` run
    /// in its frames, not in the frame around it (unless the body shares the header's
    /// line). `None` for the module, lambdas and comprehensions.
    pub(super) body_first: Option<u32>,
    /// Every identifier inside the scope's text (its nested scopes' too: their free
    /// variables are the scope's cells). A class body's names are not bounded: its
    /// metaclass may fill the namespace first (an `Enum` body starts with
    /// `_generate_next_value_`).
    pub(super) names: HashSet<String>,
    pub(super) bounded_names: bool,
    /// A generator's frame is left and resumed, so a step over it can land anywhere.
    pub(super) generator: bool,
    pub(super) kind: ScopeKind,
    /// The names its frame shows at a call event, where the text tells.
    pub(super) call: Option<CallNames>,
    /// A plain class body's statements: they run once each, in order, like the module's.
    pub(super) body: Option<Body>,
    /// A function's top-level statements: by an event in one (not the call), each before
    /// it has run to its end in that activation, whatever loops and branches it holds.
    pub(super) statements: Option<Body>,
    /// The depths its frames can run at, where the calls tell ([`depths::depths`]).
    pub(super) depths: Option<BTreeSet<u32>>,
    /// A function's (not a generator's): what an activation may show when it first
    /// reaches each statement's line ([`super::body::first_arrivals`]).
    pub(super) first_arrivals: Option<BTreeMap<u32, super::body::Arrival>>,
    /// A function's plain locals past its parameters, in CPython's order, where the text
    /// tells ([`super::varnames::local_order`]).
    pub(super) local_order: Option<Vec<String>>,
    /// A function's lines that can return without raising, where the text tells
    /// ([`super::flow::normal_return_lines`]).
    pub(super) normal_returns: Option<BTreeSet<u32>>,
}

/// What kind of code a scope is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ScopeKind {
    Module,
    /// A `def`'s body.
    Function,
    Class,
    Lambda,
    /// A list, set or dict comprehension: its frame runs where it is written.
    Comprehension,
    /// A generator expression: its frame may be resumed anywhere.
    GeneratorExpression,
}

/// The names a frame shows at its call event: nothing has run in it yet, so only its
/// parameters (every one) and the free variables it reads from enclosing functions (those
/// bound by then). A plain class body shows none: its namespace starts empty but for the
/// dunder names the tracer hides.
#[derive(Debug, Clone, Default)]
pub(super) struct CallNames {
    pub(super) parameters: Vec<String>,
    pub(super) free: HashSet<String>,
}

impl Scope {
    /// Whether a frame of it can run at some depth from `min` to `max` (no end: `None`).
    pub(super) fn runs_at_depth(&self, min: u32, max: Option<u32>) -> bool {
        self.depths
            .as_ref()
            .is_none_or(|d| d.range(min..=max.unwrap_or(u32::MAX)).next().is_some())
    }

    pub(super) fn holds(&self, line: u32) -> bool {
        (self.first..=self.last).contains(&line)
    }

    /// Whether a frame of this scope can start (a call event) at `line`: on its first
    /// line (its first decorator's, or its `def`), or anywhere a generator resumes.
    pub(super) fn starts_at(&self, line: u32) -> bool {
        self.name != MODULE && (line == self.first || line == self.header || (self.generator && self.holds(line)))
    }
}

/// What the program's text says about every state of its runs.
#[derive(Debug, Clone)]
#[allow(clippy::struct_excessive_bools)] // independent facts about the text, each gating its own bounds
pub struct CodeFacts {
    /// The module first, then every other scope in source order.
    pub(super) scopes: Vec<Scope>,
    /// Lines where a token starts, the only ones an event fires on ([`flow::span`]).
    pub(super) code_lines: BTreeSet<u32>,
    /// Whether a frame's names are bounded by its scope's identifiers.
    pub(super) names_known: bool,
    /// Whether a frame, once it shows a name, shows it from then on: no `del`, no
    /// `except ... as` (whose name Python unbinds) in a class body, nothing that binds
    /// names dynamically. A function's frame or the module's may still drop a name it
    /// unbinds ([`Unbound::at_depth`]).
    pub(super) names_kept: bool,
    /// Whether a name holding a number, a string, a bool or `None` keeps its repr until
    /// it is bound again: no class defines `__repr__` (its objects could look like one),
    /// names are known, and nothing reaches the module's namespace from outside.
    pub(super) scalars_kept: bool,
    /// The names the program's classes can carry (`Book`, `make.<locals>.Node`, a
    /// `namedtuple`'s), when no class gives itself a `__repr__`: an object repr that starts
    /// `<__main__.` or `<class '__main__.` names one of them. `None`: reprs are not bounded.
    pub(super) classes: Option<Vec<String>>,
    /// Where a handler's name can be shown ([`super::handlers`]).
    pub(super) handlers: Handlers,
    /// The qualified names the program's functions carry, for `<function ...>` reprs
    /// ([`super::function_reprs`]). `None`: not bounded.
    pub(super) functions: Option<FunctionNames>,
    /// The names a repr can start with, sorted, where every repr has the standard shape
    /// ([`super::repr_shape`]): no class gives itself a `__repr__` and only plain standard
    /// modules are imported. `None`: reprs are not checked.
    pub(super) repr_words: Option<Vec<String>>,
    /// Names a `del` or an `except ... as` unbinds in a function's frame or the module's:
    /// such a frame may stop showing one, and show it again.
    pub(super) unbound: Unbound,
    /// Names a `global` or `nonlocal` statement lets another frame bind.
    pub(super) declared: HashSet<String>,
    /// Module names whose value never changes once bound, with it (the JSON string's
    /// contents): see [`super::constants::constant_globals`]. Empty where names are not known.
    pub(super) constants: HashMap<String, Vec<u8>>,
    /// Names a `global` statement lets a function bind in the module.
    pub(super) globals: HashSet<String>,
    /// Those of them an earlier state of the module's frame showed with a value no
    /// later frame can see changed ([`Self::read_module`]).
    pub(super) module_values: Vec<(String, String)>,
    /// Whether the module's and plain class bodies' namespaces list their names in the
    /// order their statements first bind them: names are kept, the module unbinds none
    /// and nothing reaches its namespace from outside.
    pub(super) namespace_order: bool,
    /// What the whole program says about code that can run unseen.
    pub(super) program: Program,
    /// The module's top-level statements (the module runs each once, in this order).
    pub(super) top_level: Body,
    pub(super) tree: tree_sitter::Tree,
    pub(super) source: String,
}

impl CodeFacts {
    /// The facts of `code`, or `None` when it does not parse cleanly (then nothing is
    /// bounded: a tree with errors would bound the wrong scopes).
    pub fn new(code: &str) -> Option<Self> {
        let tree = replayground_exec::python::parse(code)?;
        let root = tree.root_node();
        if root.has_error() {
            return None;
        }
        let source = code.as_bytes();
        let code_lines = flow::span(root);
        let mut scopes = vec![Scope {
            name: MODULE.to_owned(),
            first: 1,
            header: 1,
            last: u32::try_from(code.lines().count()).unwrap_or(u32::MAX).max(1),
            body_first: None,
            names: HashSet::new(),
            bounded_names: true,
            generator: false,
            kind: ScopeKind::Module,
            call: None,
            body: None,
            statements: None,
            depths: None,
            first_arrivals: None,
            local_order: None,
            normal_returns: None,
        }];
        let mut names_known = true;
        collect_scopes(root, source, &mut scopes, &mut names_known);
        let (declared, globals) = declared_names(root, source);
        let unbound = unbound_names(root, source);
        let names_kept = names_known && unbound.as_ref().is_some_and(|u| u.in_functions.is_disjoint(&globals));
        narrow_to_bindings(root, source, &mut scopes, &declared, &globals);
        let (mut program, everything) = Program::new(root, source);
        program::add_values(&mut program, &everything, root, source);
        let found = depths::depths(root, source, &scopes, &program);
        for (scope, depths) in scopes.iter_mut().zip(found) {
            scope.depths = depths;
        }
        let top_level = Body::of(root, source);
        let classes = (!code.contains("__repr__")).then(|| class_qualnames(root, source));
        let renames = ["__qualname__", "__module__", "sys.modules", "import __main__"];
        let constants = match &unbound {
            Some(u) if names_known && !renames.iter().any(|t| code.contains(t)) => {
                constant_globals(root, source, &top_level, &declared, &u.in_module)
            }
            _ => HashMap::new(),
        };
        let namespace_order = names_kept
            && unbound.as_ref().is_some_and(|u| u.in_module.is_empty())
            && !renames.iter().any(|t| code.contains(t));
        Some(Self {
            scopes,
            code_lines,
            names_known,
            names_kept,
            unbound: unbound.unwrap_or_default(),
            namespace_order,
            scalars_kept: names_known
                && !["__repr__", "sys.modules", "import __main__"]
                    .iter()
                    .any(|t| code.contains(t)),
            repr_words: classes
                .as_deref()
                .filter(|_| imports_plain_modules(root, source))
                .map(repr_words),
            classes,
            functions: FunctionNames::of(root, source, &declared),
            handlers: Handlers::of(root, source, &declared),
            declared,
            constants,
            globals,
            module_values: Vec::new(),
            program,
            top_level,
            tree,
            source: code.to_owned(),
        })
    }

    /// What runs between a line event at `line` and its frame's next event does to the
    /// frame: the statement there, or the header of the compound statement it starts.
    pub(super) fn effects(&self, function: &str, line: u32) -> Option<Effects> {
        // A class body's frame shows what the tracer keeps of its namespace, and starts
        // on its own header line: not bounded here.
        if self.scopes_named(function, line).any(|s| !s.bounded_names) {
            return None;
        }
        // A comprehension's or lambda's frame runs part of a line whose statement binds
        // in the frame around it: not bounded here either.
        if function.starts_with('<') && function != MODULE {
            return None;
        }
        // A class body's first line event is on the class's own first line: what runs
        // there binds the dunder names the tracer hides, nothing else.
        if self
            .scopes_named(function, line)
            .any(|s| s.body_first.is_some_and(|body| line < body))
        {
            return Some(Effects {
                lines: BTreeSet::from([line]),
                inert: true,
                ..Effects::default()
            });
        }
        let root = self.tree.root_node();
        let lines = flow::ran_lines(root, line)?;
        effects::effects(root, self.source.as_bytes(), &lines, &self.program)
    }

    /// Whether the statement at `line`, run by a frame of `function`, may run the
    /// program's code (a call one frame deeper); true when the code cannot tell.
    pub(super) fn may_call(&self, function: &str, line: u32) -> bool {
        self.effects(function, line)
            .is_none_or(|e| e.may_run_program_code(&self.program))
            && !self.calls_nothing(function, line)
    }

    /// The names in `shown` that running `effects`' statements leaves as they were (never
    /// one they bind, nor one `global` or `nonlocal` lets another frame bind): every such
    /// name when they run nothing but builtins that change nothing and no code the step
    /// hides (`quiet`); otherwise those holding a number, a string, a bool or `None`, which
    /// only a binding can change.
    pub(super) fn untouched<'s>(&self, effects: &Effects, shown: &'s [(String, String)], quiet: bool) -> Vec<&'s str> {
        let old = |name: &str| shown_repr(shown, name);
        let mutated = effects
            .augmented
            .iter()
            .any(|name| old(name).is_some_and(|r| !immutable(&r)))
            || effects
                .subscripted
                .iter()
                .any(|name| old(name).is_none_or(|r| r.starts_with("defaultdict(")));
        let all = quiet && effects.inert && !mutated;
        shown
            .iter()
            .filter(|(name, repr)| {
                effects.times_bound(name) == 0
                    && !self.declared.contains(name)
                    && !effects.augmented.contains(name)
                    && (all || (self.scalars_kept && scalar(repr)))
            })
            .map(|(name, _)| name.as_str())
            .collect()
    }

    /// The last line of each top-level statement from the one holding `line` on, with the
    /// names it always binds. Top-level statements run in order, each to its end, so a
    /// module event past one shows its names. Compound statements are left out (a
    /// branch or a handler may skip a binding).
    pub(super) fn completed_bindings(&self, line: u32) -> Vec<(u32, Vec<Vec<u8>>)> {
        self.top_level
            .0
            .iter()
            .filter(|s| s.last >= line && !s.certain.is_empty())
            .map(|s| {
                let kept = s.certain.iter().filter(|n| !self.unbound.in_module.contains(*n));
                (s.last, kept.map(|n| n.clone().into_bytes()).collect())
            })
            .collect()
    }

    /// Whether the module's frame can return at `line`: in its last top-level statement
    /// (the run went through), or in one that may raise (an exception ended the run).
    pub(super) fn module_may_return_at(&self, line: u32) -> bool {
        let statements = &self.top_level.0;
        let mut holding = (0..statements.len()).filter(|&i| statements[i].holds(line)).peekable();
        holding.peek().is_none() || holding.any(|i| self.top_level.may_end_in(i))
    }

    /// The body that a frame of `function` stopped at `line` runs once, in order: the
    /// module's, or the one plain class body of that name that holds `line`.
    pub(super) fn ordered_body(&self, function: &str, line: u32) -> Option<&Body> {
        if function == MODULE {
            return Some(&self.top_level);
        }
        self.scope_at(function, line)?.body.as_ref()
    }

    /// The one scope of `function` that holds `line`, if only one does.
    pub(super) fn scope_at(&self, function: &str, line: u32) -> Option<&Scope> {
        let mut scopes = self.scopes.iter().filter(|s| s.name == function && s.holds(line));
        let scope = scopes.next()?;
        scopes.next().is_none().then_some(scope)
    }

    /// The lines of the statement (or compound header) that holds `line`; `None` when
    /// the code cannot tell.
    pub(super) fn statement_lines(&self, line: u32) -> Option<BTreeSet<u32>> {
        flow::ran_lines(self.tree.root_node(), line)
    }

    /// The names a frame can newly show at its next event after a line event at `line`:
    /// those the statement there binds, and those other frames may bind in it (`global`,
    /// `nonlocal`).
    pub(super) fn fresh_names(&self, effects: &Effects) -> HashSet<Vec<u8>> {
        let bound = effects.bindings.iter().map(|b| &b.name);
        bound.chain(&self.declared).map(|n| n.as_bytes().to_vec()).collect()
    }

    /// Whether an event of `kind` can happen at `line`: any line of code, and for a call
    /// only where a frame starts.
    pub(super) fn can_stop(&self, kind: StopKind, line: u32) -> bool {
        self.code_lines.contains(&line) && (kind != StopKind::Call || self.scopes.iter().any(|s| s.starts_at(line)))
    }

    /// Whether a frame of `scope` can stop at `line` (an event other than its call): a
    /// line it holds outside the bodies of the functions and classes defined in it, and
    /// for a function not one of its header's lines (its decorators and parameters run
    /// in the frame around it) unless the body starts on the `def` line. A class body's
    /// frame does stop at its `class` line.
    pub(super) fn runs(&self, scope: &Scope, line: u32) -> bool {
        scope.holds(line)
            && (scope.kind != ScopeKind::Function || scope.body_first.is_none_or(|body| line >= body))
            && !self.scopes.iter().any(|inner| {
                inner.first >= scope.first
                    && inner.last <= scope.last
                    && !std::ptr::eq(inner, scope)
                    && inner
                        .body_first
                        .is_some_and(|body| line > inner.header && (body..=inner.last).contains(&line))
            })
    }

    /// The lines where the run's event `n` stops, when the module's statements before it
    /// each take one line event (see [`Body::straight_event`]).
    pub(super) fn straight_event(&self, n: u32) -> Option<BTreeSet<u32>> {
        let (first, last) = self.top_level.straight_event(n)?;
        Some((first..=last).collect())
    }

    /// The lines where the module, stopped by a line event at `line`, can raise or
    /// return before its next line event: those of the statement holding `line` and of
    /// any that start on a line it ends on (`a = 1; b = 2`). Every other statement starts
    /// with a line event of its own.
    pub(super) fn module_statement_run(&self, line: u32) -> Option<BTreeSet<u32>> {
        let statements = &self.top_level.0;
        let at = self.top_level.at(line)?;
        let mut last = statements[at].last;
        for s in &statements[at + 1..] {
            if s.first > last {
                break;
            }
            last = last.max(s.last);
        }
        Some((statements[at].first..=last).collect())
    }

    /// The module's return, after a stop of it at `line` (`None`: from its start): on a
    /// line of a statement from there on that may raise, or of the last ([`Body::may_end_at`]).
    pub(super) fn module_return(&self, line: Option<u32>) -> Shape {
        let from = line.map_or(Some(0), |line| self.top_level.at(line));
        Shape {
            function: Some(MODULE.to_owned()),
            lines: from.map(|at| self.top_level.may_end_at(at)),
            ..Shape::depths(0, 0, Events::RETURN)
        }
    }

    /// The index of the top-level statement that holds `line`.
    pub(super) fn top_level_at(&self, line: u32) -> Option<usize> {
        self.top_level.at(line)
    }

    /// Whether a frame of `function` can show `name` at an `event` at `line`: where it
    /// runs a body once in order (the module, a plain class body), a name the statements
    /// run by then bind, or, in the module, one that `global` lets a function bind.
    pub(super) fn bound_by_then(&self, function: &str, event: StopKind, line: u32, name: &str) -> bool {
        (function == MODULE && self.globals.contains(name))
            || self
                .ordered_body(function, line)
                .is_none_or(|body| body.bound_by(event, line, name))
    }

    /// The scopes a frame named `function` at `line` can be.
    pub(super) fn scopes_named<'s>(&'s self, function: &'s str, line: u32) -> impl Iterator<Item = &'s Scope> + 's {
        self.scopes.iter().filter(move |s| s.name == function && s.holds(line))
    }

    /// Whether a frame of a generator (or a scope the text cannot tell) runs `function`.
    pub fn may_be_generator(&self, function: &str, line: u32) -> bool {
        let mut scopes = self.scopes_named(function, line).peekable();
        scopes.peek().is_none() || scopes.any(|s| s.generator)
    }
}

/// Adds the scopes under `node` to `scopes` (the first being the module's) and every
/// identifier to the scopes that hold it.
fn collect_scopes(node: Node<'_>, source: &[u8], scopes: &mut Vec<Scope>, names_known: &mut bool) {
    let mut stack = vec![node];
    // Every identifier is added afterwards to each scope whose span holds it.
    let mut identifiers: Vec<(usize, String)> = Vec::new();
    let mut spans: Vec<(usize, usize, usize)> = vec![(0, 0, source.len())];
    let text = String::from_utf8_lossy(source);
    let module_object = MODULE_OBJECT.iter().any(|m| text.contains(m));
    while let Some(node) = stack.pop() {
        let kind = node.kind();
        if kind == "identifier" {
            let text = node.utf8_text(source).unwrap_or_default().to_owned();
            if DYNAMIC_NAMES.contains(&text.as_str()) || (text == "setattr" && module_object) {
                *names_known = false;
            }
            identifiers.push((node.start_byte(), text));
        }
        // A `case` pattern binds names the effects do not collect.
        if kind == "wildcard_import" || kind == "match_statement" {
            *names_known = false;
        }
        // Inside a class, `__secret` is stored as `_Class__secret`: not a name the text writes.
        if kind == "class_definition" && mangles(node, source) {
            *names_known = false;
        }
        if let Some(name) = frame_name(node, source).map(str::to_owned) {
            // A decorated function's frame starts at its first decorator.
            let outer = node
                .parent()
                .filter(|p| p.kind() == "decorated_definition")
                .unwrap_or(node);
            let mut names = HashSet::new();
            if kind.ends_with("comprehension") || kind == "generator_expression" {
                names.insert(ITERATOR_ARGUMENT.to_owned());
            }
            spans.push((scopes.len(), node.start_byte(), node.end_byte()));
            // A coroutine is resumed like a generator.
            let generator = kind == "generator_expression"
                || (kind == "function_definition"
                    && (effects::yields(node) || node.child(0).is_some_and(|c| c.kind() == "async")));
            let call = match kind {
                "function_definition" if !generator => Some(CallNames {
                    parameters: effects::parameters(node, source),
                    free: HashSet::new(),
                }),
                _ => None,
            };
            scopes.push(Scope {
                name,
                first: line_of(outer.start_position().row),
                header: line_of(node.start_position().row),
                last: line_of(node.end_position().row),
                body_first: node
                    .child_by_field_name("body")
                    .filter(|_| matches!(kind, "function_definition" | "class_definition"))
                    .map(|b| line_of(b.start_position().row)),
                names,
                bounded_names: kind != "class_definition",
                generator,
                kind: match kind {
                    "function_definition" => ScopeKind::Function,
                    "class_definition" => ScopeKind::Class,
                    "lambda" => ScopeKind::Lambda,
                    "generator_expression" => ScopeKind::GeneratorExpression,
                    _ => ScopeKind::Comprehension,
                },
                call,
                body: None,
                statements: None,
                depths: None,
                first_arrivals: None,
                local_order: None,
                normal_returns: None,
            });
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    for (at, name) in identifiers {
        for &(scope, start, end) in &spans {
            if (start..end).contains(&at) {
                scopes[scope].names.insert(name.clone());
            }
        }
    }
}

/// Narrows the names of the module's, each function's and each plain class's frame from
/// every identifier in its text to those it can hold: the module's globals are what its
/// own statements bind and what `global` lets a function bind; a function's locals are
/// its parameters, what its body binds, and the free variables it reads from enclosing
/// functions; a plain class body's namespace is what its body binds.
fn narrow_to_bindings(
    root: Node<'_>,
    source: &[u8],
    scopes: &mut [Scope],
    declared: &HashSet<String>,
    globals: &HashSet<String>,
) {
    let mut module = effects::bound_names(root, source);
    module.extend(globals.iter().cloned());
    scopes[0].names.retain(|n| module.contains(n));
    let scope_of = |node: Node<'_>, scopes: &[Scope]| {
        let name = node
            .child_by_field_name("name")
            .and_then(|n| n.utf8_text(source).ok())
            .unwrap_or_default();
        scopes
            .iter()
            .position(|s| s.name == name && s.header == line_of(node.start_position().row))
    };
    // Each function's own names, with its span, outermost first.
    let mut functions: Vec<(usize, usize, usize, HashSet<String>)> = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let body = node.child_by_field_name("body");
        match node.kind() {
            "function_definition" => {
                if let Some(at) = scope_of(node, scopes) {
                    let mut own = effects::parameter_names(node, source);
                    if let Some(body) = body {
                        own.extend(effects::bound_names(body, source));
                        scopes[at].statements = Some(Body::of(body, source));
                        let resumed = scopes[at].generator;
                        scopes[at].first_arrivals =
                            (!resumed).then(|| super::body::first_arrivals(node, body, source, declared));
                        scopes[at].local_order = super::varnames::local_order(node, source);
                        scopes[at].normal_returns = super::flow::normal_return_lines(node, source);
                    }
                    functions.push((at, node.start_byte(), node.end_byte(), own));
                }
            }
            // Python 3.11 and later never copy free variables into a class body's
            // namespace (an unoptimised frame), and no metaclass fills a plain class's.
            "class_definition" if effects::plain_class(node, source) => {
                if let (Some(at), Some(body)) = (scope_of(node, scopes), body) {
                    let own = effects::bound_names(body, source);
                    let scope = &mut scopes[at];
                    scope.names.retain(|n| own.contains(n));
                    scope.bounded_names = true;
                    scope.call = Some(CallNames::default());
                    scope.body = Some(Body::of(body, source));
                }
            }
            _ => {}
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    for (at, start, end, own) in &functions {
        let enclosing: HashSet<&String> = functions
            .iter()
            .filter(|(other, s, e, _)| other != at && s <= start && end <= e)
            .flat_map(|(_, _, _, names)| names)
            .collect();
        let scope = &mut scopes[*at];
        scope.names.retain(|n| own.contains(n) || enclosing.contains(n));
        // Free: read from enclosing functions, or bound here under `nonlocal`.
        let free = scope
            .names
            .iter()
            .filter(|n| !own.contains(*n) || declared.contains(*n))
            .cloned()
            .collect();
        if let Some(call) = scope.call.as_mut() {
            call.free = free;
        }
    }
}

pub(super) fn line_of(row: usize) -> u32 {
    u32::try_from(row + 1).unwrap_or(u32::MAX)
}

/// A value as the trace language writes it inside a JSON string.
pub(super) fn json_contents(value: &str) -> Vec<u8> {
    let quoted = serde_json::to_string(value).expect("a string always serialises");
    quoted[1..quoted.len() - 1].replace("<|", "\\u003c|").into_bytes()
}

/// Whether the tracer hides a variable: it never shows a name that starts with `__`.
pub(super) fn hidden(name: &str) -> bool {
    name.starts_with("__")
}

/// The repr (normalised) a frame's variables `shown` give `name`, if they have it.
pub(super) fn shown_repr(shown: &[(String, String)], name: &str) -> Option<String> {
    shown
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, r)| trace_lang::normalize_repr(r))
}

/// Whether a repr is of a number, a string, a bool or `None`: a value nothing changes in
/// place (in a program that gives no class a `__repr__` that could look like one).
fn scalar(repr: &str) -> bool {
    let first = repr.chars().next().unwrap_or(' ');
    first.is_ascii_digit()
        || first == '\''
        || first == '"'
        || (first == '-' && repr[1..].starts_with(|c: char| c.is_ascii_digit()))
        || matches!(repr, "True" | "False" | "None")
}

/// Whether a repr is of a value no other name can share and see changed: a number, a
/// string, `True`/`False`/`None` or a tuple.
fn immutable(repr: &str) -> bool {
    scalar(repr) || repr.starts_with('(')
}
