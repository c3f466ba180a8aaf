//! The playground's neural mode as a student meets it (`eval --suite playground`): each
//! realistic program runs, the engine reads it while the page shows the run (as the
//! server does for a page in neural mode), then the student presses step into from the
//! first stop, and every step asks the model exactly what the page asks it
//! ([`predict::prepare`]: a short route of real states to the stop, then the action).
//! What it measures is the wait per step, beside the answers' exact match.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use replayground_shared::{Action, StateTree, Stop, Trace};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::predict::{self, Question};
use crate::service::LoadedModel;

/// One program of the walk: its source and its real run.
pub struct Run {
    pub code: String,
    pub trace: Trace,
}

/// What a walk measured, per engine.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WalkReport {
    pub suite: &'static str,
    pub engine: String,
    pub programs: usize,
    /// Steps asked (every step into of each walk, up to the limit per program).
    pub n: usize,
    pub pass_at_1: f64,
    /// Seconds from the question to the whole answer, the engine already holding the
    /// program (read ahead): mean, median, 90th percentile and the slowest.
    pub seconds_per_step: f64,
    pub seconds_p50: f64,
    pub seconds_p90: f64,
    pub seconds_max: f64,
    /// Seconds to read each program ahead, on average: what the first step would wait
    /// for without it.
    pub program_read_seconds: f64,
    /// Questions the page would get an error for (the prompt does not fit, say).
    pub refused: usize,
}

/// Walks each run with step into, at most `steps` questions a program.
pub fn walk(
    model: &LoadedModel,
    runs: &[Run],
    steps: usize,
    on_progress: &mut dyn FnMut(usize, usize),
) -> anyhow::Result<WalkReport> {
    let engine = model.engine();
    let mut debugger = engine.blocking_lock();
    debugger.warm_up()?;
    let (tokens, closed) = tokio::sync::mpsc::channel(1);
    // Nobody reads the streamed tokens: sending fails at once and is ignored.
    drop(closed);
    let never = CancellationToken::new();
    let question = |tree: &StateTree, at: Stop, action| Question {
        at_event: at.event().unwrap_or(tree.len()) as u32,
        action,
        samples: 1,
        breakpoints: BTreeSet::new(),
    };
    let mut report = WalkReport {
        suite: "playground",
        engine: model.name.clone(),
        programs: runs.len(),
        ..WalkReport::default()
    };
    let (mut reading, mut waits, mut hits) = (Duration::ZERO, Vec::new(), 0_usize);
    for (i, run) in runs.iter().enumerate() {
        let tree = StateTree::new(run.trace.clone()).map_err(|e| anyhow::anyhow!("{e}"))?;
        let started = Instant::now();
        if let Ok(prepared) = predict::prepare_first_step(model, run.trace.clone(), &run.code) {
            debugger.read_ahead(prepared.prompt())?;
        }
        reading += started.elapsed();
        let mut at = tree.initial_stop();
        for _ in 0..steps {
            let next = tree.step(at, Action::StepInto, &mut BTreeSet::new());
            if at == Stop::End || next == at {
                break;
            }
            let started = Instant::now();
            match predict::prepare(
                model,
                run.trace.clone(),
                &run.code,
                question(&tree, at, Action::StepInto),
            ) {
                Ok(prepared) => {
                    let answers = predict::generate(&mut **debugger, &prepared, &tokens, &never)?;
                    waits.push(started.elapsed().as_secs_f64());
                    hits += usize::from(answers.first().is_some_and(|a| a.matches));
                }
                Err(_) => report.refused += 1,
            }
            at = next;
        }
        on_progress(i + 1, runs.len());
    }
    report.n = waits.len() + report.refused;
    report.pass_at_1 = hits as f64 / report.n.max(1) as f64;
    report.program_read_seconds = reading.as_secs_f64() / runs.len().max(1) as f64;
    waits.sort_by(f64::total_cmp);
    let quantile = |q: f64| waits.get(((waits.len() as f64 - 1.0) * q).round() as usize).copied();
    report.seconds_per_step = waits.iter().sum::<f64>() / waits.len().max(1) as f64;
    report.seconds_p50 = quantile(0.5).unwrap_or_default();
    report.seconds_p90 = quantile(0.9).unwrap_or_default();
    report.seconds_max = waits.last().copied().unwrap_or_default();
    Ok(report)
}
