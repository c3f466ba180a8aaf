//! Plain values read from reprs and literals, and what Python's operators, builtins and
//! `str`/`list`/`dict` methods make of them ([`super::evaluate`] reads the expressions).
//! Whatever could raise, round, or come out longer than the tracer writes whole is `None`.

use replayground_shared::state::STATE_REPR_CHARS;

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

    /// The repr Python writes for the value, where it is known and the tracer writes it
    /// whole.
    pub(super) fn repr(&self) -> Option<String> {
        let repr = match self {
            Self::Int(n) => n.to_string(),
            Self::Str(s) => literal::str_repr(s)?,
            Self::Bool(true) => "True".to_owned(),
            Self::Bool(false) => "False".to_owned(),
            Self::None => "None".to_owned(),
            Self::Container(display) => {
                let items = display.items.as_ref().filter(|items| items.len() <= MAX_ITEMS)?;
                let joined = items.join(", ");
                match (display.kind, items.len()) {
                    (Kind::List, _) => format!("[{joined}]"),
                    (Kind::Tuple, 1) => format!("({joined},)"),
                    (Kind::Tuple, _) => format!("({joined})"),
                    (Kind::Set, 0) => "set()".to_owned(),
                    (Kind::Dict | Kind::Set, _) => format!("{{{joined}}}"),
                }
            }
            Self::Object => return None,
        };
        (repr.chars().count() < STATE_REPR_CHARS).then_some(repr)
    }

    /// A list or tuple of these items' reprs.
    pub(super) fn sequence(kind: Kind, items: Vec<String>) -> Option<Self> {
        (items.len() <= MAX_ITEMS).then_some(Self::Container(Display {
            kind,
            empty: items.is_empty(),
            items: Some(items),
        }))
    }

    /// The reprs iterating the value yields: a string's characters, a list's, tuple's or
    /// set's items, a dict's keys (in the order its repr shows them).
    pub(super) fn iterated(&self) -> Option<Vec<String>> {
        match self {
            Self::Container(d) if d.kind == Kind::Dict => {
                d.items.as_ref()?.iter().map(|i| key_value(i).map(|(k, _)| k)).collect()
            }
            Self::Container(d) => d.items.clone(),
            Self::Str(_) => self.sequence_items().map(|(_, items)| items),
            _ => None,
        }
    }

    /// The items of a string (its characters), list or tuple, as reprs.
    fn sequence_items(&self) -> Option<(Kind, Vec<String>)> {
        match self {
            Self::Str(s) => Some((
                Kind::Tuple,
                s.chars()
                    .map(|c| Self::Str(c.to_string()).repr())
                    .collect::<Option<_>>()?,
            )),
            Self::Container(d) if matches!(d.kind, Kind::List | Kind::Tuple) => Some((d.kind, d.items.clone()?)),
            _ => None,
        }
    }
}

/// The tracer writes containers of more items its own way.
const MAX_ITEMS: usize = 64;

/// `value[start:stop:step]` of a string, list or tuple (Python's rules for bounds past the
/// ends and for negative steps).
pub(super) fn slice(value: &Value, start: Option<i128>, stop: Option<i128>, step: Option<i128>) -> Option<Value> {
    let step = step.unwrap_or(1);
    if step == 0 {
        return None;
    }
    let chars: Vec<char>;
    let (kind, items): (Option<Kind>, Vec<String>) = match value {
        Value::Str(s) => {
            chars = s.chars().collect();
            (None, chars.iter().map(char::to_string).collect())
        }
        Value::Container(d) if matches!(d.kind, Kind::List | Kind::Tuple) => (Some(d.kind), d.items.clone()?),
        _ => return None,
    };
    let len = i128::try_from(items.len()).ok()?;
    let clamp = |bound: Option<i128>, default: i128| -> i128 {
        match bound {
            None => default,
            Some(b) if b < 0 => (b + len).max(if step < 0 { -1 } else { 0 }),
            Some(b) => b.min(if step < 0 { len - 1 } else { len }),
        }
    };
    let (first, last) = if step > 0 {
        (clamp(start, 0), clamp(stop, len))
    } else {
        (clamp(start, len - 1), clamp(stop, -1))
    };
    let mut picked = Vec::new();
    let mut at = first;
    while (step > 0 && at < last) || (step < 0 && at > last) {
        picked.push(items[usize::try_from(at).ok()?].clone());
        at += step;
    }
    match kind {
        None => text_value(picked.concat()),
        Some(kind) => Value::sequence(kind, picked),
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

pub(super) fn small(n: i128) -> Option<Value> {
    (n.abs() <= MAX_INT).then_some(Value::Int(n))
}

pub(super) fn text_value(s: String) -> Option<Value> {
    (s.chars().count() <= MAX_TEXT).then_some(Value::Str(s))
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
        (Value::Container(left), "+", Value::Container(right))
            if left.kind == right.kind && matches!(left.kind, Kind::List | Kind::Tuple) =>
        {
            let mut items = left.items.clone()?;
            items.extend(right.items.clone()?);
            Value::sequence(left.kind, items)
        }
        (Str(text), "*", Int(times)) | (Int(times), "*", Str(text)) => {
            let times = usize::try_from((*times).max(0)).ok()?;
            (text.chars().count().checked_mul(times)? <= MAX_TEXT).then(|| Value::Str(text.repeat(times)))
        }
        _ => None,
    }
}

/// Whether `a OP b` holds, where builtin values decide it without raising.
pub(super) fn compare(a: &Value, op: &str, b: &Value) -> Option<bool> {
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
pub(super) fn contains(haystack: &Value, needle: &Value) -> Option<bool> {
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

/// `container[index]`: a string's character, a list's or tuple's item, a dict's value.
pub(super) fn item(container: &Value, index: &Value) -> Option<Value> {
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

pub(super) fn builtin(name: &str, args: &[Value]) -> Option<Value> {
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
        ("list" | "tuple", [value]) => {
            let items = value.iterated()?;
            Value::sequence(if name == "list" { Kind::List } else { Kind::Tuple }, items)
        }
        ("sorted", [value]) => {
            let (_, items) = value.sequence_items()?;
            let mut values: Vec<(Value, String)> = items
                .iter()
                .map(|i| from_repr(i))
                .collect::<Option<Vec<_>>>()?
                .into_iter()
                .zip(items)
                .collect();
            let ints = values.iter().all(|(v, _)| matches!(v, Value::Int(_)));
            let strs = values.iter().all(|(v, _)| matches!(v, Value::Str(_)));
            if !(ints || strs) {
                return None;
            }
            // Stable, as Python's.
            values.sort_by(|(a, _), (b, _)| match (a, b) {
                (Value::Int(x), Value::Int(y)) => x.cmp(y),
                (Value::Str(x), Value::Str(y)) => x.cmp(y),
                _ => std::cmp::Ordering::Equal,
            });
            Value::sequence(Kind::List, values.into_iter().map(|(_, r)| r).collect())
        }
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

pub(super) fn method_call(receiver: &Value, method: &str, args: &[Value]) -> Option<Value> {
    match (receiver, method, args) {
        (Value::Str(s), "upper", []) if s.is_ascii() => Some(Value::Str(s.to_ascii_uppercase())),
        (Value::Str(s), "lower", []) if s.is_ascii() => Some(Value::Str(s.to_ascii_lowercase())),
        (Value::Str(s), "strip", []) if s.is_ascii() && !s.bytes().any(|b| (0x1c..=0x1f).contains(&b)) => {
            Some(Value::Str(
                s.trim_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b')
                    .to_owned(),
            ))
        }
        (Value::Str(sep), "join", [Value::Container(d)]) if matches!(d.kind, Kind::List | Kind::Tuple) => {
            let parts: Vec<String> = d
                .items
                .as_ref()?
                .iter()
                .map(|i| match from_repr(i)? {
                    Value::Str(part) => Some(part),
                    _ => None,
                })
                .collect::<Option<_>>()?;
            text_value(parts.join(sep))
        }
        (Value::Str(s), "split", []) if s.is_ascii() && !s.bytes().any(|b| (0x1c..=0x1f).contains(&b)) => {
            let words = s
                .split(|c: char| c.is_ascii_whitespace() || c == '\x0b')
                .filter(|w| !w.is_empty());
            Value::sequence(
                Kind::List,
                words.map(|w| Value::Str(w.to_owned()).repr()).collect::<Option<_>>()?,
            )
        }
        (Value::Str(s), "split", [Value::Str(sep)]) if !sep.is_empty() => Value::sequence(
            Kind::List,
            s.split(sep.as_str())
                .map(|w| Value::Str(w.to_owned()).repr())
                .collect::<Option<_>>()?,
        ),
        (Value::Str(s), "replace", [Value::Str(old), Value::Str(new)]) if !old.is_empty() => {
            text_value(s.replace(old.as_str(), new))
        }
        (Value::Str(s), "startswith", [Value::Str(prefix)]) => Some(Value::Bool(s.starts_with(prefix.as_str()))),
        (Value::Str(s), "endswith", [Value::Str(suffix)]) => Some(Value::Bool(s.ends_with(suffix.as_str()))),
        (Value::Container(d), "get", [key, rest @ ..]) if d.kind == Kind::Dict && rest.len() <= 1 => {
            match dict_get(d, key)? {
                Entry::Held(found) => Some(found),
                Entry::Absent => Some(rest.first().cloned().unwrap_or(Value::None)),
            }
        }
        _ => None,
    }
}
