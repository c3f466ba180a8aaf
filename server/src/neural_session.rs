//! The playground's neural mode: `predict` jobs that ask the neural debugger where a
//! debugger action leads, shown beside what the real run does (ground truth first).
//!
//! The model loads once, on a blocking thread, at start-up; a model directory that does
//! not load is logged and leaves neural mode off while the server keeps serving. A job
//! re-traces the program in the sandbox (the client's trace is never trusted), writes the
//! states before the stop in the trace language, and decodes the answer on a blocking
//! thread, one prediction at a time, streaming its tokens.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Instant;

use replayground_shared::protocol::{
    ErrorCode, MAX_PREDICT_SAMPLES, NeuralCapability, PredictRequest, Prediction, ServerMessage, TraceRequest,
};
use replayground_shared::trace_lang::{self, Direction, Step, Trajectory, normalize_state};
use replayground_shared::{Action, Outcome, State, StateTree, Stop, StopKind};
use tokenizers::Tokenizer;
use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;

use crate::app::{AppState, TraceFailure};
use crate::jobs::{BUSY_RETRY_AFTER_S, RequestError, TraceJob};
use crate::neural::infer::{Engine, PromptFrame, Sampling};
use crate::neural::rollout::{self, Rollout};

/// The checkpoint this repository ships, relative to the checkout (`cargo xtask serve`).
pub const BUNDLED_MODEL_DIR: &str = "models/neural-debugger-tiny";
/// Tokens kept free for the answer: a prompt longer than the context minus this is shortened.
const ANSWER_TOKENS: usize = 128;
/// Longest answer, in tokens.
const MAX_ANSWER_TOKENS: usize = 256;
/// States before the stop that the prompt shows at most (training trajectories have up to 24).
const MAX_PREFIX_STEPS: usize = 8;
/// How long a rollout waits for predictions ahead of it.
const ROLLOUT_QUEUE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);
/// Candidates after the first are sampled at this temperature (the first is greedy).
const SAMPLE_TEMPERATURE: f64 = 0.8;
const SAMPLE_TOP_P: f64 = 0.95;

/// The loaded model, or why there is none. Cheap to clone.
#[derive(Clone)]
pub struct NeuralService {
    slot: Arc<RwLock<Slot>>,
}

enum Slot {
    Off(String),
    Loading(String),
    Ready(Arc<LoadedModel>),
}

struct LoadedModel {
    name: String,
    /// One prediction at a time: the model keeps its KV cache inside.
    debugger: Arc<Mutex<Box<dyn Engine>>>,
    /// The engine's tokenizer, to fit prompts into its context without waiting for it.
    tokenizer: Tokenizer,
    /// What a prompt holds before the trajectory.
    frame: PromptFrame,
    context: usize,
}

impl std::fmt::Debug for NeuralService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NeuralService")
            .field("capability", &self.capability())
            .finish()
    }
}

impl Default for NeuralService {
    fn default() -> Self {
        Self::off(
            "Neural mode is off: this server has no model; start it with --model-dir DIR (a Qwen2-family directory such as models/neural-debugger-tiny).",
        )
    }
}

impl NeuralService {
    /// Neural mode off, with the sentence the page shows.
    pub fn off(reason: &str) -> Self {
        Self {
            slot: Arc::new(RwLock::new(Slot::Off(reason.to_owned()))),
        }
    }

    fn set(&self, slot: Slot) {
        if let Ok(mut s) = self.slot.write() {
            *s = slot;
        }
    }

    /// What the Welcome message tells the page.
    pub fn capability(&self) -> NeuralCapability {
        let Ok(slot) = self.slot.read() else {
            return NeuralCapability::default();
        };
        match &*slot {
            Slot::Ready(model) => NeuralCapability {
                available: true,
                model: Some(model.name.clone()),
                reason: None,
            },
            Slot::Loading(name) => NeuralCapability {
                available: false,
                model: Some(name.clone()),
                reason: Some(format!("The model {name} is still loading; try again in a moment.")),
            },
            Slot::Off(reason) => NeuralCapability {
                available: false,
                model: None,
                reason: Some(reason.clone()),
            },
        }
    }

    fn ready(&self) -> Result<Arc<LoadedModel>, String> {
        let slot = self
            .slot
            .read()
            .map_err(|_| "The neural debugger is unavailable.".to_owned())?;
        match &*slot {
            Slot::Ready(model) => Ok(Arc::clone(model)),
            Slot::Loading(name) => Err(format!("The model {name} is still loading; try again in a moment.")),
            Slot::Off(reason) => Err(reason.clone()),
        }
    }

    /// Rolls `code` forward in the model's head (see [`crate::neural::rollout`]), on a
    /// blocking thread once the model is free. Returns the model's name with the rollout,
    /// or the sentence saying why there is none (no model, still loading, busy, failed).
    pub async fn roll_out(&self, code: String, max_steps: usize) -> Result<(String, Rollout), String> {
        let model = self.ready()?;
        let guard = tokio::time::timeout(ROLLOUT_QUEUE_TIMEOUT, Arc::clone(&model.debugger).lock_owned())
            .await
            .map_err(|_| "The neural debugger is busy with other predictions.".to_owned())?;
        let name = model.name.clone();
        let rollout = tokio::task::spawn_blocking(move || {
            let mut debugger = guard;
            rollout::roll_out(&mut **debugger, &code, max_steps, &Sampling::default())
        })
        .await
        .map_err(|e| format!("The neural debugger's thread failed: {e}."))?
        .map_err(|e| format!("The neural debugger could not step through the script: {e:#}."))?;
        Ok((name, rollout))
    }

    /// Loads `dir` (an engine as [`crate::neural::load_engine`] names it) on a blocking
    /// thread. A failure is logged and leaves neural mode off with the reason; the
    /// server keeps serving either way.
    pub async fn load(&self, dir: PathBuf) -> Result<(), String> {
        let name = model_name(&dir);
        self.set(Slot::Loading(name.clone()));
        let started = Instant::now();
        let loading = dir.clone();
        let loaded = tokio::task::spawn_blocking(move || load_model(&loading))
            .await
            .map_err(|e| format!("the loading thread failed: {e}"))
            .and_then(|r| r.map_err(|e| format!("{e:#}")));
        match loaded {
            Ok(debugger) => {
                let context = debugger.context();
                let tokenizer = debugger.tokenizer().clone();
                let frame = debugger.frame();
                let name = debugger.name();
                tracing::info!(
                    model = %dir.display(),
                    seconds = started.elapsed().as_secs_f64(),
                    context,
                    "neural debugger model loaded; neural mode is on"
                );
                self.set(Slot::Ready(Arc::new(LoadedModel {
                    name,
                    debugger: Arc::new(Mutex::new(debugger)),
                    tokenizer,
                    frame,
                    context,
                })));
                Ok(())
            }
            Err(e) => {
                tracing::error!(
                    "cannot load the neural debugger model from {}: {e}; neural mode is off (fix the directory, pass --model-dir DIR, or --no-model)",
                    dir.display()
                );
                let reason =
                    format!("Neural mode is off: the model {name} could not be loaded ({e}); see the server log.");
                self.set(Slot::Off(reason.clone()));
                Err(reason)
            }
        }
    }

    /// What `serve` loads: `--no-model` wins, then `--model-dir`, then the bundled model
    /// when the working directory is a checkout. Loading runs in the background.
    pub fn start(&self, no_model: bool, model_dir: Option<PathBuf>) {
        if no_model {
            self.set(Slot::Off(
                "Neural mode is off: the server was started with --no-model.".to_owned(),
            ));
            tracing::info!("neural mode is off (--no-model)");
            return;
        }
        let Some(dir) = model_dir_to_load(model_dir) else {
            tracing::info!(
                "no model directory ({BUNDLED_MODEL_DIR} is not here and --model-dir is not set); neural mode is off"
            );
            return;
        };
        let service = self.clone();
        tokio::spawn(async move {
            let _ = service.load(dir).await;
        });
    }
}

/// The model to load: the one asked for, else the bundled one when the working
/// directory is a checkout.
pub fn model_dir_to_load(asked: Option<PathBuf>) -> Option<PathBuf> {
    asked.or_else(|| {
        Path::new(BUNDLED_MODEL_DIR)
            .join("config.json")
            .is_file()
            .then(|| PathBuf::from(BUNDLED_MODEL_DIR))
    })
}

fn model_name(dir: &Path) -> String {
    dir.file_name()
        .map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned())
}

fn load_model(dir: &Path) -> anyhow::Result<Box<dyn Engine>> {
    crate::neural::load_engine(
        &dir.to_string_lossy(),
        &candle_core::Device::Cpu,
        crate::neural::in_context::DEFAULT_MAX_PROMPT_TOKENS,
    )
}

/// A `predict` request, checked at the boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PredictJob {
    pub trace: TraceJob,
    pub at_event: u32,
    pub action: Action,
    pub samples: u32,
    pub breakpoints: BTreeSet<u32>,
}

impl TryFrom<PredictRequest> for PredictJob {
    type Error = RequestError;

    fn try_from(request: PredictRequest) -> Result<Self, Self::Error> {
        let action: Action = request
            .action
            .parse()
            .map_err(|e: replayground_shared::ActionParseError| {
                RequestError::Invalid(format!("{}.", sentence_case(&e.to_string())))
            })?;
        if matches!(action, Action::Jump(_)) {
            return Err(RequestError::Invalid(
                "jump is not a debugger step the model predicts; ask for a forward or reverse action.".to_owned(),
            ));
        }
        if request.samples == 0 || request.samples > MAX_PREDICT_SAMPLES {
            return Err(RequestError::Invalid(format!(
                "samples must be from 1 to {MAX_PREDICT_SAMPLES}, not {}.",
                request.samples
            )));
        }
        let trace = TraceJob::try_from(TraceRequest {
            code: request.code,
            stdin: request.stdin,
            max_steps: None,
        })?;
        Ok(Self {
            trace,
            at_event: request.at_event,
            action,
            samples: request.samples,
            breakpoints: request.breakpoints.into_iter().collect(),
        })
    }
}

fn sentence_case(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// Why a job ends without predictions.
type Failure = (ErrorCode, String);

fn failure(job: u64, (code, message): Failure) -> ServerMessage {
    ServerMessage::Error {
        seq: 0,
        job: Some(job),
        reply_to: None,
        code,
        message,
        retry_after_s: (code == ErrorCode::Busy).then_some(BUSY_RETRY_AFTER_S),
    }
}

/// Queues a job message, waiting for room; `false` when cancelled or the client is gone.
async fn send(out: &mpsc::Sender<ServerMessage>, cancel: &CancellationToken, message: ServerMessage) -> bool {
    tokio::select! {
        sent = out.send(message) => sent.is_ok(),
        () = cancel.cancelled() => false,
    }
}

/// Runs a predict job: its tokens go to `out`; the returned message ends the job.
/// `None` means it was cancelled (the caller says how).
#[tracing::instrument(skip_all, fields(job = id, action = %job.action))]
pub async fn run(
    state: &AppState,
    id: u64,
    job: PredictJob,
    out: &mpsc::Sender<ServerMessage>,
    cancel: &CancellationToken,
    client: std::net::IpAddr,
) -> Option<ServerMessage> {
    match run_inner(state, id, job, out, cancel, client).await {
        Ok(message) => message,
        Err(f) => Some(failure(id, f)),
    }
}

async fn run_inner(
    state: &AppState,
    id: u64,
    job: PredictJob,
    out: &mpsc::Sender<ServerMessage>,
    cancel: &CancellationToken,
    client: std::net::IpAddr,
) -> Result<Option<ServerMessage>, Failure> {
    // No model: say so before any program runs.
    let model = state.neural.ready().map_err(|m| (ErrorCode::NoModel, m))?;
    let Some(trace) = trace_again(state, &job, cancel, client).await? else {
        return Ok(None);
    };
    let prepare_model = Arc::clone(&model);
    let prepared = tokio::task::spawn_blocking(move || prepare(&prepare_model, trace, job))
        .await
        .map_err(|e| (ErrorCode::Internal, format!("The prediction failed: {e}.")))??;

    // One prediction at a time; others wait like queued sandbox jobs.
    let guard = tokio::select! {
        guard = tokio::time::timeout(state.config.queue_timeout, Arc::clone(&model.debugger).lock_owned()) => guard
            .map_err(|_| (ErrorCode::Busy, format!("The neural debugger is busy with other predictions; try again in {BUSY_RETRY_AFTER_S} seconds.")))?,
        () = cancel.cancelled() => return Ok(None),
    };
    let (tokens_tx, mut tokens) = mpsc::channel::<(u32, String)>(64);
    let stop = cancel.clone();
    let prepared = Arc::new(prepared);
    let generating = Arc::clone(&prepared);
    let mut generation = tokio::task::spawn_blocking(move || {
        let mut debugger = guard;
        generate(&mut **debugger, &generating, &tokens_tx, &stop)
    });
    let token_message = |(sample, text): (u32, String)| ServerMessage::PredictToken {
        seq: 0,
        job: id,
        sample,
        text,
    };
    let predictions = loop {
        tokio::select! {
            biased;
            () = cancel.cancelled() => return Ok(None),
            Some(token) = tokens.recv() => {
                if !send(out, cancel, token_message(token)).await {
                    return Ok(None);
                }
            }
            result = &mut generation => {
                while let Ok(token) = tokens.try_recv() {
                    if !send(out, cancel, token_message(token)).await {
                        return Ok(None);
                    }
                }
                break result
                    .map_err(|e| (ErrorCode::Internal, format!("The prediction failed: {e}.")))?
                    .map_err(|e| (ErrorCode::Internal, format!("The model failed while predicting: {e:#}.")))?;
            }
        }
    };
    if cancel.is_cancelled() {
        return Ok(None);
    }
    Ok(Some(ServerMessage::PredictEnd {
        seq: 0,
        job: id,
        predictions,
        actual: prepared.actual.clone(),
    }))
}

/// The program's real run, in a sandbox slot like any trace job; `None` when cancelled.
async fn trace_again(
    state: &AppState,
    job: &PredictJob,
    cancel: &CancellationToken,
    client: std::net::IpAddr,
) -> Result<Option<replayground_shared::Trace>, Failure> {
    let traced = async {
        let _permit = state.job_slot(client, cancel).await?;
        Ok::<_, TraceFailure>(state.run_trace(&job.trace, cancel, &mut |_| {}).await?.trace)
    };
    match traced.await {
        Ok(trace) => Ok(Some(trace)),
        Err(TraceFailure::Cancelled) => Ok(None),
        Err(failure) => Err((failure.code(), failure.to_string())),
    }
}

/// What decoding needs, worked out from the real run.
struct Prepared {
    tree: StateTree,
    at: Stop,
    action: Action,
    breakpoints: BTreeSet<u32>,
    samples: u32,
    prompt: String,
    /// Resolves `..` in the answer: the stop the action starts from.
    from: State,
    /// The real state the action leads to, normalised as the trace language writes it.
    actual: State,
    max_tokens: usize,
}

fn prepare(model: &LoadedModel, trace: replayground_shared::Trace, job: PredictJob) -> Result<Prepared, Failure> {
    let bad = |m: String| (ErrorCode::BadMessage, m);
    match &trace.outcome {
        Outcome::Crashed { message } => {
            return Err((
                ErrorCode::CannotTrace,
                format!("The program could not be traced: {}.", message.trim_end_matches('.')),
            ));
        }
        Outcome::SyntaxError { message, line, .. } => {
            let at = line.map(|l| format!(" on line {l}")).unwrap_or_default();
            return Err(bad(format!(
                "The program has a syntax error{at} ({message}); fix it and run it before asking the model."
            )));
        }
        _ => {}
    }
    let tree = StateTree::new(trace).map_err(|e| {
        (
            ErrorCode::CannotTrace,
            format!("The program's trace cannot be stepped through: {e}."),
        )
    })?;
    let len = tree.len();
    let at = match job.at_event as usize {
        i if i < len => Stop::Event(i),
        i if i == len => Stop::End,
        i => {
            return Err(bad(format!(
                "Event {i} is past the end of this program's run, which has {len} events; run the program again and step from there."
            )));
        }
    };
    let mut breakpoints = job.breakpoints.clone();
    let next = tree.step(at, job.action, &mut breakpoints);
    if next == at {
        let why = if at == Stop::End {
            "the program has ended there".to_owned()
        } else if job.action.is_reverse() {
            "there is nothing before this stop".to_owned()
        } else {
            "it does not move from this stop".to_owned()
        };
        return Err(bad(format!(
            "{} has nothing to predict from event {}: {why}.",
            job.action, job.at_event
        )));
    }
    let preamble = model.frame.preamble(&job.trace.code);
    let preamble_tokens = model.tokenizer.encode(preamble.as_str(), false).map_or(0, |e| e.len());
    let fits = |text: &str| {
        model
            .tokenizer
            .encode(text, false)
            .map(|e| e.len() + preamble_tokens)
            .ok()
            .filter(|&n| n + ANSWER_TOKENS <= model.context)
    };
    let (prompt, prompt_tokens) = prompt_for(&tree, &job.trace.code, at, job.action, &fits).map_err(|e| match e {
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
    Ok(Prepared {
        prompt: format!("{preamble}{prompt}"),
        from: tree.state(at),
        actual: normalize_state(&tree.state(next)),
        max_tokens: MAX_ANSWER_TOKENS.min(model.context - prompt_tokens),
        at,
        action: job.action,
        breakpoints: job.breakpoints,
        samples: job.samples,
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
    let (direction, route) = if action.is_reverse() {
        (Direction::Inverse, vec![(None, at)])
    } else {
        (Direction::Forward, forward_route(tree, at))
    };
    let most = route.len().min(MAX_PREFIX_STEPS);
    for keep in (1..=most).rev() {
        let mut steps: Vec<Step> = route[route.len() - keep..]
            .iter()
            .map(|&(action, stop)| Step {
                action,
                state: tree.state(stop),
            })
            .collect();
        // The first state shown starts the trajectory: no action before it.
        steps[0].action = None;
        let trajectory = Trajectory {
            code: code.to_owned(),
            direction,
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
fn mirrored(action: Action) -> Option<Action> {
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
fn generate(
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
        };
        let started = Instant::now();
        let answer = debugger.predict(&prepared.prompt, Some(&prepared.from), &sampling, &mut |text| {
            // A closed channel means the job is over; the answer is then dropped.
            let _ = tokens.blocking_send((sample, text.to_owned()));
        })?;
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
    use replayground_shared::Trace;
    use replayground_shared::trace::{Binding, Event, EventKind, Frame, Value};

    use super::*;

    /// `def f(x): return x` called once: module call, line 1, line 3, f call, f line, f return, module line 4, module return.
    fn tree() -> StateTree {
        let mut trace = Trace::empty(Outcome::Finished);
        for (function, parent, depth) in [("<module>", None, 0), ("f", Some(0), 1)] {
            trace.frames.push(Frame {
                function: function.into(),
                parent,
                depth,
                is_generator: false,
                called_from_library: false,
            });
        }
        trace.values.push(Value {
            repr: "2".into(),
            type_name: "int".into(),
            object_id: 1,
            shape: replayground_shared::trace::Shape::Scalar,
        });
        let event = |kind, frame, line, locals: Vec<Binding>, value| Event {
            kind,
            frame,
            line,
            locals: locals.into(),
            value,
            stdout_len: 0,
            stderr_len: 0,
            internal: false,
            generator_exit: false,
        };
        let x = || {
            vec![Binding {
                name: "x".into(),
                value: 0,
            }]
        };
        trace.events = vec![
            event(EventKind::Call, 0, 1, vec![], None),
            event(EventKind::Line, 0, 1, vec![], None),
            event(EventKind::Line, 0, 3, vec![], None),
            event(EventKind::Call, 1, 1, x(), None),
            event(EventKind::Line, 1, 2, x(), None),
            event(EventKind::Return, 1, 2, x(), Some(0)),
            event(EventKind::Line, 0, 4, vec![], None),
            event(EventKind::Return, 0, 4, vec![], None),
        ];
        StateTree::new(trace).unwrap()
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

    #[test]
    fn requests_are_checked() {
        let request = |action: &str, samples| PredictRequest {
            code: "x = 1".into(),
            stdin: String::new(),
            at_event: 1,
            action: action.into(),
            samples,
            breakpoints: vec![3],
        };
        let job = PredictJob::try_from(request("reverse_step_over", 3)).unwrap();
        assert_eq!((job.action, job.samples), (Action::ReverseStepOver, 3));
        assert!(job.breakpoints.contains(&3));
        for (action, samples) in [("fly", 1), ("jump:3", 1), ("step_into", 0), ("step_into", 99)] {
            let Err(RequestError::Invalid(message)) = PredictJob::try_from(request(action, samples)) else {
                panic!("{action} × {samples} is refused");
            };
            assert!(message.ends_with('.'), "{message}");
        }
    }
}
