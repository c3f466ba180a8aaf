//! The name an `except ... as NAME` handler binds exists only inside that handler: Python
//! binds it once the handler is entered (after the line event on the `except` line) and
//! deletes it when the handler ends, however it ends. Where nothing else in the frame's
//! code binds that name, a line event outside the handler's body never shows it: at a
//! breakpoint on `except ValueError as exc:`, `exc` is not bound yet.

use std::collections::HashSet;
use std::ops::RangeInclusive;

use tree_sitter::Node;

use super::line_of;

/// Where each handler's name is bound, for the names that nothing else binds.
#[derive(Debug, Clone, Default)]
pub(super) struct Handlers {
    aliases: Vec<Alias>,
}

#[derive(Debug, Clone)]
struct Alias {
    name: String,
    /// The `def` line and the last line of the function whose frame the handler runs
    /// in (`None`: the module's).
    frame: Option<(u32, u32)>,
    /// The lines of the handler's body.
    body: RangeInclusive<u32>,
}

/// Where an identifier only reads its name: the parent's kinds (and for some, the field
/// it must be in). Anything else may bind it.
fn only_reads(identifier: Node<'_>) -> bool {
    let Some(parent) = identifier.parent() else {
        return false;
    };
    let field_is = |field: &str| {
        parent
            .child_by_field_name(field)
            .is_some_and(|c| c.id() == identifier.id())
    };
    match parent.kind() {
        "argument_list"
        | "interpolation"
        | "binary_operator"
        | "comparison_operator"
        | "boolean_operator"
        | "not_operator"
        | "unary_operator"
        | "return_statement"
        | "raise_statement"
        | "expression_statement"
        | "parenthesized_expression"
        | "conditional_expression"
        | "assert_statement"
        | "await" => true,
        "call" => field_is("function"),
        "attribute" => field_is("object"),
        "subscript" | "keyword_argument" | "pair" => field_is("value"),
        "if_statement" | "while_statement" | "elif_clause" => field_is("condition"),
        _ => false,
    }
}

impl Handlers {
    /// The handlers of `root`'s code whose name nothing else in their frame binds; empty
    /// where the code declares such a name `global` or `nonlocal` (`declared`).
    pub(super) fn of(root: Node<'_>, source: &[u8], declared: &HashSet<String>) -> Self {
        let mut found: Vec<(Alias, usize)> = Vec::new();
        let mut stack = vec![(root, None)];
        while let Some((node, frame)) = stack.pop() {
            if node.kind().starts_with("except")
                && let Some((name, alias)) = alias_of(node, source)
                && let Some(body) = node.child_by_field_name("body").or_else(|| last_block(node))
            {
                let body = line_of(body.start_position().row)..=line_of(body.end_position().row);
                found.push((Alias { name, frame, body }, alias.id()));
            }
            let inner = if node.kind() == "function_definition" {
                Some((line_of(node.start_position().row), line_of(node.end_position().row)))
            } else {
                frame
            };
            // A class's code is left out (its body's namespace is not bounded by names;
            // its methods' handlers are simply not judged).
            if node.kind() != "class_definition" {
                let mut cursor = node.walk();
                stack.extend(node.named_children(&mut cursor).map(|c| (c, inner)));
            }
        }
        let aliases: HashSet<usize> = found.iter().map(|(_, id)| *id).collect();
        let kept = found
            .into_iter()
            .map(|(alias, _)| alias)
            .filter(|a| !declared.contains(&a.name) && !bound_elsewhere(root, source, a, &aliases))
            .collect();
        Self { aliases: kept }
    }

    /// Whether a frame of the function spanning `frame` (its `def` line and its last;
    /// `None`: the module) stopped at a line event at `line` may show `name`.
    pub(super) fn may_show(&self, frame: Option<(u32, u32)>, line: u32, name: &str) -> bool {
        let mut mine = self
            .aliases
            .iter()
            .filter(|a| a.name == name && a.frame == frame)
            .peekable();
        mine.peek().is_none() || mine.any(|a| a.body.contains(&line))
    }
}

/// A handler's name (one identifier) and its node.
fn alias_of<'t>(handler: Node<'t>, source: &[u8]) -> Option<(String, Node<'t>)> {
    let mut cursor = handler.walk();
    let pattern = handler.children(&mut cursor).find(|c| c.kind() == "as_pattern");
    let alias = handler
        .child_by_field_name("alias")
        .or_else(|| pattern.and_then(|p| p.child_by_field_name("alias")))?;
    let identifier = if alias.kind() == "identifier" {
        alias
    } else {
        let mut cursor = alias.walk();
        let named: Vec<Node<'t>> = alias.named_children(&mut cursor).collect();
        match named.as_slice() {
            [one] if one.kind() == "identifier" => *one,
            _ => return None,
        }
    };
    Some((identifier.utf8_text(source).ok()?.to_owned(), identifier))
}

fn last_block(node: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).filter(|c| c.kind() == "block").last()
}

/// Whether anything but a handler of its frame may bind `alias`'s name there: an
/// identifier of that name, inside the frame's code (nested frames included, to be
/// safe), that is not a handler's name and does not only read it.
fn bound_elsewhere(root: Node<'_>, source: &[u8], alias: &Alias, aliases: &HashSet<usize>) -> bool {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let (first, last) = alias.frame.unwrap_or((1, u32::MAX));
        if line_of(node.end_position().row) < first || line_of(node.start_position().row) > last {
            continue;
        }
        if node.kind() == "identifier"
            && node.utf8_text(source).is_ok_and(|t| t == alias.name)
            && !aliases.contains(&node.id())
            && !only_reads(node)
        {
            return true;
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handlers_of(code: &str) -> (Handlers, tree_sitter::Tree) {
        let tree = replayground_exec::python::parse(code).expect("parses");
        (Handlers::of(tree.root_node(), code.as_bytes(), &HashSet::new()), tree)
    }

    /// The lines of the first `def` named `name`.
    fn frame_of(tree: &tree_sitter::Tree, code: &str, name: &str) -> (u32, u32) {
        let start = code.find(&format!("def {name}")).expect("defined");
        let mut node = tree
            .root_node()
            .descendant_for_byte_range(start, start)
            .expect("a node");
        while node.kind() != "function_definition" {
            node = node.parent().expect("inside a def");
        }
        (line_of(node.start_position().row), line_of(node.end_position().row))
    }

    #[test]
    fn a_handlers_name_exists_only_in_its_body() {
        let code = "def safe(line):\n    try:\n        return int(line)\n    except ValueError as exc:\n        print(exc.args)\n        return f'bad: {exc}'\n\n\nprint(safe('x'))\n";
        let (handlers, tree) = handlers_of(code);
        let frame = Some(frame_of(&tree, code, "safe"));
        assert!(!handlers.may_show(frame, 4, "exc"), "not yet bound on the except line");
        assert!(!handlers.may_show(frame, 3, "exc"));
        assert!(handlers.may_show(frame, 5, "exc"));
        assert!(handlers.may_show(frame, 6, "exc"));
        assert!(handlers.may_show(frame, 4, "line"));
    }

    #[test]
    fn a_name_bound_otherwise_is_not_judged() {
        for code in [
            "def f():\n    exc = None\n    try:\n        pass\n    except ValueError as exc:\n        pass\n    return exc\n",
            "def f(exc):\n    try:\n        pass\n    except ValueError as exc:\n        pass\n",
            "def f():\n    for exc in range(2):\n        try:\n            pass\n        except ValueError as exc:\n            pass\n",
            "def f():\n    try:\n        pass\n    except ValueError as exc:\n        pass\n    [exc for exc in 'ab']\n",
        ] {
            let (handlers, tree) = handlers_of(code);
            let frame = Some(frame_of(&tree, code, "f"));
            assert!((1..=8).all(|line| handlers.may_show(frame, line, "exc")), "{code}");
        }
        // Another frame's handler says nothing about this one's names.
        let code = "def f():\n    try:\n        pass\n    except ValueError as exc:\n        pass\n\n\ndef g(exc):\n    return exc\n";
        let (handlers, tree) = handlers_of(code);
        assert!(handlers.may_show(Some(frame_of(&tree, code, "g")), 9, "exc"));
        assert!(!handlers.may_show(Some(frame_of(&tree, code, "f")), 4, "exc"));
        // The module's handlers too.
        let code = "try:\n    int('x')\nexcept ValueError as err:\n    print(err)\nprint('done')\n";
        let (module, _) = handlers_of(code);
        assert!(!module.may_show(None, 3, "err"));
        assert!(module.may_show(None, 4, "err"));
        assert!(!module.may_show(None, 5, "err"));
    }
}
