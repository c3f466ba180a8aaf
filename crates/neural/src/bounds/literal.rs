//! The repr a literal's text fixes (`[3, 4]`, `'ada'`, `{}`, `-1.5`, a lambda), written as Python
//! writes it, without running anything. Only what can be told exactly from the text:
//! sets (hash order), bytes, f-strings, complex numbers and non-ASCII symbols are left
//! to the model.

use std::fmt::Write as _;

use tree_sitter::Node;

/// Longer reprs are left to the model (the tracer cuts very long ones).
const MAX_REPR: usize = 200;
/// The tracer writes containers past this many items its own way.
const MAX_ITEMS: usize = 64;

/// A statement `NAME = literal` (no annotation, one target): the name, and the repr
/// its literal fixes ([`repr`]).
pub(super) fn assignment<'s>(statement: Node<'_>, source: &'s [u8]) -> Option<(&'s str, String)> {
    let assignment = statement
        .named_child(0)
        .filter(|a| statement.kind() == "expression_statement" && a.kind() == "assignment")?;
    if assignment.child_by_field_name("type").is_some() {
        return None;
    }
    let name = assignment
        .child_by_field_name("left")
        .filter(|l| l.kind() == "identifier")?;
    let repr = repr(assignment.child_by_field_name("right")?, source)?;
    Some((name.utf8_text(source).ok()?, repr))
}

/// The repr of the literal `node`, when its text alone fixes it.
pub(super) fn repr(node: Node<'_>, source: &[u8]) -> Option<String> {
    let text = node.utf8_text(source).ok()?;
    let repr = match node.kind() {
        "integer" => integer(text)?.to_string(),
        "float" => float_repr(parse_float(text)?)?,
        "true" => "True".to_owned(),
        "false" => "False".to_owned(),
        "none" => "None".to_owned(),
        "string" => str_repr(&string_value(text)?)?,
        "concatenated_string" => {
            let mut value = String::new();
            for part in named_children(node) {
                value.push_str(&string_value(part.utf8_text(source).ok()?)?);
            }
            str_repr(&value)?
        }
        "unary_operator" => {
            let operand = node.child_by_field_name("argument")?;
            let sign = node.child_by_field_name("operator")?.utf8_text(source).ok()?;
            match (sign, operand.kind()) {
                ("-", "integer") => (-integer(operand.utf8_text(source).ok()?)?).to_string(),
                ("-", "float") => float_repr(-parse_float(operand.utf8_text(source).ok()?)?)?,
                ("+", "integer" | "float") => repr(operand, source)?,
                _ => return None,
            }
        }
        "parenthesized_expression" => {
            let inner = named_children(node);
            match inner.as_slice() {
                [only] => repr(*only, source)?,
                _ => return None,
            }
        }
        // A function's repr names its `__qualname__` (`<function <lambda>>`, `<function
        // make.<locals>.<lambda>>`), as the tracer writes it without its address.
        "lambda" => format!("<function {}>", qualified_name(node, source)),
        "list" => format!("[{}]", items(node, source)?.join(", ")),
        "tuple" => match items(node, source)?.as_slice() {
            [one] => format!("({one},)"),
            all => format!("({})", all.join(", ")),
        },
        "dictionary" => {
            let mut keys = Vec::new();
            let mut pairs = Vec::new();
            for pair in named_children(node) {
                if pair.kind() != "pair" {
                    return None;
                }
                let key = repr(pair.child_by_field_name("key")?, source)?;
                let value = repr(pair.child_by_field_name("value")?, source)?;
                // A repeated key keeps its first place and its last value: left to the model.
                if keys.contains(&key) {
                    return None;
                }
                pairs.push(format!("{key}: {value}"));
                keys.push(key);
            }
            if pairs.len() > MAX_ITEMS {
                return None;
            }
            format!("{{{}}}", pairs.join(", "))
        }
        _ => return None,
    };
    (repr.len() <= MAX_REPR).then_some(repr)
}

/// A function's, class's or lambda's `__qualname__`: the enclosing classes' and
/// functions' names (a function's followed by `<locals>`), then its own.
pub(super) fn qualified_name(node: Node<'_>, source: &[u8]) -> String {
    let own = match node.kind() {
        "lambda" => "<lambda>".to_owned(),
        _ => name_text(node, source).to_owned(),
    };
    let mut parts = vec![own];
    let mut at = node.parent();
    while let Some(parent) = at {
        match parent.kind() {
            "function_definition" => {
                parts.push("<locals>".to_owned());
                parts.push(name_text(parent, source).to_owned());
            }
            "lambda" => {
                parts.push("<locals>".to_owned());
                parts.push("<lambda>".to_owned());
            }
            "class_definition" => parts.push(name_text(parent, source).to_owned()),
            _ => {}
        }
        at = parent.parent();
    }
    parts.reverse();
    parts.join(".")
}

/// The text of `node`'s `name` field, or nothing.
fn name_text<'s>(node: Node<'_>, source: &'s [u8]) -> &'s str {
    node.child_by_field_name("name")
        .and_then(|n| n.utf8_text(source).ok())
        .unwrap_or_default()
}

fn named_children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect()
}

/// The reprs of a list's or tuple's items.
fn items(node: Node<'_>, source: &[u8]) -> Option<Vec<String>> {
    let items = named_children(node);
    if items.len() > MAX_ITEMS {
        return None;
    }
    items.into_iter().map(|item| repr(item, source)).collect()
}

fn integer(text: &str) -> Option<i128> {
    let digits: String = text.chars().filter(|c| *c != '_').collect();
    let lower = digits.to_ascii_lowercase();
    let (radix, body) = match lower.get(..2) {
        Some("0x") => (16, &lower[2..]),
        Some("0o") => (8, &lower[2..]),
        Some("0b") => (2, &lower[2..]),
        _ => (10, lower.as_str()),
    };
    // `j` (imaginary) and `l` (Python 2) are not plain integers.
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    i128::from_str_radix(body, radix).ok()
}

fn parse_float(text: &str) -> Option<f64> {
    let digits: String = text.chars().filter(|c| *c != '_').collect();
    if digits.ends_with(['j', 'J']) {
        return None;
    }
    digits.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Python's `repr(float)`: the shortest digits that read back the same value, fixed-point
/// from 1e-4 up to 1e16, else an exponent with a sign and at least two digits.
pub(super) fn float_repr(value: f64) -> Option<String> {
    if !value.is_finite() {
        return None;
    }
    let scientific = format!("{value:e}");
    let (mantissa, exponent) = scientific.split_once('e')?;
    let exponent: i32 = exponent.parse().ok()?;
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    // The value is 0.DIGITS × 10^point.
    let point = exponent + 1;
    let len = i32::try_from(digits.len()).ok()?;
    let body = if (-3..=16).contains(&point) {
        if point <= 0 {
            format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
        } else if point < len {
            let (whole, fraction) = digits.split_at(point as usize);
            format!("{whole}.{fraction}")
        } else {
            format!("{digits}{}.0", "0".repeat((point - len) as usize))
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{first}{fraction}e{sign}{:02}", exponent.abs())
    };
    Some(format!("{sign}{body}"))
}

/// The value of one string literal's text (`'a\n'`, `r"\d"`, `'''x'''`); `None` for bytes,
/// f-strings and escapes this does not read.
fn string_value(text: &str) -> Option<String> {
    let quote_at = text.find(['\'', '"'])?;
    let prefix = text[..quote_at].to_ascii_lowercase();
    if !prefix.chars().all(|c| c == 'r' || c == 'u') {
        return None;
    }
    let raw = prefix.contains('r');
    let body = &text[quote_at..];
    let quote = if body.starts_with("'''") || body.starts_with("\"\"\"") {
        &body[..3]
    } else {
        &body[..1]
    };
    let inner = body.strip_prefix(quote)?.strip_suffix(quote)?;
    if raw {
        return Some(inner.to_owned());
    }
    let mut value = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            value.push(c);
            continue;
        }
        let escaped = chars.next()?;
        match escaped {
            '\n' => {}
            '\\' | '\'' | '"' => value.push(escaped),
            'n' => value.push('\n'),
            't' => value.push('\t'),
            'r' => value.push('\r'),
            'a' => value.push('\u{7}'),
            'b' => value.push('\u{8}'),
            'f' => value.push('\u{c}'),
            'v' => value.push('\u{b}'),
            'x' => {
                let hex: String = [chars.next()?, chars.next()?].iter().collect();
                value.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
            }
            '0'..='7' => {
                let mut octal = escaped.to_string();
                while octal.len() < 3 && chars.peek().is_some_and(|d| ('0'..='7').contains(d)) {
                    octal.push(chars.next()?);
                }
                value.push(char::from_u32(u32::from_str_radix(&octal, 8).ok()?)?);
            }
            // `\u`, `\U`, `\N{…}`: left to the model.
            'u' | 'U' | 'N' => return None,
            // An unknown escape keeps its backslash.
            other => {
                value.push('\\');
                value.push(other);
            }
        }
    }
    Some(value)
}

/// Python's `repr(str)`: single quotes unless only double quotes avoid escaping, the
/// usual escapes, `\xNN` for other control characters. Characters outside ASCII that are
/// not letters or digits are left to the model (Python's printability rules).
pub(super) fn str_repr(value: &str) -> Option<String> {
    let quote = if value.contains('\'') && !value.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(value.len() + 2);
    out.push(quote);
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_ascii() || c.is_alphanumeric() => out.push(c),
            _ => return None,
        }
    }
    out.push(quote);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn literal(code: &str) -> Option<String> {
        let tree = replayground_exec::python::parse(code).expect("parses");
        let statement = tree.root_node().named_child(0).expect("a statement");
        let expression = statement.named_child(0).expect("an expression");
        let value = expression.child_by_field_name("right").unwrap_or(expression);
        repr(value, code.as_bytes())
    }

    #[test]
    fn literals_are_written_as_python_writes_them() {
        let cases = [
            ("x = 0", "0"),
            ("x = -3", "-3"),
            ("x = 1_000", "1000"),
            ("x = 0xff", "255"),
            ("x = 2.50", "2.5"),
            ("x = 1.", "1.0"),
            ("x = .5", "0.5"),
            ("x = 1e16", "1e+16"),
            ("x = 1e15", "1000000000000000.0"),
            ("x = 0.0001", "0.0001"),
            ("x = 0.00001", "1e-05"),
            ("x = -0.0", "-0.0"),
            ("x = 1.5e-7", "1.5e-07"),
            ("x = 'ada'", "'ada'"),
            ("x = \"it's\"", "\"it's\""),
            ("x = 'say \"hi\"'", "'say \"hi\"'"),
            ("x = 'both \\' \"'", "'both \\' \"'"),
            ("x = 'a\\nb\\tc'", "'a\\nb\\tc'"),
            ("x = r'\\d+'", "'\\\\d+'"),
            ("x = 'ab' 'cd'", "'abcd'"),
            ("x = '\\x01'", "'\\x01'"),
            ("x = 'café'", "'café'"),
            ("x = [3, 4]", "[3, 4]"),
            ("x = []", "[]"),
            ("x = {}", "{}"),
            ("x = ()", "()"),
            ("x = (1,)", "(1,)"),
            ("x = (1, 'a', None)", "(1, 'a', None)"),
            (
                "x = {'a': [1, 2], 'b': (True, False)}",
                "{'a': [1, 2], 'b': (True, False)}",
            ),
            ("x = (5)", "5"),
            (
                "OPS = {'+': lambda a, b: a + b, '-': lambda a, b: a - b}",
                "{'+': <function <lambda>>, '-': <function <lambda>>}",
            ),
            ("x = [lambda: 1]", "[<function <lambda>>]"),
        ];
        for (code, expected) in cases {
            assert_eq!(literal(code).as_deref(), Some(expected), "{code}");
        }
    }

    #[test]
    fn a_lambda_is_named_by_where_it_is_written() {
        let code = "def make():\n    return [lambda: 1]\n";
        let tree = replayground_exec::python::parse(code).expect("parses");
        let mut stack = vec![tree.root_node()];
        let list = std::iter::from_fn(|| {
            let node = stack.pop()?;
            stack.extend(named_children(node));
            Some(node)
        })
        .find(|n| n.kind() == "list")
        .expect("the list");
        assert_eq!(
            repr(list, code.as_bytes()).as_deref(),
            Some("[<function make.<locals>.<lambda>>]")
        );
    }

    #[test]
    fn what_the_text_cannot_fix_is_left_to_the_model() {
        for code in [
            "x = {1, 2}",
            "x = b'a'",
            "x = f'{y}'",
            "x = 1j",
            "x = [y]",
            "x = {'a': 1, 'a': 2}",
            "x = '\\u00e9'",
            "x = '→'",
            "x = [*y]",
            "x = y + 1",
        ] {
            assert_eq!(literal(code), None, "{code}");
        }
        let long = format!("x = '{}'", "a".repeat(300));
        assert_eq!(literal(&long), None);
    }
}
