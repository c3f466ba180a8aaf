//! Training-loop extraction from the syntax tree (RepGen §3.1): where a project's
//! training loops are (`PyTorch` loops, Keras `fit`, `GradientTape`, TF1 sessions,
//! Lightning's `training_step`), so retrieval can favour the code around them.

use std::collections::BTreeMap;

use tree_sitter::Node;

use crate::context::chunk::lines_of;
use crate::dependencies::walk_imports;
use replayground_exec::python::parse;

/// A training loop found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrainingLoop {
    pub path: String,
    /// 1-based line where the loop (or the `fit` call, or the `training_step`) starts.
    pub line: u32,
    /// 1-based last line of the same node.
    pub end_line: u32,
    /// `pytorch`, `keras`, `tensorflow`, `tensorflow1` or `lightning`.
    pub framework: &'static str,
    /// `loop`, `fit`, `train_on_batch`, `gradient_tape`, `session_run` or `training_step`.
    pub kind: &'static str,
}

impl TrainingLoop {
    /// A one-line description for the agent's event stream, e.g. `train.py:42 pytorch loop`.
    pub fn describe(&self) -> String {
        format!("{}:{} {} {}", self.path, self.line, self.framework, self.kind)
    }
}

/// Keyword arguments that mark a `.fit(...)` call as Keras rather than scikit-learn.
const KERAS_FIT_KEYWORDS: [&str; 6] = [
    "epochs",
    "batch_size",
    "callbacks",
    "validation_data",
    "validation_split",
    "steps_per_epoch",
];

/// Finds the training loops of one Python file from its syntax tree.
pub fn training_loops(path: &str, source: &str) -> Vec<TrainingLoop> {
    let Some(tree) = parse(source) else { return Vec::new() };
    let root = tree.root_node();
    let mut finder = LoopFinder {
        path,
        source: source.as_bytes(),
        uses_keras: imports_keras(root, source.as_bytes()),
        found: BTreeMap::new(),
    };
    finder.scope(root);
    finder.found.into_values().collect()
}

struct LoopFinder<'a> {
    path: &'a str,
    source: &'a [u8],
    /// The file imports TensorFlow or Keras, so `.fit(...)` is Keras's.
    uses_keras: bool,
    /// Keyed by start byte: one report per loop or call, in source order.
    found: BTreeMap<usize, TrainingLoop>,
}

/// What one function (or the module) body contains, for TF2's tape + apply pattern.
#[derive(Default)]
struct Scope<'tree> {
    tapes: Vec<Node<'tree>>,
    applies: Vec<(Node<'tree>, Option<Node<'tree>>)>,
}

impl<'a> LoopFinder<'a> {
    fn text(&self, node: Node<'_>) -> &'a str {
        node.utf8_text(self.source).unwrap_or("")
    }

    fn report(&mut self, node: Node<'_>, framework: &'static str, kind: &'static str) {
        let (line, end_line) = lines_of(node);
        self.found.entry(node.start_byte()).or_insert(TrainingLoop {
            path: self.path.to_owned(),
            line,
            end_line,
            framework,
            kind,
        });
    }

    /// Walks one function body (or the module), then decides on its TF2 pattern.
    fn scope(&mut self, body: Node<'_>) {
        let mut scope = Scope::default();
        let mut cursor = body.walk();
        for child in body.children(&mut cursor) {
            self.visit(child, None, &mut scope);
        }
        if let Some(&tape) = scope.tapes.first()
            && let Some(&(_, outer_loop)) = scope.applies.first()
        {
            // Report the loop around apply_gradients, else the `with tf.GradientTape()` block.
            let at = outer_loop.unwrap_or_else(|| enclosing(tape, "with_statement").unwrap_or(tape));
            self.report(at, "tensorflow", "gradient_tape");
        }
    }

    /// `outer_loop` is the outermost for/while loop of the current function around `node`.
    fn visit<'tree>(&mut self, node: Node<'tree>, outer_loop: Option<Node<'tree>>, scope: &mut Scope<'tree>) {
        match node.kind() {
            "function_definition" => {
                if let Some(name) = node.child_by_field_name("name")
                    && self.text(name) == "training_step"
                    && enclosing(node, "class_definition").is_some()
                {
                    self.report(node, "lightning", "training_step");
                }
                if let Some(body) = node.child_by_field_name("body") {
                    self.scope(body);
                }
                return;
            }
            "call" => self.call(node, outer_loop, scope),
            _ => {}
        }
        let is_loop = matches!(node.kind(), "for_statement" | "while_statement");
        let outer_loop = outer_loop.or(is_loop.then_some(node));
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            self.visit(child, outer_loop, scope);
        }
    }

    fn call<'tree>(&mut self, call: Node<'tree>, outer_loop: Option<Node<'tree>>, scope: &mut Scope<'tree>) {
        let Some(function) = call.child_by_field_name("function") else {
            return;
        };
        let (receiver, method) = match function.kind() {
            "attribute" => (
                function
                    .child_by_field_name("object")
                    .map_or("", |object| self.text(object)),
                function
                    .child_by_field_name("attribute")
                    .map_or("", |attribute| self.text(attribute)),
            ),
            "identifier" => ("", self.text(function)),
            _ => return,
        };
        let arguments = call
            .child_by_field_name("arguments")
            .map_or("", |arguments| self.text(arguments));
        let receiver_name = receiver.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
        let optimizer_step = method == "step"
            && (is_optimizer(&receiver_name) || (receiver_name.contains("scaler") && mentions_optimizer(arguments)));
        match method {
            "backward" | "zero_grad" | "step" if method != "step" || optimizer_step => {
                if let Some(at) = outer_loop {
                    self.report(at, "pytorch", "loop");
                }
            }
            "run" if receiver_name.contains("sess") => {
                if let Some(at) = outer_loop {
                    self.report(at, "tensorflow1", "session_run");
                }
            }
            "fit" | "fit_generator"
                if !receiver.is_empty() && (self.uses_keras || has_keras_fit_keyword(call, self.source)) =>
            {
                self.report(call, "keras", "fit");
            }
            "train_on_batch" if !receiver.is_empty() => {
                self.report(outer_loop.unwrap_or(call), "keras", "train_on_batch");
            }
            "GradientTape" => scope.tapes.push(call),
            "apply_gradients" => scope.applies.push((call, outer_loop)),
            _ => {}
        }
    }
}

/// `optimizer`, `optim`, `opt`, `opt_g`, `g_optimizer` ... but not `scheduler` or `env`.
fn is_optimizer(name: &str) -> bool {
    name.contains("optim") || name == "opt" || name.starts_with("opt_") || name.ends_with("_opt")
}

fn mentions_optimizer(arguments: &str) -> bool {
    arguments
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|word| is_optimizer(&word.to_ascii_lowercase()))
}

fn has_keras_fit_keyword(call: Node<'_>, source: &[u8]) -> bool {
    let Some(arguments) = call.child_by_field_name("arguments") else {
        return false;
    };
    let mut cursor = arguments.walk();
    arguments.named_children(&mut cursor).any(|argument| {
        argument.kind() == "keyword_argument"
            && argument
                .child_by_field_name("name")
                .and_then(|name| name.utf8_text(source).ok())
                .is_some_and(|name| KERAS_FIT_KEYWORDS.contains(&name))
    })
}

fn imports_keras(root: Node<'_>, source: &[u8]) -> bool {
    let mut found = false;
    walk_imports(root, source, &mut |import| {
        let top = import.module.trim_start_matches('.').split('.').next().unwrap_or("");
        found |= matches!(top, "tensorflow" | "keras" | "tf_keras");
    });
    found
}

/// The nearest ancestor of `kind`.
fn enclosing<'tree>(node: Node<'tree>, kind: &str) -> Option<Node<'tree>> {
    let mut current = node.parent();
    while let Some(parent) = current {
        if parent.kind() == kind {
            return Some(parent);
        }
        current = parent.parent();
    }
    None
}
