//! Running a program in the model's head: from the program's first statement, each
//! `step_over` prediction feeds the next until the model says the module returned or
//! raised. This is how code that cannot run here (a missing package, no GPU) still gets
//! an approximate final state: the reproduction agent's runtime check uses it when no
//! LLM is configured. A small model's rollout is a guess, and is reported as one.

use replayground_shared::trace_lang::{Direction, Step, Trajectory};
use replayground_shared::{Action, State, StopKind, Vars};

use super::infer::{Engine, Guide, Sampling};

/// Where a rollout stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RolloutEnd {
    /// The module returned: the program ended normally.
    Finished,
    /// An exception reached the module: `Type: message`, as a traceback's last line.
    Raised(String),
    /// The model was still inside the program after the step limit.
    StepLimit,
    /// The model's answer was not a state (why).
    Unparsable(String),
}

/// The predicted states, the real first one included.
#[derive(Debug, Clone, PartialEq)]
pub struct Rollout {
    pub states: Vec<State>,
    pub end: RolloutEnd,
}

impl Rollout {
    /// The last state the model reached.
    pub fn last(&self) -> &State {
        self.states.last().expect("a rollout starts from a state")
    }
}

/// The program's first stop, which needs no model: module level, the first statement's
/// line, nothing bound yet. `None` for a program without statements.
pub fn first_state(code: &str) -> Option<State> {
    let tree = replayground_exec::python::parse(code)?;
    let root = tree.root_node();
    let mut cursor = root.walk();
    let first = root.named_children(&mut cursor).find(|node| node.kind() != "comment")?;
    Some(State {
        event: StopKind::Line,
        line: Some(u32::try_from(first.start_position().row).ok()? + 1),
        function: Some("<module>".to_owned()),
        depth: Some(0),
        locals: Some(Vars::default()),
        globals: Some(Vars::default()),
        value: None,
    })
}

/// Rolls `code` forward with `step_over` from its first statement, at most `max_steps`
/// predictions, greedy unless `sampling` says otherwise.
pub fn roll_out(
    debugger: &mut dyn Engine,
    code: &str,
    max_steps: usize,
    sampling: &Sampling,
) -> anyhow::Result<Rollout> {
    let start = first_state(code).ok_or_else(|| anyhow::anyhow!("the program has no statement to start from"))?;
    let mut trajectory = Trajectory {
        code: code.to_owned(),
        direction: Direction::Forward,
        steps: vec![Step {
            action: None,
            state: start,
        }],
    };
    for _ in 0..max_steps {
        let prompt = debugger.prompt(&trajectory, Action::StepOver, sampling)?;
        let prediction = debugger.predict(
            &prompt,
            &Guide::after(&trajectory, Action::StepOver),
            sampling,
            &mut |_| {},
        )?;
        let state = match prediction.state {
            Ok(state) => state,
            Err(why) => return Ok(finish(trajectory, RolloutEnd::Unparsable(why))),
        };
        let at_module = state.depth.is_none_or(|d| d == 0);
        let end = match state.event {
            StopKind::End => Some(RolloutEnd::Finished),
            StopKind::Return if at_module => Some(RolloutEnd::Finished),
            StopKind::Exception if at_module => Some(RolloutEnd::Raised(exception_line(
                state.value.as_deref().unwrap_or("Exception()"),
            ))),
            _ => None,
        };
        trajectory.steps.push(Step {
            action: Some(Action::StepOver),
            state,
        });
        if let Some(end) = end {
            return Ok(finish(trajectory, end));
        }
    }
    Ok(finish(trajectory, RolloutEnd::StepLimit))
}

fn finish(trajectory: Trajectory, end: RolloutEnd) -> Rollout {
    Rollout {
        states: trajectory.steps.into_iter().map(|s| s.state).collect(),
        end,
    }
}

/// An exception's repr as a traceback's last line: `ValueError('bad shape')` becomes
/// `ValueError: bad shape`; anything else is kept as written.
pub fn exception_line(repr: &str) -> String {
    let repr = repr.trim();
    let Some((name, rest)) = repr.split_once('(') else {
        return repr.to_owned();
    };
    // The `(` after the name must close at the very end: `f(x) + g(y)` is no call.
    let mut depth = 1usize;
    let closes_at = rest.char_indices().find_map(|(i, c)| {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        (depth == 0).then_some(i)
    });
    let is_name = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    if !is_name || closes_at != Some(rest.len() - 1) {
        return repr.to_owned();
    }
    let arguments = &rest[..rest.len() - 1];
    let arguments = arguments.trim();
    let quoted = arguments.len() >= 2
        && ((arguments.starts_with('\'') && arguments.ends_with('\''))
            || (arguments.starts_with('"') && arguments.ends_with('"')));
    let message = if quoted {
        &arguments[1..arguments.len() - 1]
    } else {
        arguments
    };
    if message.is_empty() {
        name.to_owned()
    } else {
        format!("{name}: {message}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_state_is_the_first_statement_at_module_level() {
        let state = first_state("# a comment\n\nimport torch\nx = 1\n").unwrap();
        assert_eq!(state.line, Some(3));
        assert_eq!(state.event, StopKind::Line);
        assert_eq!(state.depth, Some(0));
        assert_eq!(state.function.as_deref(), Some("<module>"));
        assert_eq!(first_state("@decorate\ndef f():\n    pass\n").unwrap().line, Some(1));
        assert!(first_state("# only a comment\n").is_none());
    }

    #[test]
    fn exception_reprs_read_as_traceback_lines() {
        assert_eq!(exception_line("ValueError('bad shape')"), "ValueError: bad shape");
        assert_eq!(exception_line("KeyError(\"x\")"), "KeyError: x");
        assert_eq!(exception_line("ZeroDivisionError()"), "ZeroDivisionError");
        assert_eq!(exception_line("IndexError(3, 4)"), "IndexError: 3, 4");
        assert_eq!(exception_line("<weird object>"), "<weird object>");
        assert_eq!(exception_line("f(x) + g(y)"), "f(x) + g(y)");
    }
}
