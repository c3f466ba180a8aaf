//! Arguments that make sense for a real function's parameters, derived from what the
//! author wrote: the annotation first (`list[int]`, `dict[str, list[str]]`), then the
//! parameter's name (`arr` → list of ints, `word` → a word, `grid` → a matrix), then its
//! default value, refined by its docstring description (`sorted`, `binary`, `positive`).
//! The values themselves are drawn in [`super::values`].

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

#[cfg(test)]
mod tests {
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
}
