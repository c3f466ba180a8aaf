//! The node class a tree or linked-list parameter is built from: the class its annotation
//! names, else a node class of the function's own module, else the package's shared one
//! (`TreeNode`, `ListNode`), checked for the links the shape needs.

use std::collections::BTreeMap;

use super::arguments::{Kind, NodeShape};
use super::module::{Def, DefKind, Module};

/// Class names tried, in order, when the annotation names none.
const TREE_CLASSES: &[&str] = &["TreeNode", "Node", "BinaryTreeNode"];
const LINKED_CLASSES: &[&str] = &["ListNode", "Node", "LinkedListNode"];

/// The resolved kind (shape and class name) and the class to copy in.
pub(super) fn class_for<'a>(
    index: &BTreeMap<&'a str, &'a Module>,
    module: &'a Module,
    kind: &Kind,
) -> Option<(Kind, &'a Module, &'a Def)> {
    let Kind::Nodes { shape, class } = kind else {
        return None;
    };
    let wanted: Vec<&str> = match (class, shape) {
        (Some(name), _) => vec![name.as_str()],
        (None, NodeShape::Linked) => LINKED_CLASSES.to_vec(),
        (None, _) => TREE_CLASSES.to_vec(),
    };
    let local = wanted.iter().filter_map(|name| find(index, module, name, 0));
    // The package's shared node class, wherever it lives (`algorithms.common.tree_node`).
    let shared = wanted.iter().take(1).flat_map(|name| {
        index
            .values()
            .filter_map(move |m| m.def(name).filter(|d| d.kind == DefKind::Class).map(|d| (*m, d)))
    });
    local.chain(shared).find_map(|(class_module, class)| {
        let links = links(class)?;
        (*shape == NodeShape::Either || *shape == links).then(|| {
            (
                Kind::Nodes {
                    shape: links,
                    class: Some(class.name.clone()),
                },
                class_module,
                class,
            )
        })
    })
}

/// The class `name` as `module` sees it: its own, or imported from a module of the set.
fn find<'a>(
    index: &BTreeMap<&'a str, &'a Module>,
    module: &'a Module,
    name: &str,
    depth: usize,
) -> Option<(&'a Module, &'a Def)> {
    if let Some(def) = module.def(name) {
        return (def.kind == DefKind::Class).then_some((module, def));
    }
    let (_, target, item) = module.import_of(name)?;
    let source = index.get(target)?;
    // Re-exports through a package's `__init__` are followed a few steps.
    (depth < 4).then(|| find(index, source, item?, depth + 1))?
}

/// What a node class links to, read from its text.
fn links(class: &Def) -> Option<NodeShape> {
    let text = &class.text;
    if text.contains("left") && text.contains("right") {
        Some(NodeShape::Tree)
    } else if text.contains("next") {
        Some(NodeShape::Linked)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_then_the_module_then_the_package_give_the_class() {
        let common = Module::parse(
            "pkg/common/tree_node.py",
            "class TreeNode:\n    def __init__(self, val):\n        self.val = val\n        self.left = self.right = None\n",
        )
        .unwrap();
        let linked = Module::parse(
            "pkg/lists/reverse.py",
            "class Node:\n    def __init__(self, x):\n        self.val = x\n        self.next = None\n",
        )
        .unwrap();
        let index: BTreeMap<&str, &Module> = [&common, &linked].into_iter().map(|m| (m.name.as_str(), m)).collect();
        let tree = Kind::Nodes {
            shape: NodeShape::Tree,
            class: None,
        };
        let (kind, from, class) = class_for(&index, &linked, &tree).expect("the package's TreeNode");
        assert_eq!(
            (from.name.as_str(), class.name.as_str()),
            ("pkg.common.tree_node", "TreeNode")
        );
        assert!(matches!(
            kind,
            Kind::Nodes {
                shape: NodeShape::Tree,
                ..
            }
        ));
        let either = Kind::Nodes {
            shape: NodeShape::Either,
            class: Some("Node".into()),
        };
        let (kind, from, _) = class_for(&index, &linked, &either).expect("the module's Node");
        assert_eq!(from.name, "pkg.lists.reverse");
        assert_eq!(
            kind,
            Kind::Nodes {
                shape: NodeShape::Linked,
                class: Some("Node".into())
            }
        );
        let missing = Kind::Nodes {
            shape: NodeShape::Tree,
            class: Some("Trie".into()),
        };
        assert_eq!(class_for(&index, &linked, &missing), None);
    }
}
