//! How the run ended, in words: the banner above the controls, the loop a run was stuck
//! in when it hit the step limit, where input goes, and where to look first.

use std::fmt::Write as _;

use replayground_shared::state_tree::TreeChild;
use replayground_shared::text::group_thousands;
use replayground_shared::{EventKind, Limit, Outcome, StateTree};

use crate::playground::syntax::push_escaped;

/// The banner about the run as HTML: its summary, a button (`data-jump`) to where a run
/// that did not end normally is best looked at, and where input goes when it ran out.
pub fn outcome_html(outcome: &Outcome, events: usize, error: Option<usize>, loop_hint: Option<String>) -> String {
    let mut out = String::new();
    push_escaped(&mut out, &run_summary(outcome, events));
    if let Some(event) = error {
        let label = if matches!(outcome, Outcome::UncaughtException { .. }) {
            "Jump to the error"
        } else {
            "Jump to the last step"
        };
        let _ = write!(
            out,
            r#"<button type="button" data-testid="jump-to-error" data-jump="{event}">{label}</button>"#
        );
    }
    if let Some(hint) = input_hint(outcome) {
        let _ = write!(out, r#"<span class="hint" data-testid="input-hint">{hint}</span>"#);
    }
    if let Some(hint) = loop_hint {
        out.push_str(r#"<span class="hint" data-testid="loop-hint">"#);
        // `name` in the hint is code.
        for (i, part) in hint.split('`').enumerate() {
            if i % 2 == 1 {
                out.push_str("<code>");
                push_escaped(&mut out, part);
                out.push_str("</code>");
            } else {
                push_escaped(&mut out, part);
            }
        }
        out.push_str("</span>");
    }
    out
}

/// One sentence about the whole run, never about the current step (it sits above the
/// controls while the student steps through the run).
pub fn run_summary(outcome: &Outcome, events: usize) -> String {
    let steps = match events {
        1 => "1 step".to_owned(),
        n => format!("{} steps", group_thousands(n as u64)),
    };
    match outcome {
        Outcome::Finished => format!("Run result: the program finished after {steps}."),
        // The page asks for the server's maximum, so there is no higher limit to offer.
        Outcome::LimitReached {
            limit: Limit::Events, ..
        } => format!(
            "Run result: stopped at the step limit, after {steps} (the most this server records), before the program's end. Make it do less work (fewer rounds, smaller input) to see its end."
        ),
        Outcome::LimitReached { limit, detail } => format!(
            "Run result: stopped by {}: {detail}. Make the program do less work to see its end.",
            limit.describe()
        ),
        other => {
            let text = other.describe();
            match text.strip_prefix("The ") {
                Some(rest) => format!("Run result: the {rest}"),
                None => format!("Run result: {text}"),
            }
        }
    }
}

/// Line events looked at to find the loop a run was stuck in when it hit the step limit.
const LOOP_WINDOW: usize = 1_000;
/// A loop shorter than this many rounds is not why a run reached the step limit.
const LOOP_ROUNDS: usize = 100;

/// For a run stopped by the step limit, the loop it was stuck in: "Lines 2–3 ran 50,000
/// times; `i` never changed there." The loop is the lines of the last [`LOOP_WINDOW`] line
/// events of the innermost frame on the stack that repeated them; a name counts when the
/// loop's first line (a `while` condition) uses it and its value stayed the same over
/// those events.
pub fn loop_hint(tree: &StateTree, code: &str) -> Option<String> {
    let trace = tree.trace();
    if !matches!(
        trace.outcome,
        Outcome::LimitReached {
            limit: Limit::Events,
            ..
        }
    ) {
        return None;
    }
    let last = trace.events.len().checked_sub(1)?;
    tree.call_stack(last).into_iter().rev().find_map(|activation| {
        let lines: Vec<usize> = tree.activations()[activation as usize]
            .children
            .iter()
            .filter_map(|c| match *c {
                TreeChild::Event(i) if trace.events[i].kind == EventKind::Line => Some(i),
                _ => None,
            })
            .collect();
        let window = &lines[lines.len().saturating_sub(LOOP_WINDOW)..];
        let first = window.iter().map(|&i| trace.events[i].line).min()?;
        let end = window.iter().map(|&i| trace.events[i].line).max()?;
        let rounds = lines.iter().filter(|&&i| trace.events[i].line == first).count();
        if rounds < LOOP_ROUNDS {
            return None;
        }
        let header = code
            .split('\n')
            .nth((first as usize).saturating_sub(1))
            .unwrap_or_default();
        let newest = &trace.events[*window.last()?].locals;
        let unchanged: Vec<&str> = newest
            .iter()
            .filter(|b| {
                // Functions and classes never change; saying so would not help.
                let value = trace.value(b.value);
                !matches!(
                    value.type_name.as_str(),
                    "function" | "type" | "module" | "method" | "builtin_function_or_method"
                ) && window.iter().all(|&i| {
                    trace.events[i]
                        .locals
                        .iter()
                        .any(|old| old.name == b.name && old.value == b.value)
                }) && uses_name(header, &b.name)
            })
            .map(|b| b.name.as_str())
            .collect();
        let place = if first == end {
            format!("Line {first}")
        } else {
            format!("Lines {first}–{end}")
        };
        let mut hint = format!("{place} ran {} times", group_thousands(rounds as u64));
        for (i, name) in unchanged.iter().enumerate() {
            hint.push_str(if i == 0 { "; `" } else { " and `" });
            hint.push_str(name);
            hint.push('`');
        }
        hint.push_str(if unchanged.is_empty() {
            "."
        } else {
            " never changed there."
        });
        Some(hint)
    })
}

/// `name` appears in `line` as a whole identifier.
fn uses_name(line: &str, name: &str) -> bool {
    // Bytes of non-ASCII letters count as identifier bytes (no Unicode tables in the wasm).
    let is_ident = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || *b >= 0x80;
    let bytes = line.as_bytes();
    line.match_indices(name)
        .any(|(at, _)| !bytes[..at].last().is_some_and(is_ident) && !bytes.get(at + name.len()).is_some_and(is_ident))
}

/// Where to type the input, when `input()` found none (the `EOFError` is right, but a
/// beginner needs to know where the input goes).
pub fn input_hint(outcome: &Outcome) -> Option<&'static str> {
    matches!(outcome, Outcome::UncaughtException { exception_type, .. } if exception_type == "EOFError").then_some(
        "input() found no input to read: type it in the Standard input box below the code, one line per input() call, then Run again.",
    )
}

/// Where a run that did not end normally is best looked at: the event that raised the
/// uncaught exception, or the last recorded event of a run cut short.
pub fn error_stop(tree: &StateTree) -> Option<usize> {
    let events = &tree.trace().events;
    let last = events.len().checked_sub(1)?;
    match tree.trace().outcome {
        Outcome::Finished | Outcome::Exited { .. } | Outcome::SyntaxError { .. } => None,
        Outcome::UncaughtException { .. } => {
            // The exception leaves frame after frame as `exception` and `return` events
            // after the raise: the first exception of that tail is where it was raised.
            let tail = events
                .iter()
                .rposition(|e| !matches!(e.kind, EventKind::Exception | EventKind::Return))
                .map_or(0, |i| i + 1);
            (tail..events.len())
                .find(|&i| events[i].kind == EventKind::Exception)
                .or(Some(last))
        }
        _ => Some(last),
    }
}

/// Finished and `sys.exit(0)` are normal ends; everything else deserves attention.
pub fn outcome_is_normal(outcome: &Outcome) -> bool {
    matches!(outcome, Outcome::Finished | Outcome::Exited { code: 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(json: &str) -> StateTree {
        StateTree::new(serde_json::from_str(json).unwrap()).unwrap()
    }

    #[test]
    fn a_run_that_raised_is_looked_at_where_it_raised() {
        let raised = fixture(include_str!("../../tests/fixtures/average.json"));
        // The raise inside average(), not the module's re-raise after it.
        assert_eq!(error_stop(&raised), Some(5));
        assert_eq!(
            crate::playground::state_tree_view::activation_label(&raised, 1),
            "average(xs=[]) raised ZeroDivisionError('division by zero')"
        );
        let finished = fixture(include_str!("../../tests/fixtures/double.json"));
        assert_eq!(error_stop(&finished), None);
        assert_eq!(
            crate::playground::state_tree_view::activation_label(&finished, 1),
            "double(x=2) → 4"
        );
    }

    #[test]
    fn the_summary_describes_the_run_and_input_errors_say_where_input_goes() {
        assert_eq!(
            run_summary(&Outcome::Finished, 1234),
            "Run result: the program finished after 1,234 steps."
        );
        let eof = Outcome::UncaughtException {
            exception_type: "EOFError".into(),
            message: "EOF when reading a line".into(),
            line: Some(1),
        };
        assert_eq!(
            run_summary(&eof, 3),
            "Run result: the program raised EOFError on line 1: EOF when reading a line"
        );
        assert!(input_hint(&eof).is_some_and(|h| h.contains("Standard input")));
        assert_eq!(input_hint(&Outcome::Finished), None);
        let limit = Outcome::LimitReached {
            limit: Limit::Events,
            detail: "100000 events".into(),
        };
        let text = run_summary(&limit, 100_000);
        assert!(
            text.contains("after 100,000 steps") && !text.contains("raise the limit"),
            "{text}"
        );
    }

    /// A module-level loop over lines 2-3 cut off by the step limit after `rounds` rounds,
    /// `i` bound to value `i_values(round)`.
    fn stuck_loop(rounds: u32, i_value: fn(u32) -> u32) -> StateTree {
        use replayground_shared::trace::{Binding, Event, Frame, Shape, Value};
        let mut trace = replayground_shared::Trace::empty(Outcome::LimitReached {
            limit: Limit::Events,
            detail: "100000 events".into(),
        });
        trace.frames.push(Frame {
            function: "<module>".into(),
            parent: None,
            depth: 0,
            is_generator: false,
            called_from_library: false,
        });
        for (repr, type_name) in [("0", "int"), ("1", "int"), ("<function f at 0x1>", "function")] {
            trace.values.push(Value {
                repr: repr.into(),
                type_name: type_name.into(),
                object_id: 0,
                shape: Shape::Scalar,
            });
        }
        let event = |kind, line, i: Option<u32>| Event {
            kind,
            frame: 0,
            line,
            locals: std::iter::once(Binding {
                name: "f".into(),
                value: 2,
            })
            .chain(i.map(|value| Binding {
                name: "i".into(),
                value,
            }))
            .collect(),
            value: None,
            stdout_len: 0,
            stderr_len: 0,
            internal: false,
            generator_exit: false,
        };
        trace.events.push(event(EventKind::Call, 1, None));
        trace.events.push(event(EventKind::Line, 1, None));
        for round in 0..rounds {
            trace.events.push(event(EventKind::Line, 2, Some(i_value(round))));
            trace.events.push(event(EventKind::Line, 3, Some(i_value(round))));
        }
        StateTree::new(trace).unwrap()
    }

    #[test]
    fn a_run_stuck_in_a_loop_names_the_loop_and_what_never_changed() {
        let code = "i = 0\nwhile i < 10:\n    i + f(i)\n";
        let stuck = stuck_loop(1_200, |_| 0);
        assert_eq!(
            loop_hint(&stuck, code).as_deref(),
            Some("Lines 2–3 ran 1,200 times; `i` never changed there.")
        );
        let counting = stuck_loop(1_200, |round| round % 2);
        assert_eq!(
            loop_hint(&counting, code).as_deref(),
            Some("Lines 2–3 ran 1,200 times.")
        );
        // A name the loop's condition does not use is not the reason.
        assert_eq!(
            loop_hint(&stuck, "i = 0\nwhile True:\n    print(i)\n").as_deref(),
            Some("Lines 2–3 ran 1,200 times.")
        );
        assert_eq!(
            loop_hint(&stuck_loop(50, |_| 0), code),
            None,
            "too few rounds to be the reason"
        );
        assert_eq!(
            loop_hint(&fixture(include_str!("../../tests/fixtures/double.json")), code),
            None
        );
        assert!(uses_name("while i < n:", "i") && !uses_name("while items:", "i"));
    }
}
