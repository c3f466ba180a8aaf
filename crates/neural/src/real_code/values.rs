//! Values for the kinds of [`super::arguments`], drawn from a seeded generator and written
//! as Python: literals, and the statements that build trees and linked lists. Values that
//! depend on another argument (`target` an element of `array`, `index` a valid position
//! in it, `start` a node of `graph`) are drawn after the containers.

use std::fmt::Write as _;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::arguments::{Kind, NodeShape, Text};

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
            // Inside a literal (a list of nodes): one node each.
            Self::Nodes { class, values, .. } => format!("{class}({})", values.first().copied().unwrap_or(0)),
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
