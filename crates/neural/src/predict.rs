//! Questions to the neural debugger about a real run: the trace-language prompt that asks
//! where a debugger action leads from a stop, and the candidates decoded for it, each
//! checked against what the run really does (ground truth first).

use std::collections::BTreeSet;
use std::time::Instant;

use replayground_shared::protocol::{ErrorCode, Prediction};
use replayground_shared::trace_lang::{self, Direction, Step, Trajectory, normalize_state};
use replayground_shared::{Action, Outcome, State, StateTree, Stop, StopKind};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::bounds::Bounds;
use crate::infer::{Engine, Guide, Sampling};
use crate::service::LoadedModel;

/// Tokens kept free for the answer: a prompt longer than the context minus this is shortened.
const ANSWER_TOKENS: usize = 128;
/// Longest answer, in tokens.
const MAX_ANSWER_TOKENS: usize = 256;
/// The prompt shows the route's states from a multiple of this (training trajectories
/// have up to 24), hence this many to twice as many less one: the stops that follow
/// have prompts that start like this one until the window moves on, and an engine that
/// keeps what it read (a code LLM) then reads only the new states.
const PREFIX_WINDOW: usize = 8;
/// Candidates after the first are sampled at this temperature (the first is greedy).
const SAMPLE_TEMPERATURE: f64 = 0.8;
const SAMPLE_TOP_P: f64 = 0.95;

/// Why a question gets no predictions: the error code and the sentence the page shows.
pub type Failure = (ErrorCode, String);

/// What the page asks: the stop (an event index, or the event count for the end), the
/// debugger action, the breakpoints it honours and how many candidates to decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub at_event: u32,
    pub action: Action,
    pub samples: u32,
    pub breakpoints: BTreeSet<u32>,
}

/// What decoding needs, worked out from the real run.
pub struct Prepared {
    tree: StateTree,
    at: Stop,
    action: Action,
    breakpoints: BTreeSet<u32>,
    samples: u32,
    prompt: String,
    /// The states the prompt shows, for an engine that answers step by step.
    route: Trajectory,
    /// Resolves `..` in the answer: the stop the action starts from.
    from: State,
    /// What the code, the action and the breakpoints allow the answer to be.
    bounds: Bounds,
    /// The real state the action leads to, normalised as the trace language writes it.
    actual: State,
    max_tokens: usize,
}

impl Prepared {
    fn guide(&self) -> Guide<'_> {
        Guide {
            previous: Some(&self.from),
            bounds: self.bounds.clone(),
        }
    }

    /// The whole prompt: the engine's preamble, the code, the states and the action.
    pub fn prompt(&self) -> &str {
        &self.prompt
    }

    /// The real state the action leads to.
    pub fn actual(&self) -> &State {
        &self.actual
    }
}

/// Works out the prompt for `question` about `code` from its real run `trace`.
pub fn prepare(
    model: &LoadedModel,
    trace: replayground_shared::Trace,
    code: &str,
    question: Question,
) -> Result<Prepared, Failure> {
    prepare_in(model, steppable(trace)?, code, question)
}

/// What the page asks first about a run: step into from its first stop.
pub fn prepare_first_step(
    model: &LoadedModel,
    trace: replayground_shared::Trace,
    code: &str,
) -> Result<Prepared, Failure> {
    let tree = steppable(trace)?;
    let question = Question {
        at_event: tree.initial_stop().event().unwrap_or_default() as u32,
        action: Action::StepInto,
        samples: 1,
        breakpoints: BTreeSet::new(),
    };
    prepare_in(model, tree, code, question)
}

/// The run as a tree to step through, or why the model cannot be asked about it.
fn steppable(trace: replayground_shared::Trace) -> Result<StateTree, Failure> {
    match &trace.outcome {
        Outcome::Crashed { message } => {
            return Err((
                ErrorCode::CannotTrace,
                format!("The program could not be traced: {}.", message.trim_end_matches('.')),
            ));
        }
        Outcome::SyntaxError { message, line, .. } => {
            let at = line.map(|l| format!(" on line {l}")).unwrap_or_default();
            return Err((
                ErrorCode::BadMessage,
                format!("The program has a syntax error{at} ({message}); fix it and run it before asking the model."),
            ));
        }
        _ => {}
    }
    StateTree::new(trace).map_err(|e| {
        (
            ErrorCode::CannotTrace,
            format!("The program's trace cannot be stepped through: {e}."),
        )
    })
}

/// Works out the prompt for `question` about `code` from the tree of its real run.
fn prepare_in(model: &LoadedModel, tree: StateTree, code: &str, question: Question) -> Result<Prepared, Failure> {
    let bad = |m: String| (ErrorCode::BadMessage, m);
    let len = tree.len();
    let at = match question.at_event as usize {
        i if i < len => Stop::Event(i),
        i if i == len => Stop::End,
        i => {
            return Err(bad(format!(
                "Event {i} is past the end of this program's run, which has {len} events; run the program again and step from there."
            )));
        }
    };
    let mut breakpoints = question.breakpoints.clone();
    let next = tree.step(at, question.action, &mut breakpoints);
    if next == at {
        let why = if at == Stop::End {
            "the program has ended there".to_owned()
        } else if question.action.is_reverse() {
            "there is nothing before this stop".to_owned()
        } else {
            "it does not move from this stop".to_owned()
        };
        return Err(bad(format!(
            "{} has nothing to predict from event {}: {why}.",
            question.action, question.at_event
        )));
    }
    let preamble = model.frame.preamble(code);
    let preamble_tokens = model.tokenizer.encode(preamble.as_str(), false).map_or(0, |e| e.len());
    let fits = |text: &str| {
        model
            .tokenizer
            .encode(text, false)
            .map(|e| e.len() + preamble_tokens)
            .ok()
            .filter(|&n| n + ANSWER_TOKENS <= model.context)
    };
    let route = route_trajectory(&tree, code, at, question.action);
    let (prompt, prompt_tokens) = prompt_for_route(&route, question.action, &fits).map_err(|e| match e {
        PromptError::Reserved => bad(
            "The program contains `<|`, which the model's trace language reserves; remove it to use neural mode.".to_owned(),
        ),
        PromptError::TooLong => (
            ErrorCode::TooLarge,
            format!(
                "This program and its state do not fit the model's context of {} tokens; try a shorter program or a model with a longer context.",
                model.context
            ),
        ),
    })?;
    let from = tree.state(at);
    Ok(Prepared {
        prompt: format!("{preamble}{prompt}"),
        route,
        bounds: Bounds::new(
            code,
            Some(&from),
            if question.action.is_reverse() {
                Direction::Inverse
            } else {
                Direction::Forward
            },
            question.action,
            Some(&question.breakpoints),
        ),
        from,
        actual: normalize_state(&tree.state(next)),
        max_tokens: MAX_ANSWER_TOKENS.min(model.context - prompt_tokens),
        at,
        action: question.action,
        breakpoints: question.breakpoints,
        samples: question.samples,
        tree,
    })
}

/// Why no prompt could be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptError {
    /// The code contains `<|`.
    Reserved,
    /// Even the code, the stop and the action alone are too long.
    TooLong,
}

/// The trace-language text that asks for the stop `action` leads to from `at`, with its
/// length in tokens as `fits` measured it (`None`: too long).
///
/// Forward: the code, then the states of a short route of forward steps from the first
/// stop to `at` (the last [`MAX_PREFIX_STEPS`] that fit), then the action, as the model
/// saw trajectories in training. Reverse: the code, `<|inverse|>`, the state at `at`
/// and the action.
pub fn prompt_for(
    tree: &StateTree,
    code: &str,
    at: Stop,
    action: Action,
    fits: &dyn Fn(&str) -> Option<usize>,
) -> Result<(String, usize), PromptError> {
    prompt_for_route(&route_trajectory(tree, code, at, action), action, fits)
}

/// [`prompt_for`] from the trajectory [`route_trajectory`] made: its last states that fit.
fn prompt_for_route(
    route: &Trajectory,
    action: Action,
    fits: &dyn Fn(&str) -> Option<usize>,
) -> Result<(String, usize), PromptError> {
    let first = route.steps.len().saturating_sub(PREFIX_WINDOW) / PREFIX_WINDOW * PREFIX_WINDOW;
    for start in first..route.steps.len() {
        let mut steps = route.steps[start..].to_vec();
        // The first state shown starts the trajectory: no action before it.
        steps[0].action = None;
        let trajectory = Trajectory {
            code: route.code.clone(),
            direction: route.direction,
            steps,
        };
        let mut text = trace_lang::serialize(&trajectory).map_err(|_| PromptError::Reserved)?;
        text.push_str(&trace_lang::action_text(action));
        text.push('\n');
        if let Some(tokens) = fits(&text) {
            return Ok((text, tokens));
        }
    }
    Err(PromptError::TooLong)
}

/// The trajectory a prompt about `action` from `at` shows: forward, a short route of
/// forward steps from the first stop ([`forward_route`]); reverse, the stop alone.
pub(crate) fn route_trajectory(tree: &StateTree, code: &str, at: Stop, action: Action) -> Trajectory {
    let (direction, route) = if action.is_reverse() {
        (Direction::Inverse, vec![(None, at)])
    } else {
        (Direction::Forward, forward_route(tree, at))
    };
    Trajectory {
        code: code.to_owned(),
        direction,
        steps: route
            .into_iter()
            .map(|(action, stop)| Step {
                action,
                state: tree.state(stop),
            })
            .collect(),
    }
}

/// A short route of forward steps from the first stop to `target`: at each stop the step
/// (out, over or into) that lands latest without passing it. Just `target` when no route
/// of forward steps reaches it (a stop reached by a jump).
pub fn forward_route(tree: &StateTree, target: Stop) -> Vec<(Option<Action>, Stop)> {
    let position = |stop: Stop| stop.event().unwrap_or(tree.len());
    let goal = position(target);
    let mut at = tree.initial_stop();
    let mut route = vec![(None, at)];
    while at != target {
        let best = [Action::StepReturn, Action::StepOver, Action::StepInto]
            .into_iter()
            .map(|action| (action, tree.step(at, action, &mut BTreeSet::new())))
            .filter(|&(_, stop)| position(stop) > position(at) && position(stop) <= goal)
            .max_by_key(|&(_, stop)| position(stop));
        let Some((action, stop)) = best else {
            return vec![(None, target)];
        };
        route.push((Some(action), stop));
        at = stop;
    }
    route
}

/// The forward action whose reverse `action` is, for the consistency check.
pub(crate) fn mirrored(action: Action) -> Option<Action> {
    match action {
        Action::ReverseStepInto => Some(Action::StepInto),
        Action::ReverseStepOver => Some(Action::StepOver),
        Action::ReverseContinue => Some(Action::Continue),
        _ => None,
    }
}

/// Whether the real run was in `candidate` at some stop from which the mirrored forward
/// action leads to `at`: a previous state consistent with the execution.
pub fn consistent_with_run(
    tree: &StateTree,
    candidate: &State,
    at: Stop,
    action: Action,
    breakpoints: &BTreeSet<u32>,
) -> bool {
    let Some(forward) = mirrored(action) else {
        return false;
    };
    let Some(line) = candidate.line else {
        return false;
    };
    let events = &tree.trace().events;
    (0..events.len()).any(|i| {
        let event = &events[i];
        event.line == line
            && StopKind::from(event.kind) == candidate.event
            && tree.step(Stop::Event(i), forward, &mut breakpoints.clone()) == at
            && normalize_state(&tree.state(Stop::Event(i)))
                .differences(candidate)
                .is_empty()
    })
}

/// Decodes every candidate on this (blocking) thread, streaming tokens; stops between
/// candidates once cancelled.
pub fn generate(
    debugger: &mut dyn Engine,
    prepared: &Prepared,
    tokens: &mpsc::Sender<(u32, String)>,
    cancel: &CancellationToken,
) -> anyhow::Result<Vec<Prediction>> {
    let mut predictions = Vec::with_capacity(prepared.samples as usize);
    for sample in 0..prepared.samples {
        if cancel.is_cancelled() {
            break;
        }
        let sampling = Sampling {
            temperature: if sample == 0 { 0.0 } else { SAMPLE_TEMPERATURE },
            top_p: Some(SAMPLE_TOP_P),
            seed: u64::from(sample),
            max_tokens: prepared.max_tokens,
            bounded: true,
            jump_forward: true,
            speculate: true,
        };
        let started = Instant::now();
        // A closed channel means the job is over; the answer is then dropped.
        let mut stream = |text: &str| {
            let _ = tokens.blocking_send((sample, text.to_owned()));
        };
        let answer = if debugger.answers_stepwise() {
            let breakpoints = Some(&prepared.breakpoints);
            debugger.answer(&prepared.route, prepared.action, breakpoints, &sampling, &mut stream)?
        } else {
            debugger.predict(&prepared.prompt, &prepared.guide(), &sampling, &mut stream)?
        };
        let elapsed = started.elapsed();
        tracing::debug!(
            sample,
            tokens = answer.tokens,
            ms = elapsed.as_millis() as u64,
            tokens_per_s = answer.tokens as f64 / elapsed.as_secs_f64().max(1e-9),
            "prediction"
        );
        let (state, parse_error) = match answer.state {
            Ok(state) => (Some(normalize_state(&state)), None),
            Err(e) => (None, Some(e)),
        };
        let matches = state
            .as_ref()
            .is_some_and(|s| s.differences(&prepared.actual).is_empty());
        let consistent = prepared.action.is_reverse().then(|| {
            state.as_ref().is_some_and(|s| {
                matches || consistent_with_run(&prepared.tree, s, prepared.at, prepared.action, &prepared.breakpoints)
            })
        });
        predictions.push(Prediction {
            sample,
            text: answer.text,
            state,
            parse_error,
            matches,
            consistent,
            tokens: answer.tokens as u32,
            elapsed_ms: elapsed.as_millis() as u64,
        });
    }
    Ok(predictions)
}

#[cfg(test)]
mod tests {
    use replayground_shared::EventKind::{Call, Line};
    use replayground_shared::test_util::TraceBuilder;

    use super::*;

    /// `def f(x): return x` called once: module call, line 1, line 3, f call, f line, f return, module line 4, module return.
    fn tree() -> StateTree {
        let mut b = TraceBuilder::new();
        let module = b.frame("<module>", None);
        let f = b.frame("f", Some(module));
        let two = b.int(2);
        b.event(Call, module, 1, &[]);
        b.event(Line, module, 1, &[]);
        b.event(Line, module, 3, &[]);
        b.event(Call, f, 1, &[("x", two)]);
        b.event(Line, f, 2, &[("x", two)]);
        b.returning(f, 2, &[("x", two)], Some(two));
        b.event(Line, module, 4, &[]);
        b.returning(module, 4, &[], None);
        StateTree::new(b.build()).unwrap()
    }

    #[test]
    fn the_route_reaches_the_stop_with_few_steps() {
        let tree = tree();
        let route = forward_route(&tree, Stop::Event(6));
        assert_eq!(route.first(), Some(&(None, tree.initial_stop())));
        assert_eq!(route.last().map(|r| r.1), Some(Stop::Event(6)));
        // Line 1 → over the call on line 3 → line 4: two steps, not five.
        assert_eq!(route.len(), 3, "{route:?}");
        let inside = forward_route(&tree, Stop::Event(4));
        assert_eq!(inside.last().map(|r| r.1), Some(Stop::Event(4)));
        assert!(inside.iter().skip(1).all(|(a, _)| a.is_some()));
    }

    #[test]
    fn prompts_end_with_the_action_and_shrink_to_fit() {
        let tree = tree();
        let code = "def f(x):\n    return x\nf(2)\n";
        let all = |_: &str| Some(10);
        let (text, _) = prompt_for(&tree, code, Stop::Event(6), Action::StepOver, &all).unwrap();
        assert!(text.starts_with("<|code|>\ndef f(x):"), "{text}");
        assert!(text.ends_with("<|step_over|>\n"), "{text}");
        assert_eq!(text.matches("<|line|>").count(), 3, "{text}");
        // Only room for one state: the stop itself.
        let short = |t: &str| (t.matches("<|line|>").count() <= 1).then_some(5);
        let (text, tokens) = prompt_for(&tree, code, Stop::Event(6), Action::StepOver, &short).unwrap();
        assert_eq!((text.matches("<|line|>").count(), tokens), (1, 5));
        assert!(text.contains("<|line|>4 0 <module>"), "{text}");
        let none = |_: &str| None;
        assert_eq!(
            prompt_for(&tree, code, Stop::Event(6), Action::StepOver, &none),
            Err(PromptError::TooLong)
        );
        let (inverse, _) = prompt_for(&tree, code, Stop::Event(4), Action::ReverseStepInto, &all).unwrap();
        assert!(inverse.contains("<|inverse|>\n<|line|>2 1 f"), "{inverse}");
        assert!(inverse.ends_with("<|reverse_step_into|>\n"));
        assert_eq!(
            prompt_for(&tree, "x = '<|'", Stop::Event(1), Action::StepOver, &all),
            Err(PromptError::Reserved)
        );
    }

    #[test]
    fn the_next_stops_prompt_extends_this_ones_until_the_window_moves_on() {
        // Twenty statements in a row: the route to line k steps over each one before it.
        let mut b = TraceBuilder::new();
        let module = b.frame("<module>", None);
        b.event(Call, module, 1, &[]);
        for line in 1..=20 {
            b.event(Line, module, line, &[]);
        }
        b.returning(module, 20, &[], None);
        let tree = StateTree::new(b.build()).unwrap();
        let code = (1..=20).fold(String::new(), |code, i| code + &format!("x{i} = {i}\n"));
        let all = |_: &str| Some(10);
        let prompt = |e: usize| {
            prompt_for(&tree, &code, Stop::Event(e), Action::StepOver, &all)
                .unwrap()
                .0
        };
        let mut moved = Vec::new();
        for e in 1..20 {
            let (this, next) = (prompt(e), prompt(e + 1));
            let states = this.strip_suffix("<|step_over|>\n").unwrap();
            if !next.starts_with(states) {
                moved.push(e + 1);
            }
            let shown = next.matches("<|line|>").count();
            assert!((1..2 * PREFIX_WINDOW).contains(&shown), "{shown} states:\n{next}");
        }
        // The route to event 16 has 16 stops (from line 1): the window starts at its ninth.
        assert_eq!(moved, [16]);
        assert!(prompt(15).contains("<|line|>1 0 <module>"), "{}", prompt(15));
        assert!(prompt(16).starts_with("<|code|>") && prompt(16).contains("<|end_code|>\n<|line|>9 0"));
    }

    #[test]
    fn a_previous_state_is_consistent_when_the_forward_step_leads_here() {
        let tree = tree();
        let at = Stop::Event(4);
        let before = normalize_state(&tree.state(Stop::Event(3)));
        let none = BTreeSet::new();
        assert!(consistent_with_run(&tree, &before, at, Action::ReverseStepInto, &none));
        let elsewhere = normalize_state(&tree.state(Stop::Event(6)));
        assert!(!consistent_with_run(
            &tree,
            &elsewhere,
            at,
            Action::ReverseStepInto,
            &none
        ));
        let mut wrong_value = before.clone();
        wrong_value.locals = Some(replayground_shared::Vars(vec![("x".into(), "3".into())]));
        assert!(!consistent_with_run(
            &tree,
            &wrong_value,
            at,
            Action::ReverseStepInto,
            &none
        ));
    }
}
