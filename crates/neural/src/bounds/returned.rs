//! Back in the caller after a callee's return: the statement that called it completes.

use std::collections::BTreeSet;

use replayground_shared::trace_lang::{self, Direction, Trajectory};
use replayground_shared::{Action, State, StopKind};
use tree_sitter::Node;

use super::arguments::{Completion, whole_value};
use super::calls::{alone_on, arguments_run_nothing, runs_nothing};
use super::code::CodeFacts;
use super::flow::{field, named};
use super::kept::Kept;
use super::{Bounds, Events, Shape, json_contents, runs_the_statement, shapes};

impl Bounds {
    /// Stepping on from the end of `prefix`, a callee's return that the step before
    /// reached from one of its own line events (so it returns normally: a statement that
    /// raised would have stopped at its exception first), to the caller, which stopped
    /// at a statement whose one frame of the program's is that callee ([`completion`])
    /// before the steps that went into it and stayed in that activation. The statement
    /// completes: the caller's next event is the one a step over it reaches without an
    /// exception (for `return`, its own return with the value), and it shows `NAME` of
    /// `NAME = …` holding the value and every number, string, bool or `None` the
    /// statement cannot change as it was (a list the callee was handed may have changed).
    pub(super) fn after_callee_returned(&mut self, prefix: &Trajectory, action: Action) {
        let [.., before, last] = prefix.steps.as_slice() else {
            return;
        };
        let from = &last.state;
        let (Some(depth), Some(value)) = (from.depth, from.value.as_deref()) else {
            return;
        };
        let single = |a: Option<Action>| matches!(a, Some(Action::StepInto | Action::StepOver));
        if prefix.direction != Direction::Forward
            || !matches!(action, Action::StepInto | Action::StepOver)
            || from.event != StopKind::Return
            || depth == 0
            || !single(last.action)
            || before.state.event != StopKind::Line
            || before.state.depth != Some(depth)
            || before.state.function != from.function
        {
            return;
        }
        // The caller: the last state above the callee, every step since staying in one
        // activation at the callee's depth or below it.
        let Some(at) = prefix
            .steps
            .iter()
            .rposition(|s| s.state.depth.is_some_and(|d| d < depth))
        else {
            return;
        };
        let stays = |a: Option<Action>| matches!(a, Some(Action::StepInto | Action::StepOver | Action::StepReturn));
        if !prefix.steps[at + 1..].iter().all(|s| stays(s.action)) {
            return;
        }
        let caller = &prefix.steps[at].state;
        let Some(facts) = self.facts.as_ref().filter(|f| f.names_kept && f.scalars_kept) else {
            return;
        };
        let (Some(line), Some(function)) = (caller.line, caller.function.as_deref()) else {
            return;
        };
        if caller.depth != Some(depth - 1)
            || caller.event != StopKind::Line
            || !runs_the_statement(function)
            || facts.may_be_generator(function, line)
        {
            return;
        }
        let Some((completion, callee, object)) = completion(facts, caller) else {
            return;
        };
        let (Some(effects), Some(mut kept)) = (
            facts
                .effects(function, line)
                .filter(|_| from.function.as_deref() == Some(callee.as_str())),
            Kept::of(caller, facts.unbound.at_depth(depth - 1)),
        ) else {
            return;
        };
        // A class call's value is the object `__init__` initialised (which must return
        // `None`, or the call raises); any other call's, what it returned.
        let value = match object {
            Some(object) if value == "None" => object,
            Some(_) => return,
            None => trace_lang::normalize_repr(value),
        };
        let shown = trace_lang::shown_vars(caller);
        for untouched in facts.untouched(&effects, shown, false) {
            if let Some((_, repr)) = shown.iter().find(|(n, _)| n == untouched) {
                let repr = trace_lang::normalize_repr(repr);
                kept.values.insert(untouched.as_bytes().to_vec(), json_contents(&repr));
            }
        }
        kept.fresh = Some(facts.fresh_names(&effects));
        kept.fresh_order = facts.fresh_order(function, line);
        kept.statement_lines = effects.lines;
        if let Completion::Assign(name) = &completion {
            kept.values.insert(name.as_bytes().to_vec(), json_contents(&value));
            kept.required.push(name.as_bytes().to_vec());
        }
        self.kept.retain(|k| k.depth != depth - 1);
        self.kept.push(kept);
        if completion == Completion::Return {
            self.shapes = vec![Shape {
                lines: Some(BTreeSet::from([line])),
                ..Shape::frame_of(caller, depth - 1, Events::RETURN)
            }];
            let mut tail = b" <|value|>\"".to_vec();
            tail.extend(json_contents(&value));
            tail.push(b'"');
            self.callee_value = Some((depth - 1, tail));
            return;
        }
        let mut next = shapes(Direction::Forward, caller, Action::StepOver, None, facts);
        for shape in &mut next {
            shape.events = shape.events.but(Events::EXCEPTION);
        }
        self.shapes = next;
    }
}

/// The statement alone on the line the line event `caller` is at, when evaluating it
/// runs one frame of the program's and nothing after it: `NAME = V`, `V` or `return V`,
/// with `V` a call of a plain function, a plain class (whose `__init__` runs) or a
/// method an instance of one resolves ([`CodeFacts::method_call`]), arguments that run
/// none of the program's code; or a list, set or dict comprehension whose first
/// iterable runs none. What it does with the value, the frame's name, and for a class
/// call the object's repr.
fn completion(facts: &CodeFacts, caller: &State) -> Option<(Completion, String, Option<String>)> {
    let (root, source) = (facts.tree.root_node(), facts.source.as_bytes());
    let statement = alone_on(root, caller.line?)?;
    let (completion, value) = whole_value(statement, source).filter(|(c, _)| *c != Completion::Augment)?;
    let inert = |node: Node<'_>| runs_nothing(node, source, &facts.program);
    let scope = match value.kind() {
        "list_comprehension" => "<listcomp>",
        "set_comprehension" => "<setcomp>",
        "dictionary_comprehension" => "<dictcomp>",
        "call" => {
            let all_inert = arguments_run_nothing(value, source, &facts.program);
            let function = field(value, "function")?;
            let name = function.utf8_text(source).ok()?;
            return match function.kind() {
                _ if !all_inert => None,
                "identifier" if facts.program.plain_functions.contains(name) => {
                    Some((completion, name.to_owned(), None))
                }
                "identifier" if facts.program.class_inits.contains_key(name) && facts.object_rooted(name) => Some((
                    completion,
                    "__init__".to_owned(),
                    Some(format!("<__main__.{name} object>")),
                )),
                "attribute" => Some((completion, facts.method_call(caller)?.function, None)),
                _ => None,
            };
        }
        _ => return None,
    };
    let clause = named(value).into_iter().find(|c| c.kind() == "for_in_clause")?;
    inert(field(clause, "right")?).then(|| (completion, scope.to_owned(), None))
}
