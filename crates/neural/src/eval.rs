//! Evaluation of the neural debugger.
//!
//! `next-state`: over held-out trajectories, every state after the first is predicted
//! from the code, the real states before it and the action (teacher forcing), and
//! scored by exact match after normalisation. Reported overall, per action and by
//! horizon (the step's position in its trajectory), beside two baselines computed on
//! the same examples: *copy* (the state does not change), *next line* (the same
//! state one line further) and *bounds alone* (the answer the decoding bounds force
//! with no model, when they force a whole one). A model that does not beat them has
//! learned nothing.
//! Beside exact match, each field of a state is scored on its own (event, line,
//! function, depth, each variable, the value), so a model that gets the line right but
//! a value wrong shows it. The same scoring serves the realistic benchmark
//! ([`super::real_bench`]), whose trajectories come from hand-written programs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use replayground_shared::trace_lang::{self, Direction, Step, Trajectory, normalize_state};
use replayground_shared::{Action, State, StopKind};
use serde::Serialize;

use super::infer::{Engine, Guide, Sampling};

/// Exact matches out of a count.
#[derive(Debug, Default, Clone, Copy, Serialize, PartialEq)]
pub struct Score {
    pub n: usize,
    pub exact: usize,
    pub accuracy: f64,
}

impl Score {
    fn add(&mut self, hit: bool) {
        self.n += 1;
        self.exact += usize::from(hit);
        self.accuracy = self.exact as f64 / self.n as f64;
    }
}

/// Accuracy of each field of the predicted states. An answer that did not parse
/// misses every field. `variables` counts every name in the real or the predicted
/// frame (a variable the model invents is a miss); `value` counts the states where
/// either has a return value or exception.
#[derive(Debug, Default, Clone, Serialize)]
pub struct FieldScores {
    pub event: Score,
    pub line: Score,
    pub function: Score,
    pub depth: Score,
    pub variables: Score,
    pub value: Score,
}

impl FieldScores {
    fn add(&mut self, predicted: Option<&State>, expected: &State) {
        let Some(predicted) = predicted else {
            for score in [&mut self.event, &mut self.line, &mut self.function, &mut self.depth] {
                score.add(false);
            }
            for _ in frame_vars(expected).map_or(&[][..], |v| v.0.as_slice()) {
                self.variables.add(false);
            }
            if expected.value.is_some() {
                self.value.add(false);
            }
            return;
        };
        let differences = predicted.differences(expected);
        let differs = |field: &str| differences.iter().any(|d| d == field);
        self.event.add(!differs("event"));
        self.line.add(!differs("line"));
        self.function.add(!differs("function"));
        self.depth.add(!differs("depth"));
        if expected.value.is_some() || predicted.value.is_some() {
            self.value.add(!differs("value"));
        }
        let mut names: Vec<&str> = [predicted, expected]
            .iter()
            .flat_map(|s| frame_vars(s).map_or(&[][..], |v| v.0.as_slice()))
            .map(|(name, _)| name.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            let field_name = |field: &str| format!("{field}.{name}");
            self.variables.add(
                !differences
                    .iter()
                    .any(|d| *d == field_name("locals") || *d == field_name("globals")),
            );
        }
    }
}

/// The variables a state shows: the globals at module level, else the locals.
fn frame_vars(state: &State) -> Option<&replayground_shared::Vars> {
    if state.depth == Some(0) {
        state.globals.as_ref().or(state.locals.as_ref())
    } else {
        state.locals.as_ref()
    }
}

/// The JSON `replayground eval --suite next-state` (or `real`) prints for one engine.
#[derive(Debug, Default, Clone, Serialize)]
pub struct NextStateReport {
    pub suite: &'static str,
    pub engine: String,
    pub n: usize,
    pub pass_at_1: f64,
    pub parse_failures: usize,
    /// Why answers did not parse: `token_budget`, `unresolved_unchanged` (`..` for a
    /// variable the previous state lacks) or `other`.
    pub parse_failure_reasons: BTreeMap<&'static str, usize>,
    pub per_action: BTreeMap<String, Score>,
    pub by_horizon: BTreeMap<String, Score>,
    pub fields: FieldScores,
    pub baselines: BTreeMap<&'static str, Score>,
    pub tokens_generated: usize,
    /// Answers whose bounds left no token somewhere (finished under the grammar alone).
    pub bounds_dropped: usize,
    /// Wall-clock seconds per prediction on this machine, its prompt's new states
    /// included, with the program already read (as the playground has it read when the
    /// program runs; until 2026-12-05 this included reading each program).
    pub seconds_per_step: f64,
    /// Seconds to read each program before its first question ([`Engine::read_ahead`]),
    /// on average over the programs asked about.
    pub program_read_seconds: f64,
    /// Seconds the engine took before the first question to read what every prompt
    /// starts with ([`Engine::warm_up`]; a server does it once, at start-up).
    pub warm_up_seconds: f64,
    /// Every question's answer beside the truth (`eval --answers`; empty otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<Answer>,
}

/// One question: the action, the real next state and the engine's answer, as text.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    pub action: String,
    pub horizon: usize,
    pub expected: String,
    pub predicted: String,
    pub matches: bool,
    /// Whether the decoding bounds alone force the expected answer.
    pub forced: bool,
}

/// One prediction task: the prompt text, the previous state and the expected one.
#[derive(Debug, Clone)]
pub struct Example {
    /// The whole trajectory so far plus the action (see [`NeuralDebugger::prompt`] for
    /// the version fitted into a model's context).
    pub prompt: String,
    pub prefix: Trajectory,
    pub step_action: Action,
    pub action: String,
    pub horizon: usize,
    pub previous: State,
    pub expected: State,
}

/// A trajectory to ask about, with the breakpoints set during it where they are known
/// beyond its own `breakpoint:N` actions (an inverse trajectory does not record them;
/// the playground's page knows its own and hands them to the bounds).
#[derive(Debug, Clone)]
pub struct Walk {
    pub trajectory: Trajectory,
    pub breakpoints: Option<BTreeSet<u32>>,
}

impl From<Trajectory> for Walk {
    /// A trajectory alone: its breakpoints are what its own actions set.
    fn from(trajectory: Trajectory) -> Self {
        Self {
            trajectory,
            breakpoints: None,
        }
    }
}

/// Every (prefix, action) → next state task of a trajectory.
pub fn examples(trajectory: &Trajectory) -> anyhow::Result<Vec<Example>> {
    let mut out = Vec::new();
    for k in 1..trajectory.steps.len() {
        let Some(action) = trajectory.steps[k].action else {
            continue;
        };
        let prefix = prefix(trajectory, k);
        let mut prompt = trace_lang::serialize(&prefix)?;
        prompt.push_str(&trace_lang::action_text(action));
        prompt.push('\n');
        let name = match trajectory.direction {
            Direction::Forward => action.name(),
            Direction::Inverse => format!("{} (inverse)", action.name()),
        };
        out.push(Example {
            prompt,
            prefix,
            step_action: action,
            action: name.split(':').next().unwrap_or_default().to_owned(),
            horizon: k,
            previous: trajectory.steps[k - 1].state.clone(),
            expected: normalize_state(&trajectory.steps[k].state),
        });
    }
    Ok(out)
}

/// The baselines' guesses for an example.
fn baseline_copy(e: &Example) -> State {
    normalize_state(&e.previous)
}

fn baseline_next_line(e: &Example) -> State {
    let mut s = normalize_state(&e.previous);
    if s.event != StopKind::End {
        s.event = StopKind::Line;
        s.line = s.line.map(|l| l + 1);
        s.value = None;
    }
    s
}

/// Sorts a parse failure by its cause, from the decoder's message.
pub(crate) fn failure_reason(message: &str) -> &'static str {
    if message.contains("did not finish") {
        "token_budget"
    } else if message.contains("is `..`") {
        "unresolved_unchanged"
    } else {
        "other"
    }
}

fn horizon_bucket(h: usize) -> String {
    match h {
        1 => "1".into(),
        2..=3 => "2-3".into(),
        4..=7 => "4-7".into(),
        _ => "8+".into(),
    }
}

/// Reads the trajectories of a corpus split (`heldout.jsonl`).
pub fn load_trajectories(path: &Path) -> anyhow::Result<Vec<Trajectory>> {
    let data = std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    data.lines()
        .enumerate()
        .map(|(n, line)| {
            let record: serde_json::Value = serde_json::from_str(line)
                .map_err(|e| anyhow::anyhow!("{}:{}: not JSON: {e}", path.display(), n + 1))?;
            let text = record["text"]
                .as_str()
                .ok_or_else(|| anyhow::anyhow!("{}:{}: no text", path.display(), n + 1))?;
            trace_lang::parse(text).map_err(|e| anyhow::anyhow!("{}:{}: {e}", path.display(), n + 1))
        })
        .collect()
}

/// Which questions a next-state run asks.
#[derive(Debug, Clone, Copy)]
pub struct Selection {
    /// At most this many in all, from the first trajectory on.
    pub limit: usize,
    /// At most this many from each trajectory (its first steps), so that a short run
    /// still covers every program.
    pub per_trajectory: usize,
}

impl Selection {
    pub fn first(limit: usize) -> Self {
        Self {
            limit,
            per_trajectory: usize::MAX,
        }
    }
}

/// Runs the next-state suite (`suite` names it in the report) on the selected examples.
pub fn next_state(
    suite: &'static str,
    debugger: &mut dyn Engine,
    walks: &[Walk],
    selection: Selection,
    sampling: &Sampling,
    on_progress: &mut dyn FnMut(usize, usize),
) -> anyhow::Result<NextStateReport> {
    let warming = std::time::Instant::now();
    debugger.warm_up()?;
    let warm_up_seconds = warming.elapsed().as_secs_f64();
    let started = std::time::Instant::now();
    let limit = selection.limit;
    let mut all = Vec::new();
    for walk in walks {
        let asked = examples(&walk.trajectory)?.into_iter().take(selection.per_trajectory);
        all.extend(asked.map(|e| (e, walk.breakpoints.as_ref())));
        if all.len() >= limit {
            break;
        }
    }
    all.truncate(limit);
    let mut report = NextStateReport {
        suite,
        engine: debugger.name(),
        ..NextStateReport::default()
    };
    let mut overall = Score::default();
    let (mut reading, mut programs) = (std::time::Duration::ZERO, 0_usize);
    for (i, &(ref e, breakpoints)) in all.iter().enumerate() {
        if i == 0 || all[i - 1].0.prefix.code != e.prefix.code {
            let read = std::time::Instant::now();
            debugger.read_ahead(&debugger.prompt(&prefix(&e.prefix, 1), e.step_action, sampling)?)?;
            reading += read.elapsed();
            programs += 1;
        }
        let guide = Guide::after_with_breakpoints(&e.prefix, e.step_action, breakpoints);
        let prediction = debugger.answer(&e.prefix, e.step_action, breakpoints, sampling, &mut |_| {})?;
        report.tokens_generated += prediction.tokens;
        report.bounds_dropped += usize::from(prediction.bounds_dropped);
        let predicted = prediction.state.as_ref().ok().map(normalize_state);
        report.fields.add(predicted.as_ref(), &e.expected);
        let hit = if let Some(state) = &predicted {
            *state == e.expected
        } else {
            report.parse_failures += 1;
            let reason = prediction.state.as_ref().err().map_or("other", |m| failure_reason(m));
            *report.parse_failure_reasons.entry(reason).or_default() += 1;
            false
        };
        overall.add(hit);
        let forced = super::decode::forced_answer(&guide).is_some_and(|s| normalize_state(&s) == e.expected);
        report.answers.push(Answer {
            action: e.step_action.name(),
            horizon: e.horizon,
            expected: trace_lang::state_text(&e.expected, None).unwrap_or_default(),
            predicted: prediction.text.trim_end().to_owned(),
            matches: hit,
            forced,
        });
        report.per_action.entry(e.action.clone()).or_default().add(hit);
        report.by_horizon.entry(horizon_bucket(e.horizon)).or_default().add(hit);
        report
            .baselines
            .entry("copy")
            .or_default()
            .add(baseline_copy(e) == e.expected);
        report
            .baselines
            .entry("next_line")
            .or_default()
            .add(baseline_next_line(e) == e.expected);
        report.baselines.entry("bounds_alone").or_default().add(forced);
        on_progress(i + 1, all.len());
    }
    report.n = overall.n;
    report.pass_at_1 = overall.accuracy;
    report.seconds_per_step = started.elapsed().saturating_sub(reading).as_secs_f64() / overall.n.max(1) as f64;
    report.program_read_seconds = reading.as_secs_f64() / programs.max(1) as f64;
    report.warm_up_seconds = warm_up_seconds;
    Ok(report)
}

/// The trajectory of real states with the first `k` steps kept, for prompts built
/// from a live debugging session.
pub fn prefix(trajectory: &Trajectory, k: usize) -> Trajectory {
    Trajectory {
        code: trajectory.code.clone(),
        direction: trajectory.direction,
        steps: trajectory.steps.iter().take(k).cloned().collect::<Vec<Step>>(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use replayground_shared::Action;
    use replayground_shared::Vars;

    fn line(n: u32) -> State {
        State {
            event: StopKind::Line,
            line: Some(n),
            function: Some("f".into()),
            depth: Some(1),
            locals: Some(Vars(vec![("x".into(), "1".into())])),
            globals: None,
            value: None,
        }
    }

    #[test]
    fn each_field_is_scored_on_its_own_and_invented_variables_count_as_misses() {
        let expected = line(2);
        let mut wrong_value = line(2);
        wrong_value.locals = Some(Vars(vec![("x".into(), "2".into()), ("Counter".into(), "0".into())]));
        let mut fields = FieldScores::default();
        fields.add(Some(&expected), &expected);
        fields.add(Some(&wrong_value), &expected);
        fields.add(None, &expected);
        assert_eq!((fields.line.exact, fields.line.n), (2, 3));
        assert_eq!(
            (fields.event.exact, fields.function.exact, fields.depth.exact),
            (2, 2, 2)
        );
        // x right once; x wrong and the invented Counter; x missed by the unparsed answer.
        assert_eq!((fields.variables.exact, fields.variables.n), (1, 4));
        assert_eq!(fields.value.n, 0, "no state here has a value");
    }

    #[test]
    fn examples_cover_every_step_and_baselines_score_them() {
        let t = Trajectory {
            code: "x = 1\n".into(),
            direction: Direction::Forward,
            steps: vec![
                Step {
                    action: None,
                    state: line(1),
                },
                Step {
                    action: Some(Action::StepOver),
                    state: line(2),
                },
                Step {
                    action: Some(Action::Breakpoint(9)),
                    state: line(9),
                },
            ],
        };
        let ex = examples(&t).unwrap();
        assert_eq!(ex.len(), 2);
        assert!(ex[0].prompt.ends_with("<|step_over|>\n"));
        assert!(ex[1].prompt.ends_with("<|breakpoint|>9\n"));
        assert_eq!(ex[1].action, "breakpoint");
        assert_eq!(baseline_next_line(&ex[0]), ex[0].expected);
        assert_ne!(baseline_next_line(&ex[1]), ex[1].expected);
        assert_ne!(baseline_copy(&ex[0]), ex[0].expected);
    }
}
