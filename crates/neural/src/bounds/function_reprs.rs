//! The names a function's repr can carry. The tracer writes a function as
//! `<function QUALNAME>`, and a function the program defines carries the `__qualname__`
//! its place in the text gives it: `make.<locals>.bump` for a `def` inside `make`,
//! `Shape.area` for a method, `<lambda>` parts for lambdas. A model that has not learnt
//! that writes `make.bump` or `<function bump>`; these bounds refuse both, and nothing
//! else: a name whose first part is not one of the program's module-level functions
//! (a method's, a library's) is not judged.

use std::collections::HashSet;

use tree_sitter::Node;

/// What starts the name in a repr.
const OPENER: &[u8] = b"<function ";

/// The comprehensions CPython 3.11 compiles as functions, by their code's names, and
/// whether 3.12 and later inline them (all but the generator expression; both forms are
/// kept).
const COMPREHENSIONS: [(&str, &str, bool); 4] = [
    ("list_comprehension", "<listcomp>", true),
    ("set_comprehension", "<setcomp>", true),
    ("dictionary_comprehension", "<dictcomp>", true),
    ("generator_expression", "<genexpr>", false),
];

/// The program's functions' qualified names, where the text decides them.
#[derive(Debug, Clone, Default)]
pub(super) struct FunctionNames {
    /// Every function's and lambda's `__qualname__`, as CPython 3.11 and 3.12+ compile it.
    qualnames: HashSet<String>,
    /// The module-level `def`s' names: a qualname starting `NAME.` is one of the program's.
    roots: HashSet<String>,
    /// Names only nested `def`s have (no module-level one, no import): no function prints
    /// as that name alone.
    nested_only: HashSet<String>,
}

impl FunctionNames {
    /// The names, or `None` where the text can rename a function or a scope
    /// (`__qualname__`, `FunctionType`, a `global` declaration of a nested function).
    pub(super) fn of(root: Node<'_>, source: &[u8], declared: &HashSet<String>) -> Option<Self> {
        let code = std::str::from_utf8(source).ok()?;
        if ["__qualname__", "FunctionType", "__repr__"]
            .iter()
            .any(|t| code.contains(t))
        {
            return None;
        }
        let mut names = Self::default();
        let (mut nested, mut imported) = (HashSet::new(), HashSet::new());
        // Each node with its enclosing qualname prefix as 3.11 and as 3.12+ writes it.
        let mut stack: Vec<(Node<'_>, String, String)> = vec![(root, String::new(), String::new())];
        while let Some((node, old, new)) = stack.pop() {
            let name = node
                .child_by_field_name("name")
                .and_then(|n| n.utf8_text(source).ok())
                .unwrap_or_default();
            let kind = node.kind();
            let (inner_old, inner_new) = match kind {
                "function_definition" | "lambda" => {
                    let name = if kind == "lambda" { "<lambda>" } else { name };
                    if kind == "function_definition" {
                        if declared.contains(name) {
                            return None;
                        }
                        if old.is_empty() {
                            names.roots.insert(name.to_owned());
                        } else {
                            nested.insert(name.to_owned());
                        }
                    }
                    names.qualnames.insert(format!("{old}{name}"));
                    names.qualnames.insert(format!("{new}{name}"));
                    (format!("{old}{name}.<locals>."), format!("{new}{name}.<locals>."))
                }
                "class_definition" => (format!("{old}{name}."), format!("{new}{name}.")),
                _ => match COMPREHENSIONS.iter().find(|(k, _, _)| *k == kind) {
                    Some((_, code_name, true)) => (format!("{old}{code_name}."), new),
                    Some((_, code_name, false)) => (format!("{old}{code_name}."), format!("{new}{code_name}.")),
                    None => (old, new),
                },
            };
            if matches!(kind, "import_statement" | "import_from_statement") {
                imported.extend(super::effects::identifiers(node, source));
            }
            let mut cursor = node.walk();
            stack.extend(
                node.named_children(&mut cursor)
                    .map(|c| (c, inner_old.clone(), inner_new.clone())),
            );
        }
        names.nested_only = nested
            .into_iter()
            .filter(|n| !names.roots.contains(n) && !imported.contains(n))
            .collect();
        Some(names)
    }

    /// Whether a function repr's name, written so far (`ended`: whole), can be one the
    /// program's functions carry.
    fn admits(&self, name: &[u8], ended: bool) -> bool {
        let Ok(name) = std::str::from_utf8(name) else {
            return true;
        };
        match name.split_once('.') {
            Some((root, _)) if self.roots.contains(root) => self
                .qualnames
                .iter()
                .any(|q| if ended { q == name } else { q.starts_with(name) }),
            Some(_) => true,
            None => !ended || !self.nested_only.contains(name),
        }
    }
}

/// Follows a value as it is written, byte by byte, for the names of the function reprs
/// in it.
#[derive(Debug, Clone, Default)]
pub(super) struct FunctionRepr {
    /// The last bytes written, enough to see [`OPENER`].
    recent: Vec<u8>,
    /// The name after the last opener while it is being written, and how many `<` it
    /// has opened (`<locals>`, `<lambda>`).
    name: Option<(Vec<u8>, usize)>,
}

impl FunctionRepr {
    /// Takes the next byte of the value; false where it makes a function's name that no
    /// function of the program carries.
    pub(super) fn feed(&mut self, b: u8, names: Option<&FunctionNames>) -> bool {
        let mut admitted = true;
        if let (Some((name, open)), Some(names)) = (self.name.as_mut(), names) {
            let ends = match b {
                b'<' => {
                    *open += 1;
                    false
                }
                b'>' if *open > 0 => {
                    *open -= 1;
                    false
                }
                b'>' | b' ' | b',' => true,
                _ => false,
            };
            if ends {
                admitted = names.admits(name, true);
                self.name = None;
            } else {
                name.push(b);
                // A repr the tracer cut ends in `...` (the closing quote is not fed here).
                let mut kept = name.as_slice();
                while let Some(shorter) = kept.strip_suffix(b".") {
                    kept = shorter;
                }
                admitted = names.admits(kept, false);
            }
        }
        if self.recent.len() == OPENER.len() {
            self.recent.remove(0);
        }
        self.recent.push(b);
        if self.recent == OPENER {
            self.name = Some((Vec::new(), 0));
        }
        admitted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(code: &str) -> FunctionNames {
        let tree = replayground_exec::python::parse(code).expect("parses");
        FunctionNames::of(tree.root_node(), code.as_bytes(), &HashSet::new()).expect("bounded")
    }

    fn admits(names: &FunctionNames, value: &str) -> bool {
        let mut repr = FunctionRepr::default();
        value.bytes().all(|b| repr.feed(b, Some(names)))
    }

    const CODE: &str = "\
from dataclasses import dataclass
def make_counter(start):
    def tick():
        return start
    adders = [lambda x: x + n for n in range(3)]
    return tick, adders
class Shape:
    def area(self):
        return 0
f = lambda: 1
";

    #[test]
    fn a_nested_function_prints_with_its_enclosing_locals() {
        let names = names(CODE);
        assert!(admits(&names, "<function make_counter.<locals>.tick>"));
        assert!(admits(&names, "(<function make_counter.<locals>.tick>, 1)"));
        assert!(admits(&names, "<function make_counter>"));
        assert!(!admits(&names, "<function make_counter.tick>"));
        assert!(!admits(&names, "(1, <function make_counter.<locals>.tock>)"));
        // A nested function never prints as its own name alone.
        assert!(!admits(&names, "<function tick>"));
    }

    #[test]
    fn a_lambda_in_a_comprehension_prints_as_either_python_compiles_it() {
        let names = names(CODE);
        assert!(admits(&names, "[<function make_counter.<locals>.<listcomp>.<lambda>>]"));
        assert!(admits(&names, "[<function make_counter.<locals>.<lambda>>]"));
        assert!(!admits(&names, "[<function make_counter.<locals>.<lambda>.x>]"));
        assert!(admits(&names, "<function <lambda>>"));
    }

    #[test]
    fn names_the_program_does_not_own_are_not_judged() {
        let names = names(CODE);
        assert!(admits(&names, "<function dataclass>"));
        assert!(admits(&names, "<function Shape.area>"));
        assert!(admits(&names, "<function Counter.most_common>"));
        assert!(admits(&names, "'<function tick'"));
        // A repr the tracer cut short.
        assert!(admits(&names, "[<function make_counter.<locals>.<list..."));
        assert!(admits(&names, "[<function make_counter..."));
        assert!(!admits(&names, "[<function make_counter.tic..."));
    }

    #[test]
    fn renaming_code_is_not_bounded() {
        let code = "def f():\n    def g():\n        pass\n    g.__qualname__ = 'h'\n    return g\n";
        let tree = replayground_exec::python::parse(code).expect("parses");
        assert!(FunctionNames::of(tree.root_node(), code.as_bytes(), &HashSet::new()).is_none());
        let code = "def f():\n    global g\n    def g():\n        pass\n";
        let tree = replayground_exec::python::parse(code).expect("parses");
        let declared = HashSet::from(["g".to_owned()]);
        assert!(FunctionNames::of(tree.root_node(), code.as_bytes(), &declared).is_none());
    }
}
