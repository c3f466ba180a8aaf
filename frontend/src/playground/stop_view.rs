//! What the page shows at one debugger stop, computed from the state tree without any DOM.
//!
//! Kept pure so it is tested natively as well as in the browser.

use std::fmt::Write as _;

use replayground_shared::state_tree::TreeChild;
use replayground_shared::{State, StateTree, Stop, StopKind};

use crate::playground::syntax::push_escaped;

/// Everything the debugger panel shows at a stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopView {
    /// "event 3 of 8", or "after the last event".
    pub position: String,
    /// The line about to run (pdb's current line); `None` once the program ended.
    pub line: Option<u32>,
    /// One sentence: what the program is doing at this stop.
    pub headline: String,
    /// Outermost frame first.
    pub call_stack: Vec<StackEntry>,
    /// "Globals" at module level, "Locals of `f()`" inside a function.
    pub variables_title: String,
    pub variables: Vec<(String, String)>,
    /// The value a `return` stop returns or an `exception` stop raises, with its label.
    pub value: Option<(&'static str, String)>,
    /// What the program printed before this stop.
    pub stdout: String,
    pub stderr: String,
}

/// One frame of the call stack at a stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackEntry {
    /// The activation in the state tree.
    pub activation: u32,
    /// The event this frame is at (see `line`).
    pub event: usize,
    pub function: String,
    /// The line this frame is at: the current line for the innermost frame, the
    /// calling line for the others.
    pub line: u32,
}

impl StopView {
    pub fn at(tree: &StateTree, stop: Stop) -> Self {
        let trace = tree.trace();
        let state = tree.state(stop);
        let (variables_title, vars) = match (&state.globals, &state.locals) {
            (Some(globals), _) => ("Globals".to_owned(), globals.clone()),
            (None, Some(locals)) => (
                format!("Locals of {}", function_label(state.function.as_deref().unwrap_or("?"))),
                locals.clone(),
            ),
            (None, None) => ("Variables".to_owned(), replayground_shared::Vars::default()),
        };
        let value = state.value.clone().and_then(|v| match state.event {
            StopKind::Return => Some(("Return value", v)),
            StopKind::Exception => Some(("Exception", v)),
            _ => None,
        });
        let (position, call_stack, stdout, stderr) = match stop {
            Stop::Event(i) => (
                format!("event {} of {}", i + 1, tree.len()),
                call_stack(tree, i),
                trace.stdout_at(i).to_owned(),
                trace.stderr_at(i).to_owned(),
            ),
            Stop::End => (
                "after the last event".to_owned(),
                Vec::new(),
                trace.stdout.clone(),
                trace.stderr.clone(),
            ),
        };
        Self {
            position,
            line: state.line,
            headline: if stop == Stop::End {
                "The program has ended: below are its final variables and all of its output.".to_owned()
            } else {
                describe_state(&state)
            },
            call_stack,
            variables_title,
            variables: vars.0,
            value,
            stdout,
            stderr,
        }
    }
}

/// Frames from the outermost to the one holding `event`, each at the line it is on.
pub fn call_stack(tree: &StateTree, event: usize) -> Vec<StackEntry> {
    let trace = tree.trace();
    tree.call_stack(event)
        .into_iter()
        .map(|a| {
            let activation = &tree.activations()[a as usize];
            // The latest event of this activation up to the stop: the stop itself for the
            // innermost frame, the call site for the callers.
            let at = activation
                .children
                .iter()
                .rev()
                .find_map(|child| match *child {
                    TreeChild::Event(j) if j <= event => Some(j),
                    _ => None,
                })
                .unwrap_or(activation.start);
            StackEntry {
                activation: a,
                event: at,
                function: trace.frame(activation.frame).function.clone(),
                line: trace.events[at].line,
            }
        })
        .collect()
}

/// The call stack as HTML, innermost frame first: a button per frame (`data-activation`
/// for the panel's click handler) that shows its variables; `picked` (else the innermost)
/// is pressed. A string rather than a view per frame: smaller wasm.
pub fn call_stack_html(stack: &[StackEntry], picked: Option<u32>) -> String {
    let selected = picked.or(stack.last().map(|e| e.activation));
    let mut out = String::new();
    for entry in stack.iter().rev() {
        let on = selected == Some(entry.activation);
        let _ = write!(
            out,
            r#"<li><button type="button" class="{}" aria-pressed="{on}" title="Show this frame's variables" data-activation="{}"><code>"#,
            if on { "frame selected" } else { "frame" },
            entry.activation
        );
        push_escaped(&mut out, &function_label(&entry.function));
        let _ = write!(out, "</code> line {}</button></li>", entry.line);
    }
    out
}

/// `fib()` for a function, `<module>`-style names (module, lambda, comprehension) as they are.
pub fn function_label(function: &str) -> String {
    if function.starts_with('<') {
        function.to_owned()
    } else {
        format!("{function}()")
    }
}

/// One sentence for a person describing a stop, in pdb's terms: a `line` stop is
/// *about to run* that line.
pub fn describe_state(state: &State) -> String {
    let line = state.line.unwrap_or_default();
    let place = match state.function.as_deref() {
        Some("<module>") | None => "at module level".to_owned(),
        Some(f) => format!("in {}", function_label(f)),
    };
    let value = state.value.as_deref().unwrap_or("None");
    match state.event {
        StopKind::Line => format!("About to run line {line} {place}."),
        StopKind::Call => format!(
            "Calling {} (line {line}).",
            function_label(state.function.as_deref().unwrap_or("?"))
        ),
        StopKind::Return => format!("Returning {value} from line {line} {place}."),
        StopKind::Exception => format!("Exception {value} raised on line {line} {place}."),
        StopKind::End => "The program has ended.".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use replayground_shared::{Action, Trace};

    use super::*;

    fn example() -> StateTree {
        let trace: Trace = serde_json::from_str(include_str!("../../tests/fixtures/double.json")).unwrap();
        StateTree::new(trace).unwrap()
    }

    #[test]
    fn first_stop_is_the_first_module_line() {
        let tree = example();
        let view = StopView::at(&tree, tree.initial_stop());
        assert_eq!(view.line, Some(1));
        assert_eq!(view.headline, "About to run line 1 at module level.");
        assert_eq!(view.position, "event 2 of 8");
        assert_eq!(view.variables_title, "Globals");
        assert!(view.variables.is_empty());
        assert_eq!(
            view.call_stack,
            vec![StackEntry {
                activation: 0,
                event: 1,
                function: "<module>".into(),
                line: 1
            }]
        );
    }

    #[test]
    fn inside_a_call_the_stack_shows_the_call_site() {
        let tree = example();
        let mut breakpoints = std::collections::BTreeSet::default();
        let mut stop = tree.initial_stop();
        for action in [Action::StepOver, Action::StepInto, Action::StepInto] {
            stop = tree.step(stop, action, &mut breakpoints);
        }
        let view = StopView::at(&tree, stop);
        assert_eq!(view.line, Some(2));
        assert_eq!(
            view.call_stack,
            vec![
                StackEntry {
                    activation: 0,
                    event: 2,
                    function: "<module>".into(),
                    line: 4
                },
                StackEntry {
                    activation: 1,
                    event: 4,
                    function: "double".into(),
                    line: 2
                }
            ]
        );
        assert_eq!(view.variables_title, "Locals of double()");
        assert_eq!(view.variables, vec![("x".to_owned(), "2".to_owned())]);

        let returning = StopView::at(&tree, tree.step(stop, Action::StepReturn, &mut breakpoints));
        assert_eq!(returning.value, Some(("Return value", "4".to_owned())));
        assert_eq!(returning.headline, "Returning 4 from line 2 in double().");
    }

    #[test]
    fn output_grows_with_the_stops_and_is_complete_at_the_end() {
        let tree = example();
        assert_eq!(StopView::at(&tree, tree.initial_stop()).stdout, "");
        let end = StopView::at(&tree, Stop::End);
        assert_eq!(end.stdout, "4\n");
        assert_eq!(end.line, None);
        assert_eq!(
            end.headline,
            "The program has ended: below are its final variables and all of its output."
        );
        assert!(end.call_stack.is_empty());
    }

    #[test]
    fn the_call_stack_lists_the_innermost_frame_first_and_presses_one() {
        let tree = example();
        let view = StopView::at(&tree, Stop::Event(4));
        let html = call_stack_html(&view.call_stack, None);
        assert_eq!(
            html,
            concat!(
                r#"<li><button type="button" class="frame selected" aria-pressed="true" title="Show this frame's variables" data-activation="1"><code>double()</code> line 2</button></li>"#,
                r#"<li><button type="button" class="frame" aria-pressed="false" title="Show this frame's variables" data-activation="0"><code>&lt;module&gt;</code> line 4</button></li>"#,
            )
        );
        assert!(call_stack_html(&view.call_stack, Some(0)).contains(
            r#"class="frame selected" aria-pressed="true" title="Show this frame's variables" data-activation="0""#
        ));
    }

    #[test]
    fn function_labels() {
        assert_eq!(function_label("fib"), "fib()");
        assert_eq!(function_label("<lambda>"), "<lambda>");
    }
}
