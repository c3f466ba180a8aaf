//! Arguments that make sense for a real function's parameters, derived from what the
//! author wrote: the annotation first (`list[int]`, `dict[str, list[str]]`), then the
//! parameter's name (`arr` → list of ints, `word` → a word, `grid` → a matrix), then its
//! default value, refined by its docstring description (`sorted`, `binary`, `positive`).
//! Values that depend on another argument (`target` an element of `array`, `index` a
//! valid position in it, `start` a node of `graph`) are drawn after the containers.

use std::fmt::Write as _;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::module::{Param, param_doc};

/// What kind of value a parameter takes.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Int {
        lo: i64,
        hi: i64,
    },
    Float {
        lo: f64,
        hi: f64,
    },
    Bool,
    Text(Text),
    Bytes,
    List {
        item: Box<Kind>,
        sorted: bool,
    },
    /// A square matrix (rows of equal length).
    Matrix(Box<Kind>),
    Tuple(Vec<Kind>),
    Set(Box<Kind>),
    Dict(Box<Kind>, Box<Kind>),
    /// An adjacency dict: node → list of neighbours (or → {neighbour: weight}).
    Graph {
        int_nodes: bool,
        weighted: bool,
    },
    /// A function of one argument, or of two (a comparison, a reduction).
    Callable {
        arity: u8,
    },
    /// An element of the first list argument (a node of the first graph).
    Element,
    /// A valid index into the first list argument.
    Index {
        last: bool,
    },
    /// Where a walk starts or ends: a node of the first graph argument, else an index
    /// into the first list.
    Endpoint {
        last: bool,
    },
    /// A tree or a linked list built from a class of the package (`TreeNode`, `ListNode`);
    /// `class` is filled in once the class is found (see [`super::nodes`]).
    Nodes {
        shape: NodeShape,
        class: Option<String>,
    },
    /// The default value stays.
    Default,
    /// A class or protocol this generator cannot build (a tree node, a file).
    Unbuildable,
}

/// What a node class links to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeShape {
    /// `left` and `right`.
    Tree,
    /// `next`.
    Linked,
    /// Whichever the class has (an annotation that says only `Node`).
    Either,
}

/// Flavours of string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Text {
    Word,
    Sentence,
    Char,
    Binary,
    Digits,
    Brackets,
    Path,
    Url,
    Pattern,
    Separator,
    Roman,
}

/// The kind of one parameter. `hint` is a per-module override (see [`super::super::stdlib`]),
/// `doc` the function's docstring.
pub fn infer(param: &Param, doc: &str, hint: Option<Kind>) -> Kind {
    if let Some(kind) = hint {
        return kind;
    }
    let name = param.name.to_ascii_lowercase();
    let described = param_doc(doc, &param.name);
    let from_annotation = param.annotation.as_deref().map(annotation);
    let kind = match from_annotation {
        Some(Some(kind)) => refine(kind, &name),
        // An annotation naming a class we cannot build.
        Some(None) => return Kind::Unbuildable,
        None => by_name(&name).or_else(|| param.default.as_deref().and_then(literal)),
    };
    let Some(kind) = kind else {
        return if param.default.is_some() {
            Kind::Default
        } else {
            Kind::Int { lo: 0, hi: 9 }
        };
    };
    described_as(kind, &name, &described)
}

/// A type annotation as a kind; `None` for a class we cannot build. `Any` and friends
/// become `Unbuildable` only when the name says nothing either (see [`refine`]).
pub fn annotation(text: &str) -> Option<Kind> {
    let text = text.trim().trim_matches(['"', '\'']);
    // `X | None` and `Optional[X]`: pass an X.
    if let Some((left, right)) = split_top(text, '|') {
        let left_kind = annotation(left);
        return if left.trim() == "None" {
            annotation(right)
        } else {
            left_kind
        };
    }
    let (head, args) = match text.find('[') {
        Some(open) if text.ends_with(']') => (&text[..open], split_args(&text[open + 1..text.len() - 1])),
        _ => (text, Vec::new()),
    };
    let head = head.rsplit('.').next().unwrap_or(head);
    let arg = |i: usize| args.get(i).and_then(|a| annotation(a));
    let item = |i: usize| Box::new(arg(i).unwrap_or(Kind::Int { lo: 0, hi: 20 }));
    Some(match head {
        "int" => Kind::Int { lo: 0, hi: 20 },
        "float" | "Decimal" | "Fraction" => Kind::Float { lo: 0.0, hi: 10.0 },
        "bool" => Kind::Bool,
        "str" => Kind::Text(Text::Word),
        "bytes" | "bytearray" => Kind::Bytes,
        "Optional" | "Union" => return arg(0),
        "list" | "List" | "Sequence" | "MutableSequence" | "Iterable" | "Collection" | "Iterator" => match arg(0) {
            Some(Kind::List { item, .. }) => Kind::Matrix(item),
            _ => Kind::List {
                item: item(0),
                sorted: false,
            },
        },
        "tuple" | "Tuple" => {
            if args.len() == 2 && args[1].trim() == "..." {
                Kind::Tuple(vec![*item(0), *item(0), *item(0)])
            } else {
                Kind::Tuple(
                    args.iter()
                        .map(|a| annotation(a).unwrap_or(Kind::Int { lo: 0, hi: 9 }))
                        .collect(),
                )
            }
        }
        "set" | "Set" | "frozenset" => Kind::Set(item(0)),
        "dict" | "Dict" | "Mapping" => match (arg(0), arg(1)) {
            (Some(key), Some(Kind::List { .. } | Kind::Set(_))) => Kind::Graph {
                int_nodes: matches!(key, Kind::Int { .. }),
                weighted: false,
            },
            (Some(key), Some(Kind::Dict(..))) => Kind::Graph {
                int_nodes: matches!(key, Kind::Int { .. }),
                weighted: true,
            },
            (key, value) => Kind::Dict(
                Box::new(key.unwrap_or(Kind::Text(Text::Word))),
                Box::new(value.unwrap_or(Kind::Int { lo: 0, hi: 9 })),
            ),
        },
        "Callable" => Kind::Callable {
            arity: args
                .first()
                .map_or(1, |params| split_args(params.trim_matches(['[', ']'])).len().max(1)) as u8,
        },
        "callable" => Kind::Callable { arity: 1 },
        "Any" | "object" | "T" | "Hashable" | "Comparable" => Kind::Default,
        "TreeNode" | "BinaryTreeNode" | "BSTNode" => nodes(NodeShape::Tree, head),
        "ListNode" | "LinkedListNode" | "SinglyLinkedListNode" => nodes(NodeShape::Linked, head),
        "Node" => nodes(NodeShape::Either, head),
        _ => return None,
    })
}

fn nodes(shape: NodeShape, class: &str) -> Kind {
    Kind::Nodes {
        shape,
        class: Some(class.to_owned()),
    }
}

/// `Any`-typed parameters take their kind from the name, and a name can narrow a type.
fn refine(kind: Kind, name: &str) -> Option<Kind> {
    match kind {
        Kind::Default => by_name(name).or(Some(Kind::Int { lo: 0, hi: 9 })),
        Kind::Int { .. } => by_name(name)
            .filter(|k| {
                matches!(
                    k,
                    Kind::Int { .. } | Kind::Element | Kind::Index { .. } | Kind::Endpoint { .. }
                )
            })
            .or(Some(kind)),
        Kind::Text(_) => by_name(name).filter(|k| matches!(k, Kind::Text(_))).or(Some(kind)),
        Kind::List { item, sorted } => Some(Kind::List {
            item,
            sorted: sorted || name.contains("sorted"),
        }),
        other => Some(other),
    }
}

/// The docstring's description of the parameter narrows its kind.
fn described_as(kind: Kind, name: &str, described: &str) -> Kind {
    match kind {
        Kind::List { item, sorted } => Kind::List {
            item,
            sorted: sorted || described.contains("sorted") || name.contains("sorted"),
        },
        Kind::Int { lo, hi } if described.contains("positive") => Kind::Int { lo: lo.max(1), hi },
        Kind::Text(Text::Word) if described.contains("binary") => Kind::Text(Text::Binary),
        Kind::Text(Text::Word) if described.contains("digit") || described.contains("numeric") => {
            Kind::Text(Text::Digits)
        }
        Kind::Text(Text::Word) if described.contains("sentence") || described.contains("text") => {
            Kind::Text(Text::Sentence)
        }
        Kind::Text(Text::Word) if described.contains("bracket") || described.contains("parenthes") => {
            Kind::Text(Text::Brackets)
        }
        Kind::Text(Text::Word) if described.contains("roman") => Kind::Text(Text::Roman),
        other => other,
    }
}

/// What a parameter's name says about it.
fn by_name(name: &str) -> Option<Kind> {
    let int = |lo, hi| Some(Kind::Int { lo, hi });
    let text = |t| Some(Kind::Text(t));
    let ints = || Box::new(Kind::Int { lo: 0, hi: 30 });
    let words = || Box::new(Kind::Text(Text::Word));
    match name {
        "n" | "k" | "m" | "num" | "count" | "size" | "times" | "steps" | "depth" | "digit" | "level" | "r" => int(0, 8),
        "number" | "limit" | "amount" | "total" | "capacity" | "a" | "b" | "y" => int(1, 40),
        "length" | "width" | "height" | "maxlen" | "max_len" | "max_width" | "cols" | "colwidth" => int(4, 16),
        "base" => int(2, 10),
        "mod" | "modulus" | "prime" | "p" => int(5, 13),
        "exp" | "exponent" | "power" | "bits" => int(0, 6),
        "year" | "y1" | "y2" => int(1900, 2100),
        "month" => int(1, 12),
        "day" => int(1, 28),
        "hour" | "hh" => int(0, 23),
        "minute" | "mm" | "ss" => int(0, 59),
        "target" | "key" | "val" | "value" | "x" | "item" | "elem" | "element" | "needle" | "query" => {
            Some(Kind::Element)
        }
        "start" | "source" | "src" | "vertex" | "node" | "begin" => Some(Kind::Endpoint { last: false }),
        "end" | "sink" | "dest" | "destination" | "goal" | "stop" => Some(Kind::Endpoint { last: true }),
        "i" | "j" | "index" | "idx" | "pos" | "position" | "lo" | "low" | "left" | "startpos" => {
            Some(Kind::Index { last: false })
        }
        "hi" | "high" | "right" => Some(Kind::Index { last: true }),
        "s" | "string" | "word" | "name" | "token" | "first" | "second" | "word1" | "word2" | "w" | "str1" | "str2"
        | "key_word" | "keyword" => text(Text::Word),
        "text" | "sentence" | "line" | "message" | "msg" | "phrase" | "paragraph" | "plaintext" | "ciphertext" => {
            text(Text::Sentence)
        }
        "c" | "ch" | "char" | "letter" | "symbol" => text(Text::Char),
        "binary" | "bin" | "bits_str" | "bitstring" => text(Text::Binary),
        "digits_str" | "num_str" | "numstr" => text(Text::Digits),
        "paren" | "parens" | "brackets" | "expression" | "expr" => text(Text::Brackets),
        "path" | "filename" | "pathname" | "file" | "dirname" => text(Text::Path),
        "url" | "uri" | "link" => text(Text::Url),
        "pattern" | "pat" | "glob" => text(Text::Pattern),
        "sep" | "separator" | "delimiter" | "prefix" | "suffix" => text(Text::Separator),
        "roman" | "numeral" => text(Text::Roman),
        "array" | "arr" | "nums" | "numbers" | "values" | "data" | "items" | "lst" | "seq" | "sequence" | "xs"
        | "stack" | "queue" | "prices" | "weights" | "costs" | "coins" | "digits" | "heights" | "scores"
        | "elements" | "list1" | "list2" | "l1" | "l2" | "iterable" | "collection" | "nums1" | "nums2" => {
            Some(Kind::List {
                item: ints(),
                sorted: false,
            })
        }
        "heap" | "sorted_array" | "sorted_list" | "sorted_nums" => Some(Kind::List {
            item: ints(),
            sorted: true,
        }),
        "words" | "strings" | "names" | "strs" | "tokens" | "lines" | "possibilities" => Some(Kind::List {
            item: words(),
            sorted: false,
        }),
        "matrix" | "grid" | "mat" | "maze" | "image" | "rows" => {
            Some(Kind::Matrix(Box::new(Kind::Int { lo: 0, hi: 9 })))
        }
        "board" => Some(Kind::Matrix(Box::new(Kind::Text(Text::Char)))),
        "graph" | "adj" | "adjacency" | "adjacency_list" | "adj_list" | "neighbors" | "neighbours" => {
            Some(Kind::Graph {
                int_nodes: false,
                weighted: false,
            })
        }
        "edges" | "pairs" | "intervals" | "points" => Some(Kind::List {
            item: Box::new(Kind::Tuple(vec![
                Kind::Int { lo: 0, hi: 9 },
                Kind::Int { lo: 0, hi: 9 },
            ])),
            sorted: false,
        }),
        "func" | "fn" | "function" | "f" | "predicate" | "pred" | "callback" | "key_func" | "keyfunc" => {
            Some(Kind::Callable { arity: 1 })
        }
        "mycmp" | "cmp" | "compare" | "comparator" | "reducer" | "combine" => Some(Kind::Callable { arity: 2 }),
        "root" | "tree" | "bst" => Some(Kind::Nodes {
            shape: NodeShape::Tree,
            class: None,
        }),
        "head" | "list_head" | "linked_list" | "llist" => Some(Kind::Nodes {
            shape: NodeShape::Linked,
            class: None,
        }),
        "flag" | "reverse" | "strict" | "inplace" => Some(Kind::Bool),
        _ if name.starts_with("is_") || name.starts_with("use_") => Some(Kind::Bool),
        _ if name.ends_with("_list")
            || name.ends_with("_array")
            || name.starts_with("it")
            || (name.len() > 2 && name.ends_with('s') && !name.ends_with("ss")) =>
        {
            Some(Kind::List {
                item: ints(),
                sorted: false,
            })
        }
        _ if name.starts_with("num_") || name.starts_with("n_") || name.ends_with("_count") => int(0, 8),
        _ => None,
    }
}

/// Whether a parameter's default is a literal of `kind`'s type, so that passing a value
/// of `kind` instead keeps to what the author meant (a `None` default often stands for a
/// type of its own).
pub fn default_agrees(param: &Param, kind: &Kind) -> bool {
    let Some(default) = param.default.as_deref().and_then(literal) else {
        return false;
    };
    matches!(
        (default, kind),
        (
            Kind::Int { .. } | Kind::Float { .. },
            Kind::Int { .. } | Kind::Float { .. }
        ) | (Kind::Bool, Kind::Bool)
            | (Kind::Text(_), Kind::Text(_))
    )
}

/// The kind of a default value's literal.
fn literal(default: &str) -> Option<Kind> {
    let default = default.trim();
    if default.parse::<i64>().is_ok() {
        Some(Kind::Int { lo: 0, hi: 9 })
    } else if default.parse::<f64>().is_ok() {
        Some(Kind::Float { lo: 0.0, hi: 1.0 })
    } else if matches!(default, "True" | "False") {
        Some(Kind::Bool)
    } else if default.starts_with(['"', '\'']) {
        Some(Kind::Text(Text::Word))
    } else {
        None
    }
}

fn split_top(text: &str, separator: char) -> Option<(&str, &str)> {
    let mut depth = 0i32;
    for (i, c) in text.char_indices() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            _ if c == separator && depth == 0 => return Some((&text[..i], &text[i + 1..])),
            _ => {}
        }
    }
    None
}

fn split_args(mut text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    while let Some((head, rest)) = split_top(text, ',') {
        out.push(head.trim());
        text = rest;
    }
    if !text.trim().is_empty() {
        out.push(text.trim());
    }
    out
}

/// A generated value, rendered as a Python literal.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    Bytes(String),
    List(Vec<Value>),
    Tuple(Vec<Value>),
    Set(Vec<Value>),
    Dict(Vec<(Value, Value)>),
    /// Code written as is (a lambda).
    Code(String),
    /// Nodes of `class` holding `values`: a binary search tree in insertion order, or a
    /// linked list in order. Built by statements, not a literal (see [`Value::build`]).
    Nodes {
        class: String,
        tree: bool,
        values: Vec<i64>,
    },
}

impl Value {
    pub fn render(&self) -> String {
        let join = |items: &[Value]| items.iter().map(Value::render).collect::<Vec<_>>().join(", ");
        match self {
            Self::Int(n) => n.to_string(),
            Self::Float(x) => format!("{x:?}"),
            Self::Bool(b) => if *b { "True" } else { "False" }.to_owned(),
            Self::Str(s) => python_str(s),
            Self::Bytes(s) => format!("b{}", python_str(s)),
            Self::List(items) => format!("[{}]", join(items)),
            Self::Tuple(items) if items.len() == 1 => format!("({},)", items[0].render()),
            Self::Tuple(items) => format!("({})", join(items)),
            Self::Set(items) if items.is_empty() => "set()".to_owned(),
            Self::Set(items) => format!("{{{}}}", join(items)),
            Self::Dict(pairs) => {
                let pairs: Vec<String> = pairs
                    .iter()
                    .map(|(k, v)| format!("{}: {}", k.render(), v.render()))
                    .collect();
                format!("{{{}}}", pairs.join(", "))
            }
            Self::Code(code) => code.clone(),
            Self::Nodes { class, .. } => format!("{class}(0)"),
        }
    }

    /// Statements that bind `name` to the value: for nodes, the construction a person
    /// would write; for the rest, `name = literal`.
    pub fn build(&self, name: &str) -> String {
        let Self::Nodes { class, tree, values } = self else {
            return format!("{name} = {}\n", self.render());
        };
        let Some((first, rest)) = values.split_first() else {
            return format!("{name} = None\n");
        };
        let mut out = format!("{name} = {class}({first})\n");
        if *tree {
            // Binary-search-tree insertion: each value goes down from the root.
            let mut placed: Vec<(i64, String)> = vec![(*first, name.to_owned())];
            for &value in rest {
                let mut path = name.to_owned();
                loop {
                    let here = placed.iter().find(|(_, p)| *p == path).map_or(0, |(v, _)| *v);
                    let next = format!("{path}.{}", if value < here { "left" } else { "right" });
                    if placed.iter().any(|(_, p)| *p == next) {
                        path = next;
                    } else {
                        let _ = writeln!(out, "{next} = {class}({value})");
                        placed.push((value, next));
                        break;
                    }
                }
            }
        } else if !rest.is_empty() {
            let rest: Vec<String> = rest.iter().map(i64::to_string).collect();
            let _ = write!(
                out,
                "tail = {name}\nfor value in [{}]:\n    tail.next = {class}(value)\n    tail = tail.next\n",
                rest.join(", ")
            );
        }
        out
    }

    /// Whether the value is worth a variable of its own in the call (a container).
    pub fn is_container(&self) -> bool {
        matches!(self, Self::List(_) | Self::Dict(_) | Self::Set(_) | Self::Nodes { .. })
    }
}

fn python_str(s: &str) -> String {
    let escaped = s.replace('\\', "\\\\").replace('\'', "\\'").replace('\n', "\\n");
    format!("'{escaped}'")
}

const WORDS: [&str; 16] = [
    "apple",
    "level",
    "banana",
    "racecar",
    "hello",
    "world",
    "abba",
    "python",
    "tree",
    "noon",
    "cab",
    "stats",
    "mississippi",
    "code",
    "kayak",
    "data",
];
const SENTENCES: [&str; 8] = [
    "the quick brown fox jumps over the lazy dog",
    "hello world",
    "a man a plan a canal panama",
    "to be or not to be",
    "Python is fun to read",
    "  leading and trailing spaces  ",
    "one two three two one",
    "Data structures and algorithms",
];

/// Arguments drawn for one call, in parameter order (`None`: leave the default).
pub fn draw(kinds: &[Kind], rng: &mut ChaCha8Rng) -> Vec<Option<Value>> {
    let mut out: Vec<Option<Value>> = vec![None; kinds.len()];
    // Containers first: elements and indices are drawn from them.
    let dependent = |k: &Kind| matches!(k, Kind::Element | Kind::Index { .. } | Kind::Endpoint { .. });
    // The lists of one call have one length, its matrices one side (weights and values,
    // capacity and flow).
    let shape = Shape {
        len: rng.random_range(1..=7),
        side: rng.random_range(2..=4),
    };
    for (i, kind) in kinds.iter().enumerate().filter(|(_, k)| !dependent(k)) {
        out[i] = value(kind, shape, rng);
    }
    let graph = out.iter().flatten().find_map(|v| match v {
        Value::Dict(pairs) if pairs.iter().all(|(_, v)| v.is_container()) => {
            Some(pairs.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>())
        }
        _ => None,
    });
    let anchor = out.iter().flatten().find_map(|v| match v {
        Value::List(items) if items.iter().all(|i| !matches!(i, Value::List(_))) => Some(items.clone()),
        Value::List(rows) => Some((0..rows.len()).map(|i| Value::Int(i as i64)).collect()),
        Value::Dict(pairs) => Some(pairs.iter().map(|(k, _)| k.clone()).collect()),
        Value::Str(s) => Some(s.chars().map(|c| Value::Str(c.to_string())).collect()),
        _ => None,
    });
    for (i, kind) in kinds.iter().enumerate().filter(|(_, k)| dependent(k)) {
        let len = anchor.as_ref().map_or(0, Vec::len);
        out[i] = Some(match (kind, &anchor) {
            (Kind::Endpoint { last }, _) if graph.as_ref().is_some_and(|g| !g.is_empty()) => {
                let nodes = graph.as_ref().expect("checked");
                if *last {
                    nodes[nodes.len() - 1].clone()
                } else {
                    nodes[0].clone()
                }
            }
            (Kind::Endpoint { last: true } | Kind::Index { last: true }, _) if len > 0 => Value::Int(len as i64 - 1),
            (Kind::Endpoint { last: false }, _) => Value::Int(0),
            (Kind::Element, Some(items)) if !items.is_empty() && rng.random_bool(0.8) => {
                items[rng.random_range(0..items.len())].clone()
            }
            (Kind::Element, Some(items)) if matches!(items.first(), Some(Value::Str(_))) => {
                Value::Str(WORDS[rng.random_range(0..WORDS.len())][..1].to_owned())
            }
            (Kind::Index { last: false }, _) if len > 0 => Value::Int(rng.random_range(0..len) as i64),
            _ => Value::Int(rng.random_range(0..10)),
        });
    }
    out
}

#[derive(Debug, Clone, Copy)]
struct Shape {
    len: usize,
    side: usize,
}

fn value(kind: &Kind, shape: Shape, rng: &mut ChaCha8Rng) -> Option<Value> {
    // Items of a container draw their own lengths.
    let inner = Shape {
        len: rng.random_range(1..=4),
        ..shape
    };
    Some(match kind {
        Kind::Int { lo, hi } => Value::Int(rng.random_range(*lo..=*hi)),
        Kind::Float { lo, hi } => Value::Float((rng.random_range(*lo..=*hi) * 100.0).round() / 100.0),
        Kind::Bool => Value::Bool(rng.random_bool(0.5)),
        Kind::Text(text) => Value::Str(string(*text, rng)),
        Kind::Bytes => Value::Bytes(WORDS[rng.random_range(0..WORDS.len())].to_owned()),
        Kind::List { item, sorted } => {
            let mut items: Vec<Value> = (0..shape.len).filter_map(|_| value(item, inner, rng)).collect();
            if *sorted {
                items.sort_by(|a, b| {
                    a.render()
                        .len()
                        .cmp(&b.render().len())
                        .then(a.render().cmp(&b.render()))
                });
                if let Some(ints) = items
                    .iter()
                    .map(|v| if let Value::Int(n) = v { Some(*n) } else { None })
                    .collect::<Option<Vec<i64>>>()
                {
                    let mut ints = ints;
                    ints.sort_unstable();
                    items = ints.into_iter().map(Value::Int).collect();
                }
            }
            Value::List(items)
        }
        Kind::Matrix(item) => Value::List(
            (0..shape.side)
                .map(|_| Value::List((0..shape.side).filter_map(|_| value(item, inner, rng)).collect()))
                .collect(),
        ),
        Kind::Tuple(items) => Value::Tuple(items.iter().filter_map(|k| value(k, inner, rng)).collect()),
        Kind::Set(item) => {
            let mut items: Vec<Value> = (0..shape.len.min(5)).filter_map(|_| value(item, inner, rng)).collect();
            items.dedup();
            Value::Set(items)
        }
        Kind::Dict(key, item) => {
            let mut pairs: Vec<(Value, Value)> = Vec::new();
            for _ in 0..rng.random_range(1..=4) {
                let (Some(k), Some(v)) = (value(key, inner, rng), value(item, inner, rng)) else {
                    continue;
                };
                if !pairs.iter().any(|(seen, _)| *seen == k) {
                    pairs.push((k, v));
                }
            }
            Value::Dict(pairs)
        }
        Kind::Graph { int_nodes, weighted } => graph(*int_nodes, *weighted, rng),
        Kind::Callable { arity: 1 } => Value::Code(
            ["lambda x: x * 2", "lambda x: x % 2 == 0", "lambda x: -x", "abs", "str"][rng.random_range(0..5)]
                .to_owned(),
        ),
        Kind::Callable { .. } => Value::Code(
            ["lambda a, b: a + b", "lambda a, b: a - b", "lambda a, b: max(a, b)"][rng.random_range(0..3)].to_owned(),
        ),
        Kind::Nodes {
            shape: links,
            class: Some(class),
        } if *links != NodeShape::Either => {
            let mut values: Vec<i64> = Vec::new();
            for _ in 0..shape.len {
                let value = rng.random_range(1..=30);
                // A search tree holds each value once.
                if *links == NodeShape::Linked || !values.contains(&value) {
                    values.push(value);
                }
            }
            Value::Nodes {
                class: class.clone(),
                tree: *links == NodeShape::Tree,
                values,
            }
        }
        Kind::Nodes { .. }
        | Kind::Element
        | Kind::Index { .. }
        | Kind::Endpoint { .. }
        | Kind::Default
        | Kind::Unbuildable => {
            return None;
        }
    })
}

fn graph(int_nodes: bool, weighted: bool, rng: &mut ChaCha8Rng) -> Value {
    let n = rng.random_range(3..=5);
    let node = |i: usize| {
        if int_nodes {
            Value::Int(i as i64)
        } else {
            Value::Str(((b'A' + i as u8) as char).to_string())
        }
    };
    let pairs = (0..n)
        .map(|i| {
            let neighbours: Vec<usize> = (0..n).filter(|&j| j != i && rng.random_bool(0.4)).collect();
            let edges = if weighted {
                Value::Dict(
                    neighbours
                        .iter()
                        .map(|&j| (node(j), Value::Int(rng.random_range(1..=9))))
                        .collect(),
                )
            } else {
                Value::List(neighbours.iter().map(|&j| node(j)).collect())
            };
            (node(i), edges)
        })
        .collect();
    Value::Dict(pairs)
}

fn string(text: Text, rng: &mut ChaCha8Rng) -> String {
    let pick = |rng: &mut ChaCha8Rng, options: &[&str]| options[rng.random_range(0..options.len())].to_owned();
    match text {
        Text::Word => pick(rng, &WORDS),
        Text::Sentence => pick(rng, &SENTENCES),
        Text::Char => ((b'a' + rng.random_range(0..26u8)) as char).to_string(),
        Text::Binary => {
            let len = rng.random_range(1..=6);
            let mut s: String = (0..len).map(|_| if rng.random_bool(0.5) { '1' } else { '0' }).collect();
            s.insert(0, '1');
            s
        }
        Text::Digits => rng.random_range(0..100_000u32).to_string(),
        Text::Brackets => pick(rng, &["()[]{}", "([{}])", "(]", "((()))", "{[()()]}", "([)]", "(("]),
        Text::Path => pick(
            rng,
            &[
                "/usr/lib/python3/os.py",
                "docs/index.html",
                "./a/../b/c.txt",
                "/home/ada/",
                "notes.tar.gz",
                "a//b/./c",
            ],
        ),
        Text::Url => pick(
            rng,
            &[
                "https://example.com/path/page?q=1&lang=en#top",
                "http://user@host:8080/a/b;p?x=y",
                "ftp://ftp.example.org/files/",
                "https://www.python.org/doc/",
            ],
        ),
        Text::Pattern => pick(rng, &["*.py", "a?c", "[abc]*", "data_*.csv", "*"]),
        Text::Separator => pick(rng, &[", ", "-", "> ", "::", " "]),
        Text::Roman => pick(rng, &["XIV", "MCMXCIV", "III", "LVIII", "IX", "MMXXIV"]),
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    fn param(name: &str, annotation: Option<&str>, default: Option<&str>) -> Param {
        Param {
            name: name.into(),
            annotation: annotation.map(str::to_owned),
            default: default.map(str::to_owned),
            keyword_only: false,
        }
    }

    #[test]
    fn annotations_come_first() {
        let int_list = Kind::List {
            item: Box::new(Kind::Int { lo: 0, hi: 20 }),
            sorted: false,
        };
        assert_eq!(infer(&param("stuff", Some("list[int]"), None), "", None), int_list);
        assert_eq!(
            infer(&param("grid", Some("list[list[int]]"), None), "", None),
            Kind::Matrix(Box::new(Kind::Int { lo: 0, hi: 20 }))
        );
        assert_eq!(
            infer(&param("graph", Some("dict[str, list[str]]"), None), "", None),
            Kind::Graph {
                int_nodes: false,
                weighted: false
            }
        );
        assert_eq!(
            infer(&param("g", Some("dict[int, dict[int, float]]"), None), "", None),
            Kind::Graph {
                int_nodes: true,
                weighted: true
            }
        );
        assert_eq!(
            infer(&param("s", Some("str | None"), Some("None")), "", None),
            Kind::Text(Text::Word)
        );
        assert_eq!(
            infer(&param("root", Some("TreeNode | None"), None), "", None),
            Kind::Nodes {
                shape: NodeShape::Tree,
                class: Some("TreeNode".into())
            }
        );
        assert_eq!(infer(&param("words", Some("Trie"), None), "", None), Kind::Unbuildable);
        // `Any` defers to the name.
        assert_eq!(
            infer(&param("start", Some("Any"), None), "", None),
            Kind::Endpoint { last: false }
        );
        // A name narrows a plain `int`.
        assert_eq!(
            infer(&param("month", Some("int"), None), "", None),
            Kind::Int { lo: 1, hi: 12 }
        );
    }

    #[test]
    fn names_defaults_and_docstrings_fill_in_the_rest() {
        assert!(matches!(
            infer(&param("arr", None, None), "", None),
            Kind::List { sorted: false, .. }
        ));
        assert_eq!(infer(&param("word", None, None), "", None), Kind::Text(Text::Word));
        assert_eq!(infer(&param("n", None, None), "", None), Kind::Int { lo: 0, hi: 8 });
        assert!(matches!(infer(&param("matrix", None, None), "", None), Kind::Matrix(_)));
        assert!(matches!(
            infer(&param("graph", None, None), "", None),
            Kind::Graph { .. }
        ));
        assert_eq!(
            infer(&param("qq", None, Some("3")), "", None),
            Kind::Int { lo: 0, hi: 9 }
        );
        assert_eq!(infer(&param("qq", None, Some("None")), "", None), Kind::Default);
        let doc = "Search.\n\n    Args:\n        array: a sorted list of integers.\n        bits: a binary string.\n";
        assert!(matches!(
            infer(&param("array", Some("list[int]"), None), doc, None),
            Kind::List { sorted: true, .. }
        ));
        assert_eq!(
            infer(&param("bits", Some("str"), None), doc, None),
            Kind::Text(Text::Binary)
        );
        assert_eq!(
            infer(&param("h", None, None), "", Some(Kind::Float { lo: 0.0, hi: 1.0 })),
            Kind::Float { lo: 0.0, hi: 1.0 }
        );
    }

    #[test]
    fn only_defaults_of_the_same_type_are_replaced() {
        let int = Kind::Int { lo: 0, hi: 9 };
        assert!(default_agrees(&param("width", None, Some("70")), &int));
        assert!(!default_agrees(&param("errors", None, Some("None")), &int));
        assert!(!default_agrees(&param("sep", None, Some("' '")), &int));
        assert!(!default_agrees(&param("xs", None, None), &int));
        assert_eq!(
            annotation("Callable[[int, int], int]"),
            Some(Kind::Callable { arity: 2 })
        );
        assert_eq!(
            infer(&param("mycmp", None, None), "", None),
            Kind::Callable { arity: 2 }
        );
    }

    #[test]
    fn dependent_arguments_come_from_the_containers() {
        let kinds = [
            Kind::Element,
            Kind::List {
                item: Box::new(Kind::Int { lo: 0, hi: 30 }),
                sorted: true,
            },
            Kind::Index { last: true },
            Kind::Default,
        ];
        for seed in 0..20 {
            let values = draw(&kinds, &mut ChaCha8Rng::seed_from_u64(seed));
            let Some(Value::List(items)) = &values[1] else {
                panic!("{values:?}")
            };
            let ints: Vec<i64> = items
                .iter()
                .map(|v| if let Value::Int(n) = v { *n } else { panic!("{v:?}") })
                .collect();
            assert!(ints.is_sorted(), "{ints:?}");
            assert_eq!(values[2], Some(Value::Int(items.len() as i64 - 1)));
            assert_eq!(values[3], None);
        }
        let hits = (0..20)
            .filter(|&seed| {
                let values = draw(&kinds, &mut ChaCha8Rng::seed_from_u64(seed));
                matches!((&values[0], &values[1]), (Some(x), Some(Value::List(items))) if items.contains(x))
            })
            .count();
        assert!(hits >= 10, "targets are mostly elements of the array: {hits}/20");
    }

    #[test]
    fn trees_and_linked_lists_are_built_by_statements() {
        let tree = Value::Nodes {
            class: "TreeNode".into(),
            tree: true,
            values: vec![5, 3, 8, 4],
        };
        assert_eq!(
            tree.build("root"),
            "root = TreeNode(5)\nroot.left = TreeNode(3)\nroot.right = TreeNode(8)\nroot.left.right = TreeNode(4)\n"
        );
        let linked = Value::Nodes {
            class: "Node".into(),
            tree: false,
            values: vec![1, 2, 3],
        };
        assert_eq!(
            linked.build("head"),
            "head = Node(1)\ntail = head\nfor value in [2, 3]:\n    tail.next = Node(value)\n    tail = tail.next\n"
        );
        assert_eq!(Value::List(vec![]).build("xs"), "xs = []\n");
    }

    #[test]
    fn values_render_as_python() {
        let value = Value::Dict(vec![(
            Value::Str("it's".into()),
            Value::List(vec![
                Value::Tuple(vec![Value::Int(1)]),
                Value::Set(vec![]),
                Value::Float(0.5),
            ]),
        )]);
        assert_eq!(value.render(), "{'it\\'s': [(1,), set(), 0.5]}");
    }
}
