//! The order of a function's local variables in its frame's namespace, as CPython 3.11
//! compiles it: the parameters, then every other local in the order the compiler's code
//! generation first meets it (a load, a store or a `del`), then the cells (locals a
//! nested scope reads) sorted by name, then the free variables sorted by name.
//!
//! The tracer reads `f_locals` at every event, and CPython adds the names bound since
//! the last event at the dict's end in that order. So between a frame's two consecutive
//! events, the names it newly shows come in this order. Code generation does not always
//! follow the text: `x = y` loads `y` before storing `x`, `a if c else b` evaluates `c`
//! first, a `try`'s `else` comes before its handlers, a call's `*args` before its
//! keywords. Anything this walk does not model gives no order at all.

use std::collections::HashSet;

use tree_sitter::Node;

use super::effects::text;
use super::flow::{field, named};

/// The plain locals of the function `definition` (a `function_definition` node) that
/// are not parameters, in the order CPython gives them; `None` when the text holds
/// code whose order this does not model. Locals a nested scope may read (cells, which
/// come after every plain local, by name) and names declared `global` or `nonlocal` are
/// left out: the order says nothing about them.
pub(super) fn local_order(definition: Node<'_>, source: &[u8]) -> Option<Vec<String>> {
    let mut walk = Walk::new(source);
    let parameters: HashSet<String> = field(definition, "parameters")
        .map(|p| super::effects::identifiers(p, source).into_iter().collect())
        .unwrap_or_default();
    walk.statement(field(definition, "body")?)?;
    Some(
        walk.met
            .into_iter()
            .filter(|n| {
                walk.stored.contains(n)
                    && !parameters.contains(n)
                    && !walk.nested.contains(n)
                    && !walk.declared.contains(n)
            })
            .collect(),
    )
}

/// The order in which the simple statement `statement` (an assignment, an import)
/// first stores each name it binds, when every store it makes always runs: the order
/// they enter a namespace that is a dict (the module's, a class body's). Empty for any
/// other statement, and for one with a `:=` (which may store on one branch only).
pub(super) fn store_order(statement: Node<'_>, source: &[u8]) -> Vec<String> {
    let simple = matches!(
        statement.kind(),
        "expression_statement" | "import_statement" | "import_from_statement"
    );
    if !simple || contains(statement, "named_expression") {
        return Vec::new();
    }
    let mut walk = Walk::new(source);
    match walk.statement(statement) {
        Some(()) => walk.stores,
        None => Vec::new(),
    }
}

/// Whether a node of `kind` is under `node`.
pub(super) fn contains(node: Node<'_>, kind: &str) -> bool {
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        if node.kind() == kind {
            return true;
        }
        stack.extend(named(node));
    }
    false
}

struct Walk<'s> {
    source: &'s [u8],
    /// Every name the code generation meets, in the order it first does.
    met: Vec<String>,
    /// Those it stores or deletes: the function's locals.
    stored: HashSet<String>,
    /// The names it stores (or deletes), in the order it first does.
    stores: Vec<String>,
    /// Every identifier inside a nested scope (a `def`, `lambda`, class body or
    /// comprehension): a local among them may be a cell.
    nested: HashSet<String>,
    /// Names `global` or `nonlocal` declares.
    declared: HashSet<String>,
}

impl<'s> Walk<'s> {
    fn new(source: &'s [u8]) -> Self {
        Self {
            source,
            met: Vec::new(),
            stored: HashSet::new(),
            stores: Vec::new(),
            nested: HashSet::new(),
            declared: HashSet::new(),
        }
    }

    fn meet(&mut self, node: Node<'_>, store: bool) {
        let name = text(Some(node), self.source).to_owned();
        if store && self.stored.insert(name.clone()) {
            self.stores.push(name.clone());
        }
        if !self.met.contains(&name) {
            self.met.push(name);
        }
    }

    /// Every identifier under `node` belongs to a nested scope.
    fn nest(&mut self, node: Node<'_>) {
        self.nested.extend(super::effects::identifiers(node, self.source));
    }

    /// A nested function's parameter names (their defaults are evaluated here).
    fn nest_parameters(&mut self, parameters: Node<'_>) {
        for parameter in named(parameters) {
            match field(parameter, "name").filter(|_| parameter.kind() == "default_parameter") {
                Some(name) => self.nest(name),
                None => self.nest(parameter),
            }
        }
    }

    fn statements(&mut self, block: Node<'_>) -> Option<()> {
        named(block).into_iter().try_for_each(|s| self.statement(s))
    }

    fn statement(&mut self, node: Node<'_>) -> Option<()> {
        match node.kind() {
            "block" => self.statements(node),
            "expression_statement" => named(node).into_iter().try_for_each(|n| match n.kind() {
                "assignment" => self.assignment(n),
                "augmented_assignment" => self.augmented(n),
                _ => self.expression(n),
            }),
            "return_statement" | "assert_statement" | "raise_statement" => {
                named(node).into_iter().try_for_each(|n| self.expression(n))
            }
            "delete_statement" => named(node).into_iter().try_for_each(|n| self.target(n)),
            "pass_statement" | "break_statement" | "continue_statement" => Some(()),
            "global_statement" | "nonlocal_statement" => {
                for name in named(node) {
                    self.declared.insert(text(Some(name), self.source).to_owned());
                }
                Some(())
            }
            "import_statement" | "import_from_statement" => {
                let module = field(node, "module_name");
                for imported in named(node).into_iter().filter(|n| Some(*n) != module) {
                    match imported.kind() {
                        // `import a.b` binds `a` (`from m import x`: one name).
                        "dotted_name" => self.meet(*named(imported).first()?, true),
                        "aliased_import" => self.meet(field(imported, "alias")?, true),
                        _ => return None,
                    }
                }
                Some(())
            }
            "if_statement" => {
                self.expression(field(node, "condition")?)?;
                self.statement(field(node, "consequence")?)?;
                for clause in named(node).into_iter().filter(|c| c.kind().ends_with("_clause")) {
                    if let Some(condition) = field(clause, "condition") {
                        self.expression(condition)?;
                    }
                    self.statement(field(clause, "consequence").or_else(|| field(clause, "body"))?)?;
                }
                Some(())
            }
            "while_statement" => {
                self.expression(field(node, "condition")?)?;
                self.statement(field(node, "body")?)?;
                self.otherwise(node)
            }
            "for_statement" => {
                self.expression(field(node, "right")?)?;
                self.target(field(node, "left")?)?;
                self.statement(field(node, "body")?)?;
                self.otherwise(node)
            }
            "try_statement" => self.try_statement(node),
            "with_statement" => {
                let clause = named(node).into_iter().find(|n| n.kind() == "with_clause")?;
                for item in named(clause) {
                    self.expression(field(item, "value")?)?;
                }
                self.statement(field(node, "body")?)
            }
            "decorated_definition" => {
                for decorator in named(node).into_iter().filter(|n| n.kind() == "decorator") {
                    named(decorator).into_iter().try_for_each(|e| self.expression(e))?;
                }
                self.statement(field(node, "definition")?)
            }
            "function_definition" => {
                let parameters = field(node, "parameters")?;
                // Defaults are evaluated here, then annotations (not modelled).
                if field(node, "return_type").is_some() {
                    return None;
                }
                for parameter in named(parameters) {
                    match parameter.kind() {
                        "default_parameter" => self.expression(field(parameter, "value")?)?,
                        "identifier"
                        | "list_splat_pattern"
                        | "dictionary_splat_pattern"
                        | "keyword_separator"
                        | "positional_separator" => {}
                        _ => return None,
                    }
                }
                self.nest_parameters(parameters);
                self.nest(field(node, "body")?);
                self.meet(field(node, "name")?, true);
                Some(())
            }
            "class_definition" => {
                if field(node, "type_parameters").is_some() {
                    return None;
                }
                if let Some(bases) = field(node, "superclasses") {
                    self.arguments(bases)?;
                }
                self.nest(field(node, "body")?);
                self.meet(field(node, "name")?, true);
                Some(())
            }
            _ => None,
        }
    }

    /// A loop's `else`.
    fn otherwise(&mut self, node: Node<'_>) -> Option<()> {
        match field(node, "alternative") {
            Some(clause) => self.statement(field(clause, "body")?),
            None => Some(()),
        }
    }

    /// The body, then the `else`, then each handler (its type, its name, its body), then
    /// the `finally`. A `return`, `break` or `continue` under a `finally` compiles the
    /// `finally` body again where it leaves: not modelled.
    fn try_statement(&mut self, node: Node<'_>) -> Option<()> {
        let clauses = named(node);
        let of_kind = |kind: &'static str| clauses.iter().filter(move |c| c.kind() == kind).copied();
        if let Some(finally) = of_kind("finally_clause").next()
            && leaves(node, finally)
        {
            return None;
        }
        self.statement(field(node, "body")?)?;
        for clause in of_kind("else_clause") {
            self.statement(field(clause, "body")?)?;
        }
        for handler in of_kind("except_clause") {
            let mut cursor = handler.walk();
            if handler.children(&mut cursor).any(|c| c.kind() == "*") {
                return None;
            }
            for part in named(handler) {
                match part.kind() {
                    "block" => self.statement(part)?,
                    _ => self.expression(part)?,
                }
            }
        }
        if of_kind("except_group_clause").next().is_some() {
            return None;
        }
        for clause in of_kind("finally_clause") {
            named(clause).into_iter().try_for_each(|b| self.statement(b))?;
        }
        Some(())
    }

    /// `a = b = value`: the value, then each target from the left. An annotation is not
    /// evaluated for a plain name in a function.
    fn assignment(&mut self, node: Node<'_>) -> Option<()> {
        let mut targets = vec![field(node, "left")?];
        if field(node, "type").is_some() && targets[0].kind() != "identifier" {
            return None;
        }
        let mut value = field(node, "right");
        while let Some(inner) = value.filter(|v| v.kind() == "assignment") {
            if field(inner, "type").is_some() {
                return None;
            }
            targets.push(field(inner, "left")?);
            value = field(inner, "right");
        }
        let Some(value) = value else {
            // `x: int` alone compiles to nothing in a function.
            return Some(());
        };
        self.expression(value)?;
        targets.into_iter().try_for_each(|t| self.target(t))
    }

    /// `x += value`: the target is read first, then the value.
    fn augmented(&mut self, node: Node<'_>) -> Option<()> {
        let target = field(node, "left")?;
        match target.kind() {
            "identifier" => self.meet(target, true),
            "attribute" | "subscript" => self.expression(target)?,
            _ => return None,
        }
        self.expression(field(node, "right")?)
    }

    /// A name stored (or deleted), or the parts of an attribute or subscript target.
    fn target(&mut self, node: Node<'_>) -> Option<()> {
        match node.kind() {
            "identifier" | "keyword_identifier" => {
                self.meet(node, true);
                Some(())
            }
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "tuple"
            | "list"
            | "expression_list"
            | "parenthesized_expression"
            | "list_splat_pattern"
            | "list_splat" => named(node).into_iter().try_for_each(|n| self.target(n)),
            "attribute" | "subscript" => self.expression(node),
            _ => None,
        }
    }

    /// A call's arguments (or a class's bases): positional ones and `*args` first, then
    /// keywords and `**kwargs`, each group in order.
    fn arguments(&mut self, list: Node<'_>) -> Option<()> {
        let keyword = |n: &Node<'_>| matches!(n.kind(), "keyword_argument" | "dictionary_splat");
        let (keywords, positional): (Vec<_>, Vec<_>) = named(list).into_iter().partition(keyword);
        for argument in positional.into_iter().chain(keywords) {
            match argument.kind() {
                "keyword_argument" => self.expression(field(argument, "value")?)?,
                _ => self.expression(argument)?,
            }
        }
        Some(())
    }

    fn expression(&mut self, node: Node<'_>) -> Option<()> {
        match node.kind() {
            "identifier" | "keyword_identifier" => {
                self.meet(node, false);
                Some(())
            }
            "comment" => Some(()),
            kind if kind.ends_with("_statement") || kind.ends_with("definition") => None,
            "attribute" => self.expression(field(node, "object")?),
            "conditional_expression" => match named(node).as_slice() {
                [then, condition, otherwise] => {
                    self.expression(*condition)?;
                    self.expression(*then)?;
                    self.expression(*otherwise)
                }
                _ => None,
            },
            // `with open(p) as fh`, `except ValueError as err`: the value, then the name.
            "as_pattern" => {
                self.expression(*named(node).first()?)?;
                let alias = field(node, "alias")?;
                match named(alias).as_slice() {
                    [] => self.meet(alias, true),
                    targets => targets.iter().try_for_each(|t| self.target(*t))?,
                }
                Some(())
            }
            "named_expression" => {
                self.expression(field(node, "value")?)?;
                self.meet(field(node, "name")?, true);
                Some(())
            }
            "call" => {
                self.expression(field(node, "function")?)?;
                let arguments = field(node, "arguments")?;
                match arguments.kind() {
                    "argument_list" => self.arguments(arguments),
                    _ => self.expression(arguments),
                }
            }
            "lambda" => {
                if let Some(parameters) = field(node, "parameters") {
                    for parameter in named(parameters) {
                        if parameter.kind() == "default_parameter" {
                            self.expression(field(parameter, "value")?)?;
                        }
                    }
                    self.nest_parameters(parameters);
                }
                self.nest(field(node, "body")?);
                Some(())
            }
            "list_comprehension" | "set_comprehension" | "dictionary_comprehension" | "generator_expression" => {
                // Only the first `for`'s iterable is evaluated here.
                let first = named(node).into_iter().find(|n| n.kind() == "for_in_clause")?;
                let mut cursor = first.walk();
                let iterables: Vec<Node<'_>> = first.children_by_field_name("right", &mut cursor).collect();
                for part in named(node) {
                    if part == first {
                        self.nest(field(first, "left")?);
                    } else {
                        self.nest(part);
                    }
                }
                iterables.into_iter().try_for_each(|i| self.expression(i))
            }
            _ => named(node).into_iter().try_for_each(|n| self.expression(n)),
        }
    }
}

/// Whether a `return`, `break` or `continue` inside `try_statement` (outside `finally`
/// and any nested scope) may leave through `finally`.
fn leaves(try_statement: Node<'_>, finally: Node<'_>) -> bool {
    let mut stack = named(try_statement);
    while let Some(node) = stack.pop() {
        match node.kind() {
            "return_statement" | "break_statement" | "continue_statement" if node != finally => return true,
            "function_definition" | "class_definition" | "lambda" => {}
            _ if node == finally => {}
            _ => stack.extend(named(node)),
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order of the first function's plain locals past its parameters.
    fn order(code: &str) -> Option<Vec<String>> {
        let tree = replayground_exec::python::parse(code).expect("parses");
        let mut stack = vec![tree.root_node()];
        while let Some(node) = stack.pop() {
            if node.kind() == "function_definition" {
                return local_order(node, code.as_bytes());
            }
            stack.extend(named(node));
        }
        panic!("no function in {code}")
    }

    #[test]
    fn the_order_is_cpythons_co_varnames_past_the_parameters() {
        // Each expected list is `co_varnames` past the parameters, printed by CPython 3.11.
        let cases: [(&str, &[&str]); 12] = [
            ("def f(c):\n    x = y if c else z\n    y = z = 1\n", &["y", "z", "x"]),
            (
                "def f():\n    try:\n        a = 1\n    except ValueError as e:\n        b = 2\n    else:\n        c = 3\n    finally:\n        d = 4\n",
                &["a", "c", "e", "b", "d"],
            ),
            (
                "def f(table):\n    out = ''\n    for value, symbol in table:\n        out += symbol * value\n    return out\n",
                &["out", "value", "symbol"],
            ),
            ("def f(g):\n    g(k=(b := 1), *(a := [2]))\n", &["a", "b"]),
            ("def f():\n    for k in (v := [1]):\n        pass\n", &["v", "k"]),
            (
                "def f(n):\n    while n:\n        if n == 1:\n            total += n\n        total = 0\n        n -= 1\n",
                &["total"],
            ),
            (
                "def f(p):\n    import os.path\n    from json import dumps as d, loads\n    with open(p) as fh, open(p) as (g):\n        data = fh.read()\n    return data\n",
                &["os", "d", "loads", "fh", "g", "data"],
            ),
            // `n` is a cell (the comprehension and the lambda read it): left out.
            (
                "def f(xs):\n    n = 2\n    scaled = [x * n for x in xs]\n    keep = lambda y: y > n\n    def inner(a=scaled):\n        return a\n    class K(Base, metaclass=M):\n        pass\n    total = sum(scaled)\n    return inner, keep, K, total\n",
                &["scaled", "keep", "inner", "K", "total"],
            ),
            (
                "def f():\n    if False:\n        print(b)\n    a = 2\n    b = 3\n",
                &["b", "a"],
            ),
            ("def f(d):\n    d[k] = v = 1\n    k = 2\n", &["k", "v"]),
            ("def f():\n    a = b = c = 0\n    del b\n", &["a", "b", "c"]),
            (
                "def f():\n    try:\n        pass\n    except (KeyError, ValueError) as err:\n        msg = str(err)\n    except Exception:\n        other = 1\n",
                &["err", "msg", "other"],
            ),
        ];
        for (code, expected) in cases {
            assert_eq!(
                order(code).as_deref(),
                Some(&expected.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>()[..]),
                "{code}"
            );
        }
    }

    #[test]
    fn code_whose_order_the_walk_does_not_model_gives_none() {
        // A `return` under `finally` compiles the `finally` body again before it returns.
        assert_eq!(
            order("def f():\n    try:\n        return 1\n    finally:\n        b = 2\n"),
            None
        );
        // A nested function's annotations are evaluated after its defaults.
        assert_eq!(order("def f():\n    def g(a: T = x):\n        pass\n    x = 1\n"), None);
        let without_return = "def f():\n    try:\n        a = 1\n    finally:\n        b = 2\n";
        assert_eq!(order(without_return), Some(vec!["a".to_owned(), "b".to_owned()]));
    }
}
