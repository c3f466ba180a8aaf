//! What a call's arguments give the callee's parameters: a step into a statement that
//! surely calls the program's code first reaches that callee's call event, which shows
//! each parameter bound to its argument (a name's repr as the caller's state shows it, or
//! a value [`super::evaluate`] computes) or to its default (only an immutable literal: a
//! mutable default may have changed since the `def` ran). The callee is a plain function
//! ([`CodeFacts::first_frame`]), the `__init__` a call of a plain class runs (its `self`
//! a fresh `<__main__.C object>`), or a method called on a name whose repr says which
//! class of the program it is an instance of ([`CodeFacts::method_call`]).

use replayground_shared::trace_lang::{normalize_repr, shown_vars};
use replayground_shared::{State, StopKind};
use tree_sitter::Node;

use super::calls::{alone_on, arguments_run_nothing};
use super::code::CodeFacts;
use super::evaluate::{self, Env};
use super::flow::{field, named, statements_at};
use super::values::{Kind, Value};

/// The frame a step into a statement reaches first, and what its call event shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entered {
    /// The scope's name (a method's bare name, as the trace language writes it).
    pub(super) function: String,
    /// The `def` line: the call event's.
    pub(super) first: u32,
    /// Every parameter's name, in order: the names the call event shows (empty where
    /// the text does not tell them all).
    pub(super) names: Vec<String>,
    /// The reprs of the parameters the caller's state tells.
    pub(super) bound: Vec<(String, String)>,
}

/// A call event's names (every parameter, in order) and the reprs the caller tells.
type Parameters = (Vec<String>, Vec<(String, String)>);

impl CodeFacts {
    /// The call a step into the line event `from` reaches first, where the caller's
    /// state tells every parameter: a plain function, or the `__init__` of a plain class.
    pub(super) fn call_bindings(&self, from: &State) -> Option<Entered> {
        let (function, line) = (from.function.as_deref()?, from.line?);
        if from.event != StopKind::Line || !self.scalars_kept || !self.surely_calls(function, line) {
            return None;
        }
        let (callee, first) = self.first_frame(function, line)?;
        let root = self.tree.root_node();
        let statement = alone_on(root, line)?;
        if callee.starts_with('<') {
            return self.comprehension_call(from, statement, callee, first);
        }
        let definition = *statements_at(root, first).last()?;
        if definition.kind() != "function_definition" {
            return None;
        }
        if callee == "__init__" {
            let classes: Vec<&str> = self
                .program
                .class_inits
                .iter()
                .filter(|&(_, &at)| at == first)
                .map(|(class, _)| class.as_str())
                .collect();
            let call = self.the_call(statement, &|name| classes.contains(&name))?;
            let class = field(call, "function")?.utf8_text(self.source.as_bytes()).ok()?;
            if !self.object_rooted(class) {
                return None;
            }
            let receiver = format!("<__main__.{class} object>");
            let (names, bound) = self.bind(from, definition, call, Some(receiver))?;
            return Some(Entered {
                function: callee,
                first,
                names,
                bound,
            });
        }
        if !self.program.plain_functions.contains(&callee) {
            return None;
        }
        let call = self.the_call(statement, &|name| name == callee)?;
        let (names, bound) = self.bind(from, definition, call, None)?;
        Some(Entered {
            function: callee,
            first,
            names,
            bound,
        })
    }

    /// A comprehension's call event, which shows the iterator over its first iterable as
    /// `.0`: its type, where the state tells what the iterable is (a list, tuple, dict or
    /// set; `range(…)` of whole numbers; a dict's `items()`, `keys()` or `values()`;
    /// `zip(…)`, `enumerate(…)`, `reversed(LIST)`). A string's iterator is left to the
    /// model: its type's name changed between Python versions. Only `.0` is fixed: the
    /// frame shows the enclosing function's variables it reads too.
    fn comprehension_call(&self, from: &State, statement: Node<'_>, callee: String, first: u32) -> Option<Entered> {
        let kind = match callee.as_str() {
            "<listcomp>" => "list_comprehension",
            "<setcomp>" => "set_comprehension",
            "<dictcomp>" => "dictionary_comprehension",
            _ => return None,
        };
        let mut found = Vec::new();
        let mut stack = vec![statement];
        while let Some(node) = stack.pop() {
            if node.kind() == kind && super::line_of(node.start_position().row) == first {
                found.push(node);
            }
            stack.extend(named(node));
        }
        let [comprehension] = found[..] else {
            return None;
        };
        let clause = named(comprehension).into_iter().find(|c| c.kind() == "for_in_clause")?;
        let iterable = field(clause, "right").filter(|i| self.evaluates(*i))?;
        let iterator = iterator_repr(iterable, self.source.as_bytes(), &self.env(from))?;
        Some(Entered {
            function: callee,
            first,
            names: Vec::new(),
            bound: vec![(".0".to_owned(), iterator)],
        })
    }

    /// The method a step into the line event `from` surely calls first: the statement
    /// alone on its line is `R.m(…)`, `NAME = R.m(…)`, `NAME op= R.m(…)` or
    /// `return R.m(…)`, whose arguments run none of the program's code, and `R` a name
    /// of the frame whose repr is `<__main__.C object>`: an instance of the program's
    /// plain class `C`, whose `m` (its own or a base's) is a plain `def` that no
    /// instance attribute can hide. The call event shows `self` as `R`'s repr.
    pub(super) fn method_call(&self, from: &State) -> Option<Entered> {
        let (function, line) = (from.function.as_deref()?, from.line?);
        if from.event != StopKind::Line
            || !self.scalars_kept
            || self.source.contains("__getattribute__")
            || !self.names_known
            || !super::runs_the_statement(function)
        {
            return None;
        }
        let source = self.source.as_bytes();
        let statement = alone_on(self.tree.root_node(), line)?;
        let call = whole_value(statement, source)
            .map(|(_, v)| v)
            .filter(|v| v.kind() == "call")?;
        let callee = field(call, "function").filter(|f| f.kind() == "attribute")?;
        let receiver = field(callee, "object").filter(|o| o.kind() == "identifier")?;
        let method = field(callee, "attribute")?.utf8_text(source).ok()?;
        let receiver = receiver.utf8_text(source).ok()?;
        let repr = shown_vars(from).iter().find(|(name, _)| name == receiver)?.1.as_str();
        let class = repr.strip_prefix("<__main__.")?.strip_suffix(" object>")?;
        let definition = self.method_of(class, method)?;
        if method.starts_with("__") || self.stores_attribute(method) || !self.object_rooted(class) {
            return None;
        }
        if !arguments_run_nothing(call, source, &self.program) {
            return None;
        }
        let (names, bound) = self.bind(from, definition, call, Some(repr.to_owned()))?;
        Some(Entered {
            function: method.to_owned(),
            first: super::line_of(definition.start_position().row),
            names,
            bound,
        })
    }

    /// The parameters of `definition` (every name, in order) and those bound by `call`
    /// in the state `from`; the first one to `receiver` where the call is a method's or
    /// a class's. `None` where a method's frame could show a cell too (`super()` makes
    /// `__class__` one).
    fn bind(&self, from: &State, definition: Node<'_>, call: Node<'_>, receiver: Option<String>) -> Option<Parameters> {
        if receiver.is_some() && definition.utf8_text(self.source.as_bytes()).ok()?.contains("super") {
            return None;
        }
        let source = self.source.as_bytes();
        let env = self.env(from);
        // A name's repr as shown (the very object), else the value computed.
        // Each argument's repr where the state tells it (a parameter whose argument's
        // value is not known is shown all the same).
        let repr_of = |node: Node<'_>| {
            if let Some(generator) = self.generator_made(node) {
                return Some(generator);
            }
            let repr = evaluate::repr_of(node, source, &env).filter(|_| self.evaluates(node))?;
            Some(normalize_repr(&repr))
        };
        let mut positional = Vec::new();
        let mut keywords = Vec::new();
        for argument in named(field(call, "arguments")?) {
            match argument.kind() {
                "keyword_argument" => {
                    let name = field(argument, "name")?.utf8_text(source).ok()?;
                    keywords.push((name, repr_of(field(argument, "value")?)));
                }
                "list_splat" | "dictionary_splat" | "parenthesized_list_splat" => return None,
                _ if keywords.is_empty() => positional.push(repr_of(argument)),
                _ => return None,
            }
        }
        let no_names = Env {
            vars: &[],
            outer: &[],
            program: &self.program,
        };
        let mut parameters = named(field(definition, "parameters")?);
        let (mut names, mut bound) = (Vec::new(), Vec::new());
        if let Some(receiver) = receiver {
            let first = parameters.first().filter(|p| p.kind() == "identifier")?;
            let name = first.utf8_text(source).ok()?.to_owned();
            names.push(name.clone());
            bound.push((name, receiver));
            parameters.remove(0);
        }
        if positional.len() > parameters.len() {
            return None;
        }
        for (i, parameter) in parameters.into_iter().enumerate() {
            let (name, default) = match parameter.kind() {
                "identifier" => (parameter.utf8_text(source).ok()?, None),
                "default_parameter" => (
                    field(parameter, "name")?.utf8_text(source).ok()?,
                    field(parameter, "value"),
                ),
                // Annotations, `*args`, `**kwargs`, `*` and `/`: left to the model.
                _ => return None,
            };
            names.push(name.to_owned());
            let given = positional.get(i).cloned();
            let named_too = keywords.iter().position(|(k, _)| *k == name);
            let repr = match (given, named_too) {
                (Some(_), Some(_)) => return None,
                (Some(repr), None) => repr,
                (None, Some(k)) => keywords.remove(k).1,
                // No argument and no default raises.
                (None, None) => evaluate::value(default?, source, &no_names)
                    .filter(|v| matches!(v, Value::Int(_) | Value::Str(_) | Value::Bool(_) | Value::None))
                    .and_then(|v| v.repr()),
            };
            bound.extend(repr.map(|repr| (name.to_owned(), repr)));
        }
        // A keyword no parameter takes raises.
        keywords.is_empty().then_some((names, bound))
    }

    /// The one call in `statement` of a name `callee` accepts.
    fn the_call<'t>(&self, statement: Node<'t>, callee: &dyn Fn(&str) -> bool) -> Option<Node<'t>> {
        let source = self.source.as_bytes();
        let mut found = None;
        let mut stack = vec![statement];
        while let Some(node) = stack.pop() {
            let name = field(node, "function")
                .filter(|f| f.kind() == "identifier")
                .and_then(|f| f.utf8_text(source).ok());
            if node.kind() == "call" && name.is_some_and(callee) {
                if found.is_some() {
                    return None;
                }
                found = Some(node);
            }
            stack.extend(named(node));
        }
        found
    }

    /// The repr of the object an argument makes by calling one of the program's
    /// generator functions (`take(fibonacci(), 7)`), which runs none of its code: once
    /// the call it is handed to begins, the argument was made, and is a fresh generator.
    fn generator_made(&self, node: Node<'_>) -> Option<String> {
        let function = field(node, "function").filter(|f| node.kind() == "call" && f.kind() == "identifier")?;
        let name = function.utf8_text(self.source.as_bytes()).ok()?;
        self.program
            .generator_functions
            .contains(name)
            .then(|| format!("<generator object {name}>"))
    }

    /// Whether [`evaluate`] may compute `node`'s value from the state: reprs are the
    /// values' own and no operator, builtin or attribute can run the program's code, or
    /// `node` is a name or a literal that runs none.
    fn evaluates(&self, node: Node<'_>) -> bool {
        let literal = match node.kind() {
            "identifier" | "integer" | "true" | "false" | "none" => true,
            "string" => !named(node).iter().any(|part| part.kind() == "interpolation"),
            _ => false,
        };
        self.scalars_kept && (literal || self.plain_values())
    }

    /// The top-level `class` statement of a plain class (one the program binds once,
    /// with at most one base, no `__new__`: see [`super::effects::Program::class_inits`]).
    fn plain_class(&self, class: &str) -> Option<Node<'_>> {
        if !self.program.class_inits.contains_key(class) {
            return None;
        }
        let source = self.source.as_bytes();
        named(self.tree.root_node()).into_iter().find(|n| {
            n.kind() == "class_definition" && field(*n, "name").and_then(|f| f.utf8_text(source).ok()) == Some(class)
        })
    }

    /// The base a plain class names: `None` for none or `object`.
    fn base_of(&self, class: Node<'_>) -> Result<Option<String>, ()> {
        let bases = field(class, "superclasses").map(named).unwrap_or_default();
        match bases.as_slice() {
            [] => Ok(None),
            [base] if base.kind() == "identifier" => {
                let name = base.utf8_text(self.source.as_bytes()).map_err(|_| ())?;
                Ok((name != "object").then(|| name.to_owned()))
            }
            _ => Err(()),
        }
    }

    /// Whether a plain class's instances are plain objects: along its bases, every class
    /// is a plain class of the program's, the last one based on nothing but `object`.
    pub(super) fn object_rooted(&self, class: &str) -> bool {
        let mut class = class.to_owned();
        for _ in 0..8 {
            let Some(node) = self.plain_class(&class) else {
                return false;
            };
            match self.base_of(node) {
                Ok(None) => return true,
                Ok(Some(base)) => class = base,
                Err(()) => return false,
            }
        }
        false
    }

    /// The `def` a plain class's instances call by the name `method`: the first along its
    /// bases whose body binds that name, when its one binding there is an undecorated,
    /// synchronous function that does not yield.
    fn method_of(&self, class: &str, method: &str) -> Option<Node<'_>> {
        let source = self.source.as_bytes();
        let mut class = class.to_owned();
        for _ in 0..8 {
            let node = self.plain_class(&class)?;
            let body = field(node, "body")?;
            let mut effects = super::effects::Effects::default();
            let program = super::effects::Program::default();
            super::effects::collect(body, source, None, &program, &mut effects, false);
            match effects.times_bound(method) {
                0 => class = self.base_of(node).ok()??,
                1 => {
                    let named_so =
                        |s: &Node<'_>| field(*s, "name").and_then(|n| n.utf8_text(source).ok()) == Some(method);
                    let definition = named(body)
                        .into_iter()
                        .find(|s| s.kind() == "function_definition" && named_so(s))?;
                    let plain =
                        !definition.utf8_text(source).ok()?.starts_with("async") && !super::effects::yields(definition);
                    return plain.then_some(definition);
                }
                _ => return None,
            }
        }
        None
    }

    /// Whether the text could give an instance an attribute called `name`, hiding a
    /// method: it stores `….name`, or spells the name in a string (`setattr`), or
    /// reaches `__dict__`.
    fn stores_attribute(&self, name: &str) -> bool {
        let source = self.source.as_bytes();
        let text = &self.source;
        if text.contains("__dict__") || text.contains(&format!("'{name}'")) || text.contains(&format!("\"{name}\"")) {
            return true;
        }
        let mut stack = vec![self.tree.root_node()];
        while let Some(node) = stack.pop() {
            if matches!(
                node.kind(),
                "assignment" | "augmented_assignment" | "for_statement" | "with_item"
            ) && let Some(left) = field(node, "left").or_else(|| field(node, "alias"))
            {
                let mut targets = vec![left];
                while let Some(target) = targets.pop() {
                    if target.kind() == "attribute"
                        && field(target, "attribute").and_then(|a| a.utf8_text(source).ok()) == Some(name)
                    {
                        return true;
                    }
                    if !matches!(target.kind(), "attribute" | "subscript") {
                        targets.extend(named(target));
                    }
                }
            }
            stack.extend(named(node));
        }
        false
    }
}

/// What a simple statement does with the value it evaluates whole.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Completion {
    /// `NAME = …`
    Assign(String),
    /// `NAME op= …`: reading the name first runs nothing.
    Augment,
    /// An expression statement: the value is dropped.
    Discard,
    /// `return …`: the frame returns it.
    Return,
}

/// The value a simple statement evaluates whole, first of all it evaluates, and what it
/// does with it: an expression statement's, a plain `NAME = …` or `NAME op= …`'s, or a
/// `return`'s.
pub(super) fn whole_value<'t>(statement: Node<'t>, source: &[u8]) -> Option<(Completion, Node<'t>)> {
    let inner = statement.named_child(0)?;
    if statement.kind() == "return_statement" {
        return Some((Completion::Return, inner));
    }
    match inner.kind() {
        "assignment" | "augmented_assignment" => {
            let left = field(inner, "left").filter(|l| l.kind() == "identifier" && field(inner, "type").is_none())?;
            let completion = if inner.kind() == "assignment" {
                Completion::Assign(left.utf8_text(source).ok()?.to_owned())
            } else {
                Completion::Augment
            };
            Some((completion, field(inner, "right")?))
        }
        _ => Some((Completion::Discard, inner)),
    }
}

/// The repr of `iter(iterable)` as the trace language writes it, where the state tells
/// its type.
fn iterator_repr(iterable: Node<'_>, source: &[u8], env: &Env<'_>) -> Option<String> {
    let words = |node: Node<'_>| node.utf8_text(source).ok();
    let kind = if iterable.kind() == "call" {
        let function = field(iterable, "function")?;
        let arguments = named(field(iterable, "arguments")?);
        let values = || {
            arguments
                .iter()
                .map(|a| evaluate::value(*a, source, env))
                .collect::<Option<Vec<Value>>>()
        };
        match function.kind() {
            "identifier" if env.builtin(words(function)?) => match words(function)? {
                "range" => {
                    let fits = |v: &Value| matches!(v, Value::Int(n) if i64::try_from(*n).is_ok());
                    let values = values()?;
                    (!values.is_empty() && values.len() <= 3 && values.iter().all(fits)).then_some("range_iterator")?
                }
                "zip" => "zip",
                "enumerate" => "enumerate",
                "reversed" => match values()?.as_slice() {
                    [Value::Container(list)] if list.kind == Kind::List => "list_reverseiterator",
                    _ => return None,
                },
                _ => return None,
            },
            "attribute" if arguments.is_empty() => {
                let method = words(field(function, "attribute")?)?;
                let receiver = evaluate::value(field(function, "object")?, source, env)?;
                let dict = matches!(&receiver, Value::Container(d) if d.kind == Kind::Dict);
                match method {
                    "items" if dict && env.builtin(method) => "dict_itemiterator",
                    "keys" if dict && env.builtin(method) => "dict_keyiterator",
                    "values" if dict && env.builtin(method) => "dict_valueiterator",
                    _ => return None,
                }
            }
            _ => return None,
        }
    } else {
        match evaluate::value(iterable, source, env)? {
            Value::Container(display) => match display.kind {
                Kind::List => "list_iterator",
                Kind::Tuple => "tuple_iterator",
                Kind::Dict => "dict_keyiterator",
                Kind::Set => "set_iterator",
            },
            _ => return None,
        }
    };
    Some(format!("<{kind} object>"))
}
