//! The value of an expression where the code's literals and the frame's variables (their
//! reprs in the state before it runs) fix it, without running anything
//! ([`super::values`] says what each operation makes of plain values): numbers, strings,
//! f-strings of plain names, truth values, `None`, containers' items, and the builtins
//! and methods of builtin types whose result those fix. Whatever could raise, round or run
//! the program's code is `None`: left to the model.
//!
//! Only for a program no class of which could look like a builtin value or change what an
//! operator does (the caller checks: no `__repr__`, no special method beyond `__init__`
//! and `__str__`).

use tree_sitter::Node;

use super::effects::Program;
use super::flow::named;
use super::literal;
use super::values::{Value, arithmetic, builtin, compare, from_repr, item, method_call, slice, small, text_value};

/// What an expression is evaluated against: the frame's variables as the state shows
/// them, and the program (a name it binds is not the builtin of that name).
pub(super) struct Env<'a> {
    pub(super) vars: &'a [(String, String)],
    /// Module variables the frame reads as the module showed them, where it shows no
    /// variable of that name ([`super::globals`]).
    pub(super) outer: &'a [(String, String)],
    pub(super) program: &'a Program,
}

impl Env<'_> {
    /// The repr the state shows for `name`.
    pub(super) fn var(&self, name: &str) -> Option<String> {
        let shown = |vars: &[(String, String)]| vars.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
        shown(self.vars).or_else(|| shown(self.outer))
    }

    /// Whether `name`, called as a function or a method, cannot be the program's own.
    pub(super) fn builtin(&self, name: &str) -> bool {
        self.program.builtin(name)
    }
}

/// The repr of `node`'s value: a name's as the state shows it (the very object, whatever it
/// is), else the value computed from literals and names.
pub(super) fn repr_of(node: Node<'_>, source: &[u8], env: &Env<'_>) -> Option<String> {
    match node.kind() {
        "identifier" => env.var(node.utf8_text(source).ok()?),
        _ => value(node, source, env)?.repr(),
    }
}

/// The value of the expression `node`, where the literals and `env` fix it.
pub(super) fn value(node: Node<'_>, source: &[u8], env: &Env<'_>) -> Option<Value> {
    let field = |name: &str| node.child_by_field_name(name);
    match node.kind() {
        "identifier" => from_repr(&env.var(node.utf8_text(source).ok()?)?),
        "parenthesized_expression" => value(node.named_child(0)?, source, env),
        "string" if is_fstring(node, source) => fstring(node, source, env),
        "integer"
        | "float"
        | "string"
        | "concatenated_string"
        | "true"
        | "false"
        | "none"
        | "list"
        | "tuple"
        | "dictionary" => from_repr(&literal::repr(node, source)?),
        "unary_operator" => {
            let argument = value(field("argument")?, source, env)?;
            match (field("operator")?.kind(), argument) {
                ("-", Value::Int(n)) => small(-n),
                ("+", Value::Int(n)) => small(n),
                _ => None,
            }
        }
        "not_operator" => Some(Value::Bool(!value(field("argument")?, source, env)?.truth()?)),
        "boolean_operator" => {
            let left = value(field("left")?, source, env)?;
            let truth = left.truth()?;
            match (field("operator")?.kind(), truth) {
                ("and", false) | ("or", true) => Some(left),
                _ => value(field("right")?, source, env),
            }
        }
        "binary_operator" => {
            let left = value(field("left")?, source, env)?;
            let right = value(field("right")?, source, env)?;
            arithmetic(&left, field("operator")?.kind(), &right)
        }
        "comparison_operator" => comparison(node, source, env).map(Value::Bool),
        "conditional_expression" => {
            let parts = named(node);
            let [body, condition, alternative] = parts.as_slice() else {
                return None;
            };
            if value(*condition, source, env)?.truth()? {
                value(*body, source, env)
            } else {
                value(*alternative, source, env)
            }
        }
        "subscript" => {
            let container = value(field("value")?, source, env)?;
            let mut cursor = node.walk();
            let indices: Vec<Node<'_>> = node.children_by_field_name("subscript", &mut cursor).collect();
            let [index] = indices.as_slice() else {
                return None;
            };
            if index.kind() == "slice" {
                let [start, stop, step] = slice_bounds(*index, source, env)?;
                return slice(&container, start, stop, step);
            }
            item(&container, &value(*index, source, env)?)
        }
        "call" => call(node, source, env),
        _ => None,
    }
}

/// The truth of the comparison chain `node` (`a < b <= c`, `x is not None`, `k in d`).
pub(super) fn comparison(node: Node<'_>, source: &[u8], env: &Env<'_>) -> Option<bool> {
    let mut cursor = node.walk();
    let mut operands = Vec::new();
    let mut operators: Vec<String> = Vec::new();
    for child in node.children(&mut cursor) {
        if child.is_named() {
            operands.push(value(child, source, env)?);
        } else {
            let op = child.utf8_text(source).ok()?;
            // `is not` and `not in` come as two tokens.
            let right_after = operators.len() == operands.len();
            match (operators.last_mut(), op) {
                (Some(last), "not") if *last == "is" && right_after => "is not".clone_into(last),
                (Some(last), "in") if *last == "not" && right_after => "not in".clone_into(last),
                _ => operators.push(op.to_owned()),
            }
        }
    }
    if operands.len() != operators.len() + 1 {
        return None;
    }
    let mut all = true;
    for (i, op) in operators.iter().enumerate() {
        all &= compare(&operands[i], op, &operands[i + 1])?;
    }
    Some(all)
}

/// A call of a builtin function or of a `str` or `dict` method whose result the values
/// fix.
fn call(node: Node<'_>, source: &[u8], env: &Env<'_>) -> Option<Value> {
    let function = node.child_by_field_name("function")?;
    let arguments = node.child_by_field_name("arguments")?;
    if arguments.kind() != "argument_list" {
        return None;
    }
    let nodes = named(arguments);
    // Keyword, starred and generator arguments are the model's.
    if nodes
        .iter()
        .any(|a| matches!(a.kind(), "keyword_argument" | "list_splat" | "dictionary_splat"))
    {
        return None;
    }
    let args: Vec<Value> = nodes.iter().map(|a| value(*a, source, env)).collect::<Option<_>>()?;
    match function.kind() {
        "identifier" => {
            let name = function.utf8_text(source).ok()?;
            env.builtin(name).then_some(())?;
            builtin(name, &args)
        }
        "attribute" => {
            let receiver = value(function.child_by_field_name("object")?, source, env)?;
            let method = function.child_by_field_name("attribute")?.utf8_text(source).ok()?;
            // A method the program defines could be the one called.
            env.builtin(method).then_some(())?;
            method_call(&receiver, method, &args)
        }
        _ => None,
    }
}

/// A slice's start, stop and step, each a whole number or left out.
fn slice_bounds(node: Node<'_>, source: &[u8], env: &Env<'_>) -> Option<[Option<i128>; 3]> {
    let mut bounds = [None, None, None];
    let mut at = 0;
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if child.kind() == ":" {
            at += 1;
        } else if child.is_named() {
            match value(child, source, env)? {
                Value::Int(n) => *bounds.get_mut(at)? = Some(n),
                Value::None => {}
                _ => return None,
            }
        }
    }
    Some(bounds)
}

/// Whether `node` is an f-string (not raw, not bytes).
fn is_fstring(node: Node<'_>, source: &[u8]) -> bool {
    let text = node.utf8_text(source).unwrap_or_default();
    let prefix: String = text.chars().take_while(char::is_ascii_alphabetic).collect();
    prefix.eq_ignore_ascii_case("f")
}

/// An f-string whose fields are plain names or expressions of strings and whole numbers,
/// with no conversion or format spec, and whose text has no escapes or braces.
fn fstring(node: Node<'_>, source: &[u8], env: &Env<'_>) -> Option<Value> {
    let mut out = String::new();
    for part in named(node) {
        match part.kind() {
            "string_start" | "string_end" => {
                let text = part.utf8_text(source).ok()?;
                // Triple quotes may hold newlines the tracer writes as escapes: fine, but
                // keep to the one-line kind.
                if text.trim_start_matches(|c: char| c.is_ascii_alphabetic()).len() != 1 {
                    return None;
                }
            }
            "string_content" => {
                let text = part.utf8_text(source).ok()?;
                if text.contains(['\\', '{', '}']) {
                    return None;
                }
                out.push_str(text);
            }
            "interpolation" => {
                // Only `{` EXPRESSION `}`: no `=` (which writes the expression's text too),
                // no conversion, no format spec.
                let mut cursor = part.walk();
                let braces_only = part
                    .children(&mut cursor)
                    .all(|c| c.is_named() || matches!(c.kind(), "{" | "}"));
                if !braces_only
                    || part.child_by_field_name("type_conversion").is_some()
                    || part.child_by_field_name("format_specifier").is_some()
                {
                    return None;
                }
                let inner = named(part);
                let [expression] = inner.as_slice() else {
                    return None;
                };
                match value(*expression, source, env)? {
                    Value::Str(s) => out.push_str(&s),
                    Value::Int(n) => out.push_str(&n.to_string()),
                    Value::Bool(b) => out.push_str(if b { "True" } else { "False" }),
                    Value::None => out.push_str("None"),
                    Value::Container(_) | Value::Object => return None,
                }
            }
            _ => return None,
        }
    }
    text_value(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evaluated(expression: &str, vars: &[(&str, &str)]) -> Option<String> {
        let code = format!("x = {expression}\n");
        let tree = replayground_exec::python::parse(&code).expect("parses");
        let statement = tree.root_node().named_child(0).expect("a statement");
        let assignment = statement.named_child(0).expect("an assignment");
        let right = assignment.child_by_field_name("right").expect("a value");
        let vars: Vec<(String, String)> = vars.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect();
        let mut program = Program::default();
        program.bound.insert("shadowed".to_owned());
        let env = Env {
            vars: &vars,
            outer: &[],
            program: &program,
        };
        value(right, code.as_bytes(), &env)?.repr()
    }

    #[test]
    fn whole_numbers_follow_python() {
        assert_eq!(
            evaluated("total + x", &[("total", "10"), ("x", "-3")]).as_deref(),
            Some("7")
        );
        assert_eq!(evaluated("-7 // 2", &[]).as_deref(), Some("-4"));
        assert_eq!(evaluated("7 // -2", &[]).as_deref(), Some("-4"));
        assert_eq!(evaluated("-7 % 3", &[]).as_deref(), Some("2"));
        assert_eq!(evaluated("7 % -3", &[]).as_deref(), Some("-2"));
        assert_eq!(evaluated("2 ** 10", &[]).as_deref(), Some("1024"));
        assert_eq!(evaluated("n // 0", &[("n", "4")]), None, "raises");
        assert_eq!(evaluated("n / 2", &[("n", "4")]), None, "a float");
        assert_eq!(evaluated("n + 1", &[("n", "1.5")]), None);
        assert_eq!(evaluated("n + 1", &[]), None, "n is not shown");
    }

    #[test]
    fn strings_join_and_format() {
        let vars = [("current", "'never'"), ("word", "'trust'")];
        assert_eq!(
            evaluated("f\"{current} {word}\" if current else word", &vars).as_deref(),
            Some("'never trust'")
        );
        assert_eq!(
            evaluated(
                "f\"{current} {word}\" if current else word",
                &[("current", "''"), ("word", "'a'")]
            )
            .as_deref(),
            Some("'a'")
        );
        assert_eq!(evaluated("f'{n:>3}'", &[("n", "1")]), None, "a format spec");
        assert_eq!(evaluated("f'{n=}'", &[("n", "1")]), None, "a self-documenting field");
        assert_eq!(evaluated("f'{n!r}'", &[("n", "1")]), None, "a conversion");
        assert_eq!(evaluated("word + '!' * 2", &vars).as_deref(), Some("'trust!!'"));
        assert_eq!(evaluated("word[0].upper()", &vars).as_deref(), Some("'T'"));
        assert_eq!(evaluated("\"it's\" + word", &vars).as_deref(), Some("\"it'strust\""));
    }

    #[test]
    fn builtins_and_containers() {
        let vars = [
            ("xs", "[3, 1, 2]"),
            ("d", "{'a': 1, 'b': [2, 3]}"),
            ("words", "['a, b', 'c']"),
        ];
        assert_eq!(evaluated("len(xs) + len(words)", &vars).as_deref(), Some("5"));
        assert_eq!(evaluated("sum(xs)", &vars).as_deref(), Some("6"));
        assert_eq!(evaluated("max(xs)", &vars).as_deref(), Some("3"));
        assert_eq!(evaluated("min(4, xs[-1])", &vars).as_deref(), Some("2"));
        assert_eq!(evaluated("d.get('a', 0) + 1", &vars).as_deref(), Some("2"));
        assert_eq!(evaluated("d.get('z', 0) + 1", &vars).as_deref(), Some("1"));
        assert_eq!(evaluated("d['z']", &vars), None, "raises");
        assert_eq!(evaluated("'b' in d", &vars).as_deref(), Some("True"));
        assert_eq!(evaluated("'c' not in words", &vars).as_deref(), Some("False"));
        assert_eq!(evaluated("shadowed(xs)", &vars), None, "the program binds it");
        assert_eq!(evaluated("xs[5]", &vars), None, "raises");
        assert_eq!(evaluated("len(t)", &[("t", "(1,)")]).as_deref(), Some("1"));
        assert_eq!(evaluated("len(s)", &[("s", "{1, 2}")]).as_deref(), Some("2"));
        assert_eq!(evaluated("len(xs)", &[("xs", "[1, 2, ...")]), None, "cut short");
    }

    #[test]
    fn slices_joins_splits_and_sorted_lists() {
        let vars = [
            ("items", "[1, 2, 3]"),
            ("i", "1"),
            ("text", "'a b  c'"),
            ("word", "'hello'"),
        ];
        assert_eq!(evaluated("items[:i] + items[i + 1:]", &vars).as_deref(), Some("[1, 3]"));
        assert_eq!(evaluated("items[::-1]", &vars).as_deref(), Some("[3, 2, 1]"));
        assert_eq!(evaluated("items[-2:]", &vars).as_deref(), Some("[2, 3]"));
        assert_eq!(evaluated("word[1:-1]", &vars).as_deref(), Some("'ell'"));
        assert_eq!(evaluated("word[::2]", &vars).as_deref(), Some("'hlo'"));
        assert_eq!(evaluated("text.split()", &vars).as_deref(), Some("['a', 'b', 'c']"));
        assert_eq!(evaluated("'-'.join(text.split())", &vars).as_deref(), Some("'a-b-c'"));
        assert_eq!(
            evaluated("text.split(' ')", &vars).as_deref(),
            Some("['a', 'b', '', 'c']")
        );
        assert_eq!(
            evaluated("sorted(word)", &vars).as_deref(),
            Some("['e', 'h', 'l', 'l', 'o']")
        );
        assert_eq!(evaluated("tuple(items[:1])", &vars).as_deref(), Some("(1,)"));
        assert_eq!(
            evaluated("list({'a': 1, 'b': 2})", &vars).as_deref(),
            Some("['a', 'b']")
        );
        assert_eq!(evaluated("word.replace('l', 'L')", &vars).as_deref(), Some("'heLLo'"));
        assert_eq!(evaluated("word.startswith('he')", &vars).as_deref(), Some("True"));
        assert_eq!(evaluated("items[::0]", &vars), None, "raises");
        assert_eq!(evaluated("sorted([1, 'a'])", &vars), None, "raises");
    }
}
