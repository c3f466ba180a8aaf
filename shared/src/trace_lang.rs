//! The trace language: how code, program states and debugger actions are written as
//! text for the neural debugger. Specified with examples in `docs/trace-language.md`.
//!
//! ```text
//! <|code|>
//! def f(x):
//!     return x + 1
//! y = f(2)
//! <|end_code|>
//! <|line|>3 0 <module> <|vars|>{"f":"<function f>"}
//! <|step_into|>
//! <|call|>1 1 f <|vars|>{"x":"2"}
//! ```
//!
//! A state line is `<|kind|>LINE DEPTH FUNCTION <|vars|>{...}` plus ` <|value|>"..."`
//! for return and exception stops. `vars` holds the locals, or the globals at depth 0.
//! A variable whose repr equals the one in the previous state of the same function
//! and depth is written `..`. Object addresses are dropped from reprs
//! (`<function f at 0x7f..>` becomes `<function f>`): they differ between runs and
//! carry nothing a model could learn.

use serde::Deserialize;

use crate::state::{State, StopKind, Vars};
use std::collections::BTreeSet;

use crate::state_tree::{Action, StateTree, Stop};

pub const CODE_START: &str = "<|code|>";
pub const CODE_END: &str = "<|end_code|>";
pub const INVERSE: &str = "<|inverse|>";
pub const VARS: &str = "<|vars|>";
pub const VALUE: &str = "<|value|>";
pub const END: &str = "<|end|>";
/// Written for a variable whose repr did not change since the previous state.
pub const UNCHANGED: &str = "..";

/// Every marker of the language; a tokenizer treats each as one special token.
pub const SPECIAL_TOKENS: [&str; 20] = [
    CODE_START,
    CODE_END,
    INVERSE,
    VARS,
    VALUE,
    END,
    "<|call|>",
    "<|line|>",
    "<|return|>",
    "<|exception|>",
    "<|step_into|>",
    "<|step_over|>",
    "<|step_return|>",
    "<|continue|>",
    "<|breakpoint|>",
    "<|reverse_step_into|>",
    "<|reverse_step_over|>",
    "<|reverse_step_return|>",
    "<|reverse_continue|>",
    "<|jump|>",
];

/// Which way a trajectory runs: forward actions, or reverse actions that recover
/// earlier states from later ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    Forward,
    Inverse,
}

/// One step: the action that led here (none for the first state) and the state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub action: Option<Action>,
    pub state: State,
}

/// Code plus a sequence of states joined by actions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trajectory {
    pub code: String,
    pub direction: Direction,
    pub steps: Vec<Step>,
}

/// Why text could not be written in the trace language.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SerializeError {
    #[error("the code contains `<|`, which the trace language reserves for its markers")]
    ReservedMarker,
    #[error("a `{0}` state needs a line, a function and a depth")]
    IncompleteState(&'static str),
}

/// Text that is not valid trace language, with the 1-based position of the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// The marker of an action, e.g. `<|step_over|>` or `<|breakpoint|>12`.
pub fn action_text(action: Action) -> String {
    match action {
        Action::Breakpoint(n) => format!("<|breakpoint|>{n}"),
        Action::Jump(n) => format!("<|jump|>{n}"),
        other => format!("<|{}|>", other.name()),
    }
}

/// The marker that starts a state of this kind.
pub fn kind_marker(kind: StopKind) -> &'static str {
    match kind {
        StopKind::Call => "<|call|>",
        StopKind::Line => "<|line|>",
        StopKind::Return => "<|return|>",
        StopKind::Exception => "<|exception|>",
        StopKind::End => END,
    }
}

/// Drops ` at 0x...` object addresses from a repr.
pub fn normalize_repr(repr: &str) -> String {
    let mut out = String::with_capacity(repr.len());
    let mut rest = repr;
    while let Some(pos) = rest.find(" at 0x") {
        let after = &rest[pos + " at 0x".len()..];
        let hex_len = after.bytes().take_while(u8::is_ascii_hexdigit).count();
        out.push_str(&rest[..pos]);
        if hex_len == 0 {
            out.push_str(" at 0x");
        }
        rest = &after[hex_len..];
    }
    out.push_str(rest);
    out
}

/// The state as the language sees it: reprs normalised.
pub fn normalize_state(state: &State) -> State {
    let norm = |vars: &Option<Vars>| {
        vars.as_ref()
            .map(|v| Vars(v.0.iter().map(|(k, r)| (k.clone(), normalize_repr(r))).collect()))
    };
    State {
        locals: norm(&state.locals),
        globals: norm(&state.globals),
        value: state.value.as_deref().map(normalize_repr),
        ..state.clone()
    }
}

/// The variables a state line shows: the globals at module level, else the locals.
pub fn shown_vars(state: &State) -> &[(String, String)] {
    let vars = if state.depth == Some(0) {
        &state.globals
    } else {
        &state.locals
    };
    vars.as_ref().map_or(&[], |v| v.0.as_slice())
}

/// JSON with `<|` escaped so that no repr can forge a marker.
fn json_text<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value)
        .expect("strings and maps always serialise")
        .replace("<|", "\\u003c|")
}

/// Writes one state line (no trailing newline); `previous` enables `..`.
pub fn state_text(state: &State, previous: Option<&State>) -> Result<String, SerializeError> {
    let marker = kind_marker(state.event);
    if state.event == StopKind::End {
        return Ok(END.to_owned());
    }
    let (Some(line), Some(function), Some(depth)) = (state.line, state.function.as_deref(), state.depth) else {
        return Err(SerializeError::IncompleteState(state.event.as_str()));
    };
    let same_frame = previous.filter(|p| p.function.as_deref() == Some(function) && p.depth == Some(depth));
    let before = same_frame.map(shown_vars).unwrap_or_default();
    let mut vars: Vec<(String, String)> = Vec::new();
    for (name, repr) in shown_vars(state) {
        let repr = normalize_repr(repr);
        let unchanged = before.iter().any(|(n, r)| n == name && normalize_repr(r) == repr);
        vars.push((name.clone(), if unchanged { UNCHANGED.to_owned() } else { repr }));
    }
    let mut text = format!("{marker}{line} {depth} {function} {VARS}{}", json_text(&Vars(vars)));
    if let Some(value) = &state.value {
        text.push(' ');
        text.push_str(VALUE);
        text.push_str(&json_text(&normalize_repr(value)));
    }
    Ok(text)
}

/// Runs `actions` from the initial stop of `tree` and records the trajectory.
///
/// Forward: the stops in order, joined by the actions (ending at the first `end`).
/// Inverse: the same stops from last to first, each joined by the first reverse
/// action that really leads from one to the other (`jump:N` when none does).
pub fn record(tree: &StateTree, code: &str, actions: &[Action], direction: Direction) -> Trajectory {
    let mut breakpoints = BTreeSet::new();
    let mut at = tree.initial_stop();
    let mut stops = vec![(None, at)];
    for &action in actions {
        if at == Stop::End {
            break;
        }
        at = tree.step(at, action, &mut breakpoints);
        stops.push((Some(action), at));
    }
    let steps = match direction {
        Direction::Forward => stops
            .into_iter()
            .map(|(action, stop)| Step {
                action,
                state: tree.state(stop),
            })
            .collect(),
        Direction::Inverse => {
            let mut steps: Vec<Step> = Vec::with_capacity(stops.len());
            let mut later: Option<Stop> = None;
            for &(_, stop) in stops.iter().rev() {
                let action = later.map(|from| reverse_action_between(tree, from, stop, &breakpoints));
                steps.push(Step {
                    action,
                    state: tree.state(stop),
                });
                later = Some(stop);
            }
            steps
        }
    };
    Trajectory {
        code: code.to_owned(),
        direction,
        steps,
    }
}

/// The first reverse action that leads from `from` back to `to`, else a jump.
pub fn reverse_action_between(tree: &StateTree, from: Stop, to: Stop, breakpoints: &BTreeSet<u32>) -> Action {
    let candidates = [
        Action::ReverseStepInto,
        Action::ReverseStepOver,
        Action::ReverseStepReturn,
        Action::ReverseContinue,
    ];
    candidates
        .into_iter()
        .find(|&action| tree.step(from, action, &mut breakpoints.clone()) == to)
        .unwrap_or_else(|| Action::Jump(to.event().map_or(u32::MAX, |i| i as u32)))
}

/// Writes a whole trajectory.
pub fn serialize(trajectory: &Trajectory) -> Result<String, SerializeError> {
    if trajectory.code.contains("<|") {
        return Err(SerializeError::ReservedMarker);
    }
    let mut out = String::with_capacity(trajectory.code.len() + 64 * trajectory.steps.len());
    out.push_str(CODE_START);
    out.push('\n');
    out.push_str(&trajectory.code);
    if !trajectory.code.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(CODE_END);
    out.push('\n');
    if trajectory.direction == Direction::Inverse {
        out.push_str(INVERSE);
        out.push('\n');
    }
    let mut previous: Option<&State> = None;
    for step in &trajectory.steps {
        if let Some(action) = step.action {
            out.push_str(&action_text(action));
            out.push('\n');
        }
        out.push_str(&state_text(&step.state, previous)?);
        out.push('\n');
        previous = Some(&step.state);
    }
    Ok(out)
}

/// Reads a whole trajectory written by [`serialize`].
pub fn parse(text: &str) -> Result<Trajectory, ParseError> {
    let mut lines = text.split('\n').enumerate().peekable();
    let err = |line: usize, column: usize, message: String| ParseError {
        line: line + 1,
        column: column + 1,
        message,
    };
    let (n, first) = lines.next().unwrap_or((0, ""));
    if first != CODE_START {
        return Err(err(n, 0, format!("expected `{CODE_START}` to open the code")));
    }
    let mut code = String::new();
    let mut closed = false;
    for (_, l) in lines.by_ref() {
        if l == CODE_END {
            closed = true;
            break;
        }
        code.push_str(l);
        code.push('\n');
    }
    if !closed {
        return Err(err(
            text.split('\n').count().saturating_sub(1),
            0,
            format!("the code is never closed by `{CODE_END}`"),
        ));
    }
    let mut direction = Direction::Forward;
    if lines.peek().is_some_and(|(_, l)| *l == INVERSE) {
        direction = Direction::Inverse;
        lines.next();
    }
    let mut steps: Vec<Step> = Vec::new();
    let mut pending: Option<Action> = None;
    for (n, l) in lines {
        if l.is_empty() {
            continue;
        }
        if let Some(action) = parse_action(l).map_err(|(col, m)| err(n, col, m))? {
            if pending.is_some() {
                return Err(err(
                    n,
                    0,
                    "two actions in a row; an action must be followed by a state".into(),
                ));
            }
            if steps.is_empty() {
                return Err(err(n, 0, "an action before the first state".into()));
            }
            pending = Some(action);
            continue;
        }
        if !steps.is_empty() && pending.is_none() {
            return Err(err(
                n,
                0,
                "two states in a row; states must be joined by an action".into(),
            ));
        }
        let previous = steps.last().map(|s| &s.state);
        let state = parse_state(l, previous).map_err(|(col, m)| err(n, col, m))?;
        steps.push(Step {
            action: pending.take(),
            state,
        });
    }
    if pending.is_some() {
        return Err(err(
            text.split('\n').count().saturating_sub(1),
            0,
            "the text ends with an action and no state".into(),
        ));
    }
    Ok(Trajectory { code, direction, steps })
}

type LineError = (usize, String);

/// Parses an action line; `Ok(None)` when the line is not an action.
pub fn parse_action(line: &str) -> Result<Option<Action>, LineError> {
    for (token, needs_number) in [("<|breakpoint|>", true), ("<|jump|>", true)] {
        if let Some(rest) = line.strip_prefix(token) {
            debug_assert!(needs_number);
            let n: u32 = rest
                .parse()
                .map_err(|_| (token.len(), format!("`{token}` needs a line or event number")))?;
            return Ok(Some(if token == "<|breakpoint|>" {
                Action::Breakpoint(n)
            } else {
                Action::Jump(n)
            }));
        }
    }
    let Some(name) = line.strip_prefix("<|").and_then(|l| l.strip_suffix("|>")) else {
        return Ok(None);
    };
    if matches!(name, "call" | "line" | "return" | "exception" | "end") {
        return Ok(None);
    }
    name.parse::<Action>().map(Some).map_err(|e| (0, e.to_string()))
}

/// Parses one state line; `previous` resolves `..`.
pub fn parse_state(line: &str, previous: Option<&State>) -> Result<State, LineError> {
    if line == END {
        return Ok(State::end());
    }
    let kinds = [
        ("<|call|>", StopKind::Call),
        ("<|line|>", StopKind::Line),
        ("<|return|>", StopKind::Return),
        ("<|exception|>", StopKind::Exception),
    ];
    let Some((marker, kind)) = kinds.into_iter().find(|(m, _)| line.starts_with(m)) else {
        return Err((
            0,
            "expected a state (`<|line|>`, `<|call|>`, `<|return|>`, `<|exception|>`, `<|end|>`) or an action".into(),
        ));
    };
    let mut pos = marker.len();
    let mut word = |what: &str| -> Result<(&str, usize), LineError> {
        let rest = &line[pos..];
        let len = rest
            .find(' ')
            .ok_or_else(|| (pos, format!("expected {what} followed by a space")))?;
        let start = pos;
        pos += len + 1;
        Ok((&rest[..len], start))
    };
    let (line_no, col) = word("a line number")?;
    let line_no: u32 = line_no
        .parse()
        .map_err(|_| (col, format!("`{line_no}` is not a line number")))?;
    let (depth, col) = word("a depth")?;
    let depth: u32 = depth.parse().map_err(|_| (col, format!("`{depth}` is not a depth")))?;
    let (function, _) = word("a function name")?;
    let function = function.to_owned();
    let rest = line[pos..]
        .strip_prefix(VARS)
        .ok_or_else(|| (pos, format!("expected `{VARS}`")))?;
    pos += VARS.len();
    let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Vars>();
    let vars = match stream.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            return Err((
                pos + e.column().saturating_sub(1),
                format!("the variables are not a JSON object of strings: {e}"),
            ));
        }
        None => return Err((pos, "expected the variables as a JSON object".into())),
    };
    pos += stream.byte_offset();
    let same_frame = previous.filter(|p| p.function.as_deref() == Some(function.as_str()) && p.depth == Some(depth));
    let before = same_frame.map(shown_vars).unwrap_or_default();
    let mut resolved = Vec::with_capacity(vars.len());
    for (name, repr) in vars.0 {
        if repr == UNCHANGED {
            let Some((_, old)) = before.iter().find(|(n, _)| *n == name) else {
                return Err((
                    pos,
                    format!("`{name}` is `..` but the previous state of this frame has no `{name}`"),
                ));
            };
            resolved.push((name, normalize_repr(old)));
        } else {
            resolved.push((name, repr));
        }
    }
    let mut value = None;
    let rest = &line[pos..];
    if let Some(v) = rest.strip_prefix(' ').and_then(|r| r.strip_prefix(VALUE)) {
        pos += 1 + VALUE.len();
        let mut de = serde_json::Deserializer::from_str(v);
        let s = String::deserialize(&mut de).map_err(|e| (pos, format!("the value is not a JSON string: {e}")))?;
        de.end()
            .map_err(|_| (pos, "unexpected text after the value".to_owned()))?;
        value = Some(s);
    } else if !rest.is_empty() {
        return Err((pos, format!("unexpected text `{rest}` after the variables")));
    }
    if value.is_some() != matches!(kind, StopKind::Return | StopKind::Exception) {
        return Err((
            pos,
            format!(
                "a `{}` state {} a value",
                kind.as_str(),
                if value.is_some() { "cannot have" } else { "needs" }
            ),
        ));
    }
    let vars = Vars(resolved);
    let (locals, globals) = if depth == 0 {
        (Vars::default(), Some(vars))
    } else {
        (vars, None)
    };
    Ok(State {
        event: kind,
        line: Some(line_no),
        function: Some(function),
        depth: Some(depth),
        locals: Some(locals),
        globals,
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn state(
        event: StopKind,
        line: u32,
        function: &str,
        depth: u32,
        vars: &[(&str, &str)],
        value: Option<&str>,
    ) -> State {
        let vars = Vars(vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect());
        let (locals, globals) = if depth == 0 {
            (Vars::default(), Some(vars))
        } else {
            (vars, None)
        };
        State {
            event,
            line: Some(line),
            function: Some(function.to_owned()),
            depth: Some(depth),
            locals: Some(locals),
            globals,
            value: value.map(str::to_owned),
        }
    }

    #[test]
    fn writes_the_documented_form() {
        let t = Trajectory {
            code: "def f(x):\n    return x + 1\ny = f(2)\n".into(),
            direction: Direction::Forward,
            steps: vec![
                Step {
                    action: None,
                    state: state(
                        StopKind::Line,
                        3,
                        "<module>",
                        0,
                        &[("f", "<function f at 0x7f3a>")],
                        None,
                    ),
                },
                Step {
                    action: Some(Action::StepInto),
                    state: state(StopKind::Call, 1, "f", 1, &[("x", "2")], None),
                },
                Step {
                    action: Some(Action::StepOver),
                    state: state(StopKind::Line, 2, "f", 1, &[("x", "2")], None),
                },
                Step {
                    action: Some(Action::StepOver),
                    state: state(StopKind::Return, 2, "f", 1, &[("x", "2")], Some("3")),
                },
                Step {
                    action: Some(Action::Breakpoint(9)),
                    state: State::end(),
                },
            ],
        };
        let text = serialize(&t).unwrap();
        insta_like(
            &text,
            "<|code|>\ndef f(x):\n    return x + 1\ny = f(2)\n<|end_code|>\n\
             <|line|>3 0 <module> <|vars|>{\"f\":\"<function f>\"}\n<|step_into|>\n\
             <|call|>1 1 f <|vars|>{\"x\":\"2\"}\n<|step_over|>\n<|line|>2 1 f <|vars|>{\"x\":\"..\"}\n\
             <|step_over|>\n<|return|>2 1 f <|vars|>{\"x\":\"..\"} <|value|>\"3\"\n<|breakpoint|>9\n<|end|>\n",
        );
        let back = parse(&text).unwrap();
        assert_eq!(back.steps.len(), 5);
        assert_eq!(
            back.steps[0].state.globals.as_ref().unwrap().get("f"),
            Some("<function f>")
        );
        assert_eq!(back.steps[2].state.locals.as_ref().unwrap().get("x"), Some("2"));
    }

    fn insta_like(actual: &str, expected: &str) {
        assert_eq!(
            actual, expected,
            "\n--- actual ---\n{actual}\n--- expected ---\n{expected}"
        );
    }

    #[test]
    fn reprs_cannot_forge_markers() {
        let s = state(StopKind::Line, 1, "<module>", 0, &[("s", "'<|end|>'")], None);
        let text = state_text(&s, None).unwrap();
        assert!(!text[VARS.len()..].contains("<|end|>"));
        assert_eq!(parse_state(&text, None).unwrap(), s);
    }

    #[test]
    fn parse_errors_carry_positions() {
        let e = parse("<|code|>\nx = 1\n<|end_code|>\n<|line|>1 0 <module> <|vars|>{\"x\": 1}\n").unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.column > 20, "{e}");
        let e = parse("<|code|>\nx = 1\n").unwrap_err();
        assert!(e.message.contains("never closed"), "{e}");
        let e = parse("<|code|>\n<|end_code|>\n<|line|>1 0 <module> <|vars|>{}\n<|line|>1 0 <module> <|vars|>{}\n")
            .unwrap_err();
        assert_eq!((e.line, e.message.contains("two states")), (4, true));
        let e = parse("<|code|>\n<|end_code|>\n<|line|>1 1 f <|vars|>{\"a\":\"..\"}\n").unwrap_err();
        assert!(e.message.contains("`a` is `..`"), "{e}");
        let e = parse("<|code|>\n<|end_code|>\n<|line|>1 0 <module> <|vars|>{}\n<|fly|>\n<|end|>\n").unwrap_err();
        assert!(e.message.contains("unknown debugger action"), "{e}");
        let e = parse("<|code|>\n<|end_code|>\n<|return|>1 1 f <|vars|>{}\n").unwrap_err();
        assert!(e.message.contains("needs a value"), "{e}");
    }

    #[test]
    fn reserved_markers_in_code_are_refused() {
        let t = Trajectory {
            code: "x = '<|end|>'\n".into(),
            direction: Direction::Forward,
            steps: vec![],
        };
        assert_eq!(serialize(&t), Err(SerializeError::ReservedMarker));
    }

    #[test]
    fn normalize_drops_addresses_only() {
        assert_eq!(normalize_repr("<function f at 0x7f00ab>"), "<function f>");
        assert_eq!(normalize_repr("[<A at 0x1>, <B at 0x2>]"), "[<A>, <B>]");
        assert_eq!(normalize_repr("look at 0xZ"), "look at 0xZ");
    }

    fn arb_state() -> impl Strategy<Value = State> {
        let kind = prop_oneof![
            Just(StopKind::Call),
            Just(StopKind::Line),
            Just(StopKind::Return),
            Just(StopKind::Exception),
        ];
        let name = "[a-z_][a-z0-9_]{0,6}";
        let repr = prop_oneof![Just("..".to_owned()), "\\PC{0,12}", Just("'<|line|>'".to_owned())];
        let vars = proptest::collection::vec((name, repr), 0..4);
        (
            kind,
            1u32..500,
            prop_oneof![Just("<module>".to_owned()), "[a-z]{1,5}".prop_map(String::from)],
            0u32..4,
            vars,
            "\\PC{0,10}",
        )
            .prop_map(|(event, line, function, depth, vars, value)| {
                let mut seen = std::collections::HashSet::new();
                let vars: Vec<(String, String)> = vars
                    .into_iter()
                    .filter(|(n, _)| seen.insert(n.clone()))
                    .map(|(n, r)| {
                        let r = normalize_repr(&r);
                        (n, if r == UNCHANGED { "'..'".to_owned() } else { r })
                    })
                    .collect();
                let (locals, globals) = if depth == 0 {
                    (Vars::default(), Some(Vars(vars)))
                } else {
                    (Vars(vars), None)
                };
                let value = matches!(event, StopKind::Return | StopKind::Exception).then(|| normalize_repr(&value));
                State {
                    event,
                    line: Some(line),
                    function: Some(function),
                    depth: Some(depth),
                    locals: Some(locals),
                    globals,
                    value,
                }
            })
    }

    fn arb_action() -> impl Strategy<Value = Action> {
        prop_oneof![
            Just(Action::StepInto),
            Just(Action::StepOver),
            Just(Action::StepReturn),
            Just(Action::Continue),
            (1u32..900).prop_map(Action::Breakpoint),
            Just(Action::ReverseStepInto),
            Just(Action::ReverseStepOver),
            Just(Action::ReverseStepReturn),
            Just(Action::ReverseContinue),
            (0u32..900).prop_map(Action::Jump),
        ]
    }

    proptest! {
        #[test]
        fn serialise_then_parse_round_trips(
            code in "[a-z =+()\n:0-9]{0,60}",
            inverse in any::<bool>(),
            states in proptest::collection::vec(arb_state(), 1..8),
            actions in proptest::collection::vec(arb_action(), 8),
            ends in any::<bool>(),
        ) {
            let mut steps: Vec<Step> = states
                .into_iter()
                .enumerate()
                .map(|(i, state)| Step { action: (i > 0).then(|| actions[i]), state })
                .collect();
            if ends {
                steps.push(Step { action: Some(actions[0]), state: State::end() });
            }
            let direction = if inverse { Direction::Inverse } else { Direction::Forward };
            let t = Trajectory { code, direction, steps };
            let text = serialize(&t).unwrap();
            for line in text.lines().skip_while(|l| *l != CODE_END).skip(1) {
                if STATE_MARKERS.iter().any(|(m, _)| line.starts_with(m)) {
                    let mut machine = StateLineMachine::new();
                    prop_assert!(machine.feed(format!("{line}\n").as_bytes()) && machine.is_done(), "{}", line);
                }
            }
            let back = parse(&text).unwrap();
            let mut expected_code = t.code.clone();
            if !expected_code.ends_with('\n') {
                expected_code.push('\n');
            }
            prop_assert_eq!(back.code, expected_code);
            prop_assert_eq!(back.direction, t.direction);
            prop_assert_eq!(back.steps, t.steps);
        }
    }
}

/// Checks text byte by byte against the grammar of one state line (its trailing
/// newline included), so that a decoder can refuse any token that would leave it.
/// Cloning is cheap: a constrained decoder clones the machine per candidate token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateLineMachine {
    stage: Stage,
    /// Bytes of the literal being matched (a marker or ` <|vars|>`).
    buffer: Vec<u8>,
    kind: Option<StopKind>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Marker,
    LineNumber {
        digits: usize,
    },
    Depth {
        digits: usize,
    },
    Function {
        len: usize,
        last_lt: bool,
    },
    VarsMarker,
    ObjectStart,
    /// Inside the object: expecting a key (`first`: or the closing brace).
    Key {
        first: bool,
    },
    KeyString(JsonString),
    Colon,
    ValueString(JsonString),
    AfterValue,
    AfterObject,
    ValueMarker,
    ReturnValue(JsonString),
    AfterReturnValue,
    EndNewline,
    Done,
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JsonString {
    Open,
    Escape,
    Unicode(u8),
}

const STATE_MARKERS: [(&str, StopKind); 5] = [
    ("<|call|>", StopKind::Call),
    ("<|line|>", StopKind::Line),
    ("<|return|>", StopKind::Return),
    ("<|exception|>", StopKind::Exception),
    (END, StopKind::End),
];

impl Default for StateLineMachine {
    fn default() -> Self {
        Self::new()
    }
}

impl StateLineMachine {
    pub fn new() -> Self {
        Self {
            stage: Stage::Marker,
            buffer: Vec::new(),
            kind: None,
        }
    }

    /// The line is complete (newline included).
    pub fn is_done(&self) -> bool {
        self.stage == Stage::Done
    }

    /// The text so far cannot be extended into a valid state line.
    pub fn is_failed(&self) -> bool {
        self.stage == Stage::Failed
    }

    /// Feeds bytes; returns false (and stays failed) once they leave the grammar.
    pub fn feed(&mut self, bytes: &[u8]) -> bool {
        for &b in bytes {
            self.stage = self.next(b);
            if self.stage == Stage::Failed {
                return false;
            }
        }
        true
    }

    fn literal(&mut self, b: u8, literal: &str, then: Stage) -> Stage {
        self.buffer.push(b);
        let lit = literal.as_bytes();
        if !lit.starts_with(&self.buffer) {
            return Stage::Failed;
        }
        if self.buffer.len() == lit.len() {
            self.buffer.clear();
            then
        } else {
            self.stage
        }
    }

    fn string(state: JsonString, b: u8) -> Result<Option<JsonString>, ()> {
        match state {
            JsonString::Open => match b {
                b'"' => Ok(None),
                b'\\' => Ok(Some(JsonString::Escape)),
                0..=0x1f => Err(()),
                _ => Ok(Some(JsonString::Open)),
            },
            JsonString::Escape => match b {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Ok(Some(JsonString::Open)),
                b'u' => Ok(Some(JsonString::Unicode(0))),
                _ => Err(()),
            },
            JsonString::Unicode(n) if b.is_ascii_hexdigit() => Ok(Some(if n == 3 {
                JsonString::Open
            } else {
                JsonString::Unicode(n + 1)
            })),
            JsonString::Unicode(_) => Err(()),
        }
    }

    fn next(&mut self, b: u8) -> Stage {
        match self.stage {
            Stage::Marker => {
                self.buffer.push(b);
                let candidates: Vec<&(&str, StopKind)> = STATE_MARKERS
                    .iter()
                    .filter(|(m, _)| m.as_bytes().starts_with(&self.buffer))
                    .collect();
                match candidates.as_slice() {
                    [] => Stage::Failed,
                    [(m, kind)] if m.len() == self.buffer.len() => {
                        self.buffer.clear();
                        self.kind = Some(*kind);
                        if *kind == StopKind::End {
                            Stage::EndNewline
                        } else {
                            Stage::LineNumber { digits: 0 }
                        }
                    }
                    _ => Stage::Marker,
                }
            }
            Stage::LineNumber { digits } => match b {
                b'0'..=b'9' if digits < 7 => Stage::LineNumber { digits: digits + 1 },
                b' ' if digits > 0 => Stage::Depth { digits: 0 },
                _ => Stage::Failed,
            },
            Stage::Depth { digits } => match b {
                b'0'..=b'9' if digits < 5 => Stage::Depth { digits: digits + 1 },
                b' ' if digits > 0 => Stage::Function { len: 0, last_lt: false },
                _ => Stage::Failed,
            },
            Stage::Function { len, last_lt } => match b {
                b' ' if len > 0 => {
                    self.buffer.clear();
                    Stage::VarsMarker
                }
                b' ' | b'\n' | b'\r' | b'\t' => Stage::Failed,
                b'|' if last_lt => Stage::Failed,
                _ if len < 200 => Stage::Function {
                    len: len + 1,
                    last_lt: b == b'<',
                },
                _ => Stage::Failed,
            },
            Stage::VarsMarker => self.literal(b, VARS, Stage::ObjectStart),
            Stage::ObjectStart => {
                if b == b'{' {
                    Stage::Key { first: true }
                } else {
                    Stage::Failed
                }
            }
            Stage::Key { first } => match b {
                b'"' => Stage::KeyString(JsonString::Open),
                b'}' if first => Stage::AfterObject,
                _ => Stage::Failed,
            },
            Stage::KeyString(s) => match Self::string(s, b) {
                Ok(Some(s)) => Stage::KeyString(s),
                Ok(None) => Stage::Colon,
                Err(()) => Stage::Failed,
            },
            Stage::Colon => {
                if b == b':' {
                    Stage::ValueString(JsonString::Open)
                } else {
                    Stage::Failed
                }
            }
            Stage::ValueString(s) => {
                // The value string's opening quote.
                if s == JsonString::Open && self.buffer.is_empty() {
                    self.buffer.push(b'"');
                    return if b == b'"' {
                        Stage::ValueString(JsonString::Open)
                    } else {
                        Stage::Failed
                    };
                }
                match Self::string(s, b) {
                    Ok(Some(s)) => Stage::ValueString(s),
                    Ok(None) => {
                        self.buffer.clear();
                        Stage::AfterValue
                    }
                    Err(()) => Stage::Failed,
                }
            }
            Stage::AfterValue => match b {
                b',' => Stage::Key { first: false },
                b'}' => Stage::AfterObject,
                _ => Stage::Failed,
            },
            Stage::AfterObject => {
                let needs_value = matches!(self.kind, Some(StopKind::Return | StopKind::Exception));
                match b {
                    b'\n' if !needs_value => Stage::Done,
                    b' ' if needs_value => {
                        self.buffer.clear();
                        self.buffer.push(b' ');
                        Stage::ValueMarker
                    }
                    _ => Stage::Failed,
                }
            }
            Stage::ValueMarker => {
                let full = format!(" {VALUE}\"");
                self.buffer.push(b);
                if !full.as_bytes().starts_with(&self.buffer) {
                    return Stage::Failed;
                }
                if self.buffer.len() == full.len() {
                    self.buffer.clear();
                    Stage::ReturnValue(JsonString::Open)
                } else {
                    Stage::ValueMarker
                }
            }
            Stage::ReturnValue(s) => match Self::string(s, b) {
                Ok(Some(s)) => Stage::ReturnValue(s),
                Ok(None) => Stage::AfterReturnValue,
                Err(()) => Stage::Failed,
            },
            Stage::AfterReturnValue | Stage::EndNewline => {
                if b == b'\n' {
                    Stage::Done
                } else {
                    Stage::Failed
                }
            }
            Stage::Done | Stage::Failed => Stage::Failed,
        }
    }
}

#[cfg(test)]
mod machine_tests {
    use super::*;

    fn accepts(line: &str) -> bool {
        let mut m = StateLineMachine::new();
        m.feed(line.as_bytes()) && m.is_done()
    }

    #[test]
    fn every_serialised_state_is_accepted_and_prefixes_stay_open() {
        let lines = [
            "<|line|>3 0 <module> <|vars|>{\"f\":\"<function f>\",\"y\":\"..\"}\n",
            "<|call|>1 1 f <|vars|>{}\n",
            "<|return|>2 1 f <|vars|>{\"x\":\"2\"} <|value|>\"3\"\n",
            "<|exception|>7 2 <listcomp> <|vars|>{\"s\":\"'a\\\"b\\u003c|'\"} <|value|>\"ZeroDivisionError('x')\"\n",
            "<|end|>\n",
        ];
        for line in lines {
            assert!(accepts(line), "{line}");
            for cut in 0..line.len() - 1 {
                let mut m = StateLineMachine::new();
                assert!(
                    m.feed(&line.as_bytes()[..cut]) && !m.is_done(),
                    "prefix {:?}",
                    &line[..cut]
                );
            }
            let parsed = parse_state(line.trim_end(), Some(&State::end()));
            assert!(parsed.is_ok() || line.contains(".."), "{line}: {parsed:?}");
        }
    }

    #[test]
    fn malformed_lines_are_refused() {
        for line in [
            "<|line|>x 0 f <|vars|>{}\n",
            "<|line|>3 0 f <|vars|>{\"a\":1}\n",
            "<|return|>2 1 f <|vars|>{}\n",
            "<|line|>2 1 f <|vars|>{} <|value|>\"3\"\n",
            "<|line|>2 1 f<|line|> <|vars|>{}\n",
            "<|step_into|>\n",
            "<|line|>2 1 f <|vars|>{\"a\":\"b\",}\n",
        ] {
            assert!(!accepts(line), "{line}");
        }
    }
}
