//! The value of an expression where the code's literals and the frame's variables (their
//! reprs in the state before it runs) fix it, without running anything: whole numbers
//! (exactly, with Python's floor division and modulo), strings (joined, repeated, f-strings
//! of plain names, indexed), truth values, `None`, items of a list, tuple or dict, and the
//! builtins whose result those fix (`len`, `abs`, `min`, `max`, `sum`, `str`, `bool`,
//! `dict.get`, `str.upper`, `str.lower`, `str.strip`). Whatever could raise, round or run
//! the program's code is `None`: left to the model.
//!
//! Only for a program no class of which could look like a builtin value or change what an
//! operator does (the caller checks: no `__repr__`, no special method beyond `__init__`
//! and `__str__`).

use tree_sitter::Node;

use super::effects::Program;
use super::literal;

/// Longest string built here: a longer one is the model's (the tracer may cut it).
const MAX_TEXT: usize = 200;
/// Largest magnitude computed here: far inside `i128`, and exact in every Python.
const MAX_INT: i128 = 1 << 100;

/// A value read from a literal, a repr, or computed from them.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    Int(i128),
    Str(String),
    Bool(bool),
    None,
    /// A list, tuple, dict or set, with its items' reprs when its repr is whole.
    Container(Display),
    /// Anything else: not `None`, and nothing more is known.
    Object,
}

/// A builtin container's repr, split into its items' reprs (a dict's items are
/// `key: value`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Display {
    pub(super) kind: Kind,
    /// `None` when the repr could not be split (it was cut short, say): only whether it
    /// is empty is known.
    pub(super) items: Option<Vec<String>>,
    pub(super) empty: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    List,
    Tuple,
    Dict,
    Set,
}

/// What an expression is evaluated against: the frame's variables as the state shows
/// them, and the program (a name it binds is not the builtin of that name).
pub(super) struct Env<'a> {
    pub(super) vars: &'a [(String, String)],
    pub(super) program: &'a Program,
}

impl Env<'_> {
    /// The repr the state shows for `name`.
    pub(super) fn var(&self, name: &str) -> Option<String> {
        self.vars.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
    }

    /// Whether `name`, called as a function or a method, cannot be the program's own.
    pub(super) fn builtin(&self, name: &str) -> bool {
        self.program.builtin(name)
    }
}

impl Value {
    pub(super) fn truth(&self) -> Option<bool> {
        match self {
            Self::Int(n) => Some(*n != 0),
            Self::Str(s) => Some(!s.is_empty()),
            Self::Bool(b) => Some(*b),
            Self::None => Some(false),
            Self::Container(display) => Some(!display.empty),
            Self::Object => None,
        }
    }

    /// The repr Python writes for the value, where it is known.
    pub(super) fn repr(&self) -> Option<String> {
        match self {
            Self::Int(n) => Some(n.to_string()),
            Self::Str(s) => literal::str_repr(s),
            Self::Bool(true) => Some("True".to_owned()),
            Self::Bool(false) => Some("False".to_owned()),
            Self::None => Some("None".to_owned()),
            Self::Container(_) | Self::Object => None,
        }
    }
}

/// What `repr` spells, when it is a plain value.
pub(super) fn from_repr(repr: &str) -> Option<Value> {
    match repr {
        "None" => return Some(Value::None),
        "True" => return Some(Value::Bool(true)),
        "False" => return Some(Value::Bool(false)),
        "set()" => {
            return Some(Value::Container(Display {
                kind: Kind::Set,
                items: Some(Vec::new()),
                empty: true,
            }));
        }
        _ => {}
    }
    if let Ok(n) = repr.parse::<i128>() {
        return small(n);
    }
    let quoted = |q: char| repr.len() >= 2 && repr.starts_with(q) && repr.ends_with(q);
    if (quoted('\'') || quoted('"')) && !repr.contains('\\') {
        return Some(Value::Str(repr[1..repr.len() - 1].to_owned()));
    }
    if let Some(display) = display(repr) {
        return Some(Value::Container(display));
    }
    // A repr cut short ends in `...`: it may be anything.
    (!repr.ends_with("...")).then_some(Value::Object)
}

/// A list's, tuple's, dict's or set's repr, split at its top-level commas.
fn display(repr: &str) -> Option<Display> {
    let (open, close) = (repr.chars().next()?, repr.chars().last()?);
    let kind = match (open, close) {
        ('[', ']') => Kind::List,
        ('(', ')') => Kind::Tuple,
        ('{', '}') => Kind::Dict,
        _ => return None,
    };
    if repr.len() < 2 {
        return None;
    }
    let inner = &repr[1..repr.len() - 1];
    if inner.is_empty() {
        return Some(Display {
            kind,
            items: Some(Vec::new()),
            empty: true,
        });
    }
    let mut items = split_top(inner, ", ");
    if let Some(items) = items.as_mut()
        && kind == Kind::Tuple
        && items.len() == 1
    {
        // A one-item tuple is written `(x,)`; any other parenthesised repr is not one.
        let only = items[0].strip_suffix(',').map(str::to_owned);
        match only {
            Some(only) => items[0] = only,
            None => return None,
        }
    }
    let kind = match (kind, &items) {
        (Kind::Dict, Some(items)) if !items.iter().all(|i| split_top(i, ": ").is_some_and(|p| p.len() == 2)) => {
            Kind::Set
        }
        (kind, _) => kind,
    };
    Some(Display {
        kind,
        items,
        empty: false,
    })
}

/// `text` cut at each `separator` outside brackets and quotes; `None` where they do not
/// balance (a repr cut short).
fn split_top(text: &str, separator: &str) -> Option<Vec<String>> {
    let bytes = text.as_bytes();
    let (mut depth, mut quote, mut escaped) = (0usize, None::<u8>, false);
    let (mut parts, mut start, mut i) = (Vec::new(), 0, 0);
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == q {
                quote = None;
            }
        } else {
            match b {
                b'\'' | b'"' => quote = Some(b),
                b'[' | b'(' | b'{' => depth += 1,
                b']' | b')' | b'}' => depth = depth.checked_sub(1)?,
                _ if depth == 0 && text[i..].starts_with(separator) => {
                    parts.push(text[start..i].to_owned());
                    i += separator.len();
                    start = i;
                    continue;
                }
                _ => {}
            }
        }
        i += 1;
    }
    if depth != 0 || quote.is_some() || text.ends_with("...") {
        return None;
    }
    parts.push(text[start..].to_owned());
    Some(parts)
}

/// A dict item's `key: value` reprs.
pub(super) fn key_value(item: &str) -> Option<(String, String)> {
    let mut parts = split_top(item, ": ")?.into_iter();
    let pair = (parts.next()?, parts.next()?);
    parts.next().is_none().then_some(pair)
}

/// A tuple repr's items, when it has exactly `n`.
pub(super) fn tuple_items(repr: &str, n: usize) -> Option<Vec<String>> {
    let display = display(repr).filter(|d| d.kind == Kind::Tuple)?;
    display.items.filter(|items| items.len() == n)
}

fn small(n: i128) -> Option<Value> {
    (n.abs() <= MAX_INT).then_some(Value::Int(n))
}

fn text_value(s: String) -> Option<Value> {
    (s.chars().count() <= MAX_TEXT).then_some(Value::Str(s))
}

fn children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect()
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
            let parts = children(node);
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
            item(&container, &value(*index, source, env)?)
        }
        "call" => call(node, source, env),
        _ => None,
    }
}

/// `a OP b` for whole numbers and strings, where it neither raises nor rounds.
pub(super) fn arithmetic(a: &Value, op: &str, b: &Value) -> Option<Value> {
    use Value::{Int, Str};
    match (a, op, b) {
        (Int(left), "+", Int(right)) => small(left.checked_add(*right)?),
        (Int(left), "-", Int(right)) => small(left.checked_sub(*right)?),
        (Int(left), "*", Int(right)) => small(left.checked_mul(*right)?),
        (Int(left), "//", Int(right)) if *right != 0 => {
            small(left.div_euclid(*right) - i128::from(*right < 0 && left.rem_euclid(*right) != 0))
        }
        (Int(left), "%", Int(right)) if *right != 0 => {
            let rest = left.rem_euclid(*right);
            small(if *right < 0 && rest != 0 { rest + right } else { rest })
        }
        (Int(left), "**", Int(right)) if (0..=128).contains(right) => {
            small(left.checked_pow(u32::try_from(*right).ok()?)?)
        }
        (Str(left), "+", Str(right)) => text_value(format!("{left}{right}")),
        (Str(text), "*", Int(times)) | (Int(times), "*", Str(text)) => {
            let times = usize::try_from((*times).max(0)).ok()?;
            (text.chars().count().checked_mul(times)? <= MAX_TEXT).then(|| Value::Str(text.repeat(times)))
        }
        _ => None,
    }
}

/// Whether `a OP b` holds, where builtin values decide it without raising.
fn compare(a: &Value, op: &str, b: &Value) -> Option<bool> {
    use std::cmp::Ordering;
    let order = match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
        _ => None,
    };
    let same_kind = std::mem::discriminant(a) == std::mem::discriminant(b);
    let with_none = matches!(a, Value::None) || matches!(b, Value::None);
    match op {
        "<" => order.map(|o| o == Ordering::Less),
        "<=" => order.map(|o| o != Ordering::Greater),
        ">" => order.map(|o| o == Ordering::Greater),
        ">=" => order.map(|o| o != Ordering::Less),
        "==" | "!=" => {
            let equal = match (a, b) {
                (Value::Container(_) | Value::Object, _) | (_, Value::Container(_) | Value::Object) => {
                    return None;
                }
                _ if same_kind => a == b,
                _ if with_none => false,
                _ => return None,
            };
            Some(equal == (op == "=="))
        }
        "is" | "is not" if with_none => Some((a == b) == (op == "is")),
        "in" | "not in" => contains(b, a).map(|found| found == (op == "in")),
        _ => None,
    }
}

/// Whether `needle` is in `haystack`: a substring, or a list's, tuple's or set's item or
/// a dict's key written as the needle's repr.
fn contains(haystack: &Value, needle: &Value) -> Option<bool> {
    match (haystack, needle) {
        (Value::Str(h), Value::Str(n)) => Some(h.contains(n.as_str())),
        (Value::Container(display), Value::Int(_) | Value::Str(_)) => {
            let wanted = needle.repr()?;
            let items = display.items.as_ref()?;
            let keys: Vec<String> = match display.kind {
                Kind::Dict => items
                    .iter()
                    .map(|i| key_value(i).map(|(k, _)| k))
                    .collect::<Option<_>>()?,
                _ => items.clone(),
            };
            // Equal values of other types (`1 == 1.0 == True`) would match too: only
            // whole numbers and strings among the items decide it.
            keys.iter()
                .all(|k| matches!(from_repr(k), Some(Value::Int(_) | Value::Str(_))))
                .then(|| keys.contains(&wanted))
        }
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

/// `container[index]`: a string's character, a list's or tuple's item, a dict's value.
fn item(container: &Value, index: &Value) -> Option<Value> {
    let position = |len: usize, i: i128| {
        let len = i128::try_from(len).ok()?;
        let at = if i < 0 { i + len } else { i };
        (0..len).contains(&at).then(|| usize::try_from(at).ok()).flatten()
    };
    match (container, index) {
        (Value::Str(s), Value::Int(i)) => {
            let chars: Vec<char> = s.chars().collect();
            Some(Value::Str(chars[position(chars.len(), *i)?].to_string()))
        }
        (Value::Container(display), Value::Int(i)) if matches!(display.kind, Kind::List | Kind::Tuple) => {
            let items = display.items.as_ref()?;
            from_repr(&items[position(items.len(), *i)?])
        }
        (Value::Container(display), Value::Int(_) | Value::Str(_)) if display.kind == Kind::Dict => {
            match dict_get(display, index)? {
                Entry::Held(value) => Some(value),
                Entry::Absent => None,
            }
        }
        _ => None,
    }
}

/// What a dict holds for a key.
enum Entry {
    Held(Value),
    Absent,
}

/// What a dict holds for `key`, where its keys are whole numbers and strings only.
fn dict_get(display: &Display, key: &Value) -> Option<Entry> {
    let wanted = key.repr()?;
    let mut found = None;
    for item in display.items.as_ref()? {
        let (k, v) = key_value(item)?;
        if !matches!(from_repr(&k), Some(Value::Int(_) | Value::Str(_))) {
            return None;
        }
        if k == wanted {
            found = Some(v);
        }
    }
    match found {
        Some(v) => from_repr(&v).map(Entry::Held),
        None => Some(Entry::Absent),
    }
}

/// A call of a builtin function or of a `str` or `dict` method whose result the values
/// fix.
fn call(node: Node<'_>, source: &[u8], env: &Env<'_>) -> Option<Value> {
    let function = node.child_by_field_name("function")?;
    let arguments = node.child_by_field_name("arguments")?;
    if arguments.kind() != "argument_list" {
        return None;
    }
    let nodes = children(arguments);
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

fn builtin(name: &str, args: &[Value]) -> Option<Value> {
    let ints = |values: &[Value]| -> Option<Vec<i128>> {
        values
            .iter()
            .map(|v| match v {
                Value::Int(n) => Some(*n),
                _ => None,
            })
            .collect()
    };
    // The items of the one container argument, as values.
    let items = || -> Option<Vec<Value>> {
        match args {
            [Value::Container(d)] if d.kind != Kind::Dict => d.items.as_ref()?.iter().map(|i| from_repr(i)).collect(),
            _ => None,
        }
    };
    match (name, args) {
        ("len", [Value::Str(s)]) => small(i128::try_from(s.chars().count()).ok()?),
        ("len", [Value::Container(d)]) => small(i128::try_from(d.items.as_ref()?.len()).ok()?),
        ("abs", [Value::Int(n)]) => small(n.abs()),
        ("str", [Value::Str(s)]) => Some(Value::Str(s.clone())),
        ("str", [Value::Int(n)]) => Some(Value::Str(n.to_string())),
        ("bool", [v]) => Some(Value::Bool(v.truth()?)),
        ("sum", [Value::Container(_)]) => small(ints(&items()?)?.iter().try_fold(0i128, |a, b| a.checked_add(*b))?),
        ("min" | "max", [_, _, ..]) => extreme(name, args.to_vec()),
        ("min" | "max", [Value::Container(_)]) => extreme(name, items()?),
        _ => None,
    }
}

/// The least or greatest of whole numbers, or of strings (empty: it raises).
fn extreme(name: &str, values: Vec<Value>) -> Option<Value> {
    let mut best: Option<Value> = None;
    for v in values {
        best = Some(match best {
            None if matches!(v, Value::Int(_) | Value::Str(_)) => v,
            None => return None,
            // The first of equal ones wins, as in Python.
            Some(b) => {
                if compare(&v, if name == "min" { "<" } else { ">" }, &b)? {
                    v
                } else {
                    b
                }
            }
        });
    }
    best
}

fn method_call(receiver: &Value, method: &str, args: &[Value]) -> Option<Value> {
    match (receiver, method, args) {
        (Value::Str(s), "upper", []) if s.is_ascii() => Some(Value::Str(s.to_ascii_uppercase())),
        (Value::Str(s), "lower", []) if s.is_ascii() => Some(Value::Str(s.to_ascii_lowercase())),
        (Value::Str(s), "strip", []) if s.is_ascii() && !s.bytes().any(|b| (0x1c..=0x1f).contains(&b)) => {
            Some(Value::Str(
                s.trim_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b')
                    .to_owned(),
            ))
        }
        (Value::Container(d), "get", [key, rest @ ..]) if d.kind == Kind::Dict && rest.len() <= 1 => {
            match dict_get(d, key)? {
                Entry::Held(found) => Some(found),
                Entry::Absent => Some(rest.first().cloned().unwrap_or(Value::None)),
            }
        }
        _ => None,
    }
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
    for part in children(node) {
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
                if part.child_by_field_name("type_conversion").is_some()
                    || part.child_by_field_name("format_specifier").is_some()
                {
                    return None;
                }
                let inner = children(part);
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
}
