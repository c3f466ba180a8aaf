//! Where a step back can land: the event before a return, a line, a call or an
//! exception, by what the code says ran just before it.

use std::collections::BTreeSet;

use replayground_shared::{Action, State, StopKind};

use super::code::{CodeFacts, MODULE};
use super::runs_the_statement;
use super::shape::{Events, Shape};

/// The shapes a reverse `action` allows from `from`, a frame of `function` at `depth`
/// stopped on `line`.
pub(super) fn shapes(
    from: &State,
    action: Action,
    breakpoints: Option<&BTreeSet<u32>>,
    facts: &CodeFacts,
    (depth, line, function): (u32, u32, &str),
) -> Vec<Shape> {
    let generator = facts.may_be_generator(function, line);
    match action {
        // Before a return: the statement that returned (its line, or its exception;
        // a generator may return right after it resumed), or a callee's return. A
        // statement that surely calls the program's code is never just its line.
        Action::ReverseStepInto if from.event == StopKind::Return => {
            let own_line = if runs_the_statement(function) && facts.surely_calls(function, line) {
                Events::EXCEPTION
            } else {
                Events::LINE
            };
            let mut shapes = vec![Shape {
                lines: facts.statement_lines(line),
                ..Shape::frame_of(
                    from,
                    depth,
                    own_line
                        .or(Events::EXCEPTION)
                        .or(if generator { Events::CALL } else { own_line }),
                )
            }];
            if facts.may_call(function, line) {
                let callee = Shape::callee(depth, Events::RETURN, facts.statement_lines(line));
                shapes.push(facts.last_return(function, line, depth).unwrap_or(callee));
            }
            shapes
        }
        // Before the module's line event at a fresh simple statement: the last event
        // of the one-line simple statement before it, which cannot have raised: its
        // line, or the return of the last call it made.
        Action::ReverseStepInto if let Some(before) = module_statement_before(facts, from) => {
            let lines = Some(BTreeSet::from([before]));
            let own_line = Shape {
                lines: lines.clone(),
                ..Shape::frame_of(from, 0, Events::LINE)
            };
            let callee_return = facts
                .last_return(MODULE, before, 0)
                .unwrap_or(Shape::callee(0, Events::RETURN, lines));
            if facts.surely_calls(MODULE, before) {
                vec![callee_return]
            } else if facts.may_call(MODULE, before) {
                vec![own_line, callee_return]
            } else {
                vec![own_line]
            }
        }
        // Before a line event: its own frame's call (or resumption), an earlier line,
        // an exception it caught, or the return of a call it made.
        // Where the blocks tell which lines can lead to this one: a line event on one of
        // them, and a callee's return only when one of their statements may call.
        Action::ReverseStepInto if from.event == StopKind::Line => match facts.lines_before(function, line) {
            Some((before, calls)) => {
                let mut shapes = vec![
                    Shape {
                        lines: Some(before),
                        ..Shape::frame_of(from, depth, Events::LINE)
                    },
                    Shape::frame_of(from, depth, Events::CALL.or(Events::EXCEPTION)),
                ];
                if calls {
                    shapes.push(Shape::depths(depth + 1, depth + 1, Events::RETURN));
                }
                shapes
            }
            None => vec![
                Shape::frame_of(from, depth, Events::LINE.or(Events::CALL).or(Events::EXCEPTION)),
                Shape::depths(depth + 1, depth + 1, Events::RETURN),
            ],
        },
        // Before a call: the caller's line that made it, or the return of an earlier
        // call the same line made (a callback the caller handed a builtin, too). A
        // call starts its activation, so stepping back out of it is one event too.
        // Where the text tells which statements make this call, the caller's line is
        // one of theirs, and a statement whose one piece of the program's code is
        // this function made no call before it.
        Action::ReverseStepInto | Action::ReverseStepReturn if from.event == StopKind::Call && depth > 0 => {
            let sites = facts.call_sites(function, line);
            let only_call = sites.as_ref().is_some_and(|sites| {
                sites.iter().all(|&site| {
                    facts
                        .first_callee(MODULE, site)
                        .is_some_and(|(callee, first)| callee == function && first == line)
                })
            });
            let mut shapes = vec![Shape {
                lines: sites,
                ..Shape::depths(depth - 1, depth - 1, Events::LINE)
            }];
            if !only_call {
                shapes.push(Shape::depths(depth, depth, Events::RETURN));
            }
            shapes
        }
        // Before an exception: the statement that raised it (a generator may be thrown
        // into right after it resumed), or the return of the callee it came out of.
        Action::ReverseStepInto if from.event == StopKind::Exception => vec![
            Shape {
                lines: facts.statement_lines(line),
                ..Shape::frame_of(
                    from,
                    depth,
                    Events::LINE.or(if generator { Events::CALL } else { Events::LINE }),
                )
            },
            Shape::callee(depth, Events::RETURN, facts.statement_lines(line)),
        ],
        // Back to the start of this activation: its call (a generator's resumption),
        // unless a breakpoint's line came between, in this frame (the only one at its
        // depth while it runs) or one it called. Where the breakpoints are not known, any
        // such line may be one.
        Action::ReverseStepReturn if depth > 0 => {
            let lines = breakpoints.cloned();
            vec![
                Shape::frame_of(from, depth, Events::CALL),
                Shape {
                    lines: lines.clone(),
                    ..Shape::frame_of(from, depth, Events::LINE)
                },
                Shape {
                    lines,
                    events: Events::LINE,
                    min_depth: depth + 1,
                    ..Shape::anywhere()
                },
            ]
        }
        // The event before: this frame's, its caller's (at a call), or a callee's return.
        Action::ReverseStepInto => vec![
            Shape::depths(0, depth, Events::ANY),
            Shape::depths(depth + 1, depth + 1, Events::RETURN),
        ],
        _ => vec![Shape::anywhere()],
    }
}

/// The line of the module's one-line simple statement that ran just before `from`, the
/// module's line event at a statement that has run nothing yet ([`super::body::Body::ran_last_before`]).
fn module_statement_before(facts: &CodeFacts, from: &State) -> Option<u32> {
    let fresh = from.depth == Some(0) && from.event == StopKind::Line;
    let before = fresh.then(|| facts.top_level.ran_last_before(from)).flatten()?;
    facts.top_level.simple_line(before)
}
