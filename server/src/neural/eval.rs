//! Evaluation of the neural debugger.
//!
//! `next-state`: over held-out trajectories, every state after the first is predicted
//! from the code, the real states before it and the action (teacher forcing), and
//! scored by exact match after normalisation. Reported overall, per action and by
//! horizon (the step's position in its trajectory), beside two baselines computed on
//! the same examples: *copy* (the state does not change) and *next line* (the same
//! state one line further). A model that does not beat them has learned nothing.

use std::collections::BTreeMap;
use std::path::Path;

use replayground_shared::trace_lang::{self, Direction, Step, Trajectory, normalize_state};
use replayground_shared::{Action, State, StopKind};
use serde::Serialize;

use super::infer::{NeuralDebugger, Sampling};

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

/// The JSON `replayground eval --suite next-state` prints.
#[derive(Debug, Default, Clone, Serialize)]
pub struct NextStateReport {
    pub suite: &'static str,
    pub n: usize,
    pub pass_at_1: f64,
    pub parse_failures: usize,
    /// Why answers did not parse: `token_budget`, `unresolved_unchanged` (`..` for a
    /// variable the previous state lacks) or `other`.
    pub parse_failure_reasons: BTreeMap<&'static str, usize>,
    pub per_action: BTreeMap<String, Score>,
    pub by_horizon: BTreeMap<String, Score>,
    pub baselines: BTreeMap<&'static str, Score>,
    pub tokens_generated: usize,
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

/// Every (prefix, action) → next state task of a trajectory.
pub fn examples(trajectory: &Trajectory) -> anyhow::Result<Vec<Example>> {
    let mut out = Vec::new();
    for k in 1..trajectory.steps.len() {
        let Some(action) = trajectory.steps[k].action else {
            continue;
        };
        let prefix = Trajectory {
            code: trajectory.code.clone(),
            direction: trajectory.direction,
            steps: trajectory.steps[..k].to_vec(),
        };
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

/// Runs the next-state suite on up to `limit` examples.
pub fn next_state(
    debugger: &mut NeuralDebugger,
    trajectories: &[Trajectory],
    limit: usize,
    sampling: &Sampling,
    on_progress: &mut dyn FnMut(usize, usize),
) -> anyhow::Result<NextStateReport> {
    let mut all = Vec::new();
    for t in trajectories {
        all.extend(examples(t)?);
        if all.len() >= limit {
            break;
        }
    }
    all.truncate(limit);
    let mut report = NextStateReport {
        suite: "next-state",
        ..NextStateReport::default()
    };
    let mut overall = Score::default();
    for (i, e) in all.iter().enumerate() {
        let prompt = debugger.prompt(&e.prefix, e.step_action, sampling)?;
        let prediction = debugger.predict(&prompt, Some(&e.previous), sampling, &mut |_| {})?;
        report.tokens_generated += prediction.tokens;
        let hit = if let Ok(state) = &prediction.state {
            normalize_state(state) == e.expected
        } else {
            report.parse_failures += 1;
            let reason = prediction.state.as_ref().err().map_or("other", |m| failure_reason(m));
            *report.parse_failure_reasons.entry(reason).or_default() += 1;
            false
        };
        overall.add(hit);
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
        on_progress(i + 1, all.len());
    }
    report.n = overall.n;
    report.pass_at_1 = overall.accuracy;
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
