//! The jobs a WebSocket session runs, each in its own task: traces (streamed while the
//! program runs), neural-debugger predictions and reproduction-agent runs. Each ends with
//! exactly one last message: its end, `cancelled` or `error`.

use std::net::IpAddr;
use std::time::Instant;

use futures_util::future::BoxFuture;
use replayground_shared::protocol::{
    Envelope, ErrorCode, ServerEnvelope, ServerMessage, TraceProgress, chunk_trace_from,
};
use replayground_shared::trace::Trace;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{LIVE_FLUSH, error};
use crate::app::{AppState, TraceFailure};
use crate::http::repro::ReproJob;
use crate::jobs::TraceJob;
use crate::runner::TraceAssembler;
use predict::PredictJob;

pub(super) mod predict;

/// The kinds of job a session runs.
#[derive(Debug)]
pub(super) enum JobSpec {
    Trace(TraceJob),
    Predict(PredictJob),
    Repro(Box<ReproJob>),
}

/// What a job task needs.
pub(super) struct JobContext {
    pub(super) state: AppState,
    pub(super) id: u64,
    pub(super) data: mpsc::Sender<ServerEnvelope>,
    pub(super) cancel: CancellationToken,
    pub(super) events_per_chunk: usize,
    /// The session's client, for its fair share of the job slots.
    pub(super) client: IpAddr,
}

impl JobContext {
    /// The job's task: it streams the job's messages and ends with its last one.
    pub(super) fn run(self, spec: JobSpec) -> BoxFuture<'static, ()> {
        match spec {
            JobSpec::Trace(job) => Box::pin(trace_job(self, job)),
            JobSpec::Predict(job) => Box::pin(predict_job(self, job)),
            JobSpec::Repro(job) => Box::pin(repro_job(self, *job)),
        }
    }

    /// Queues a job message, waiting for room; `false` when the job was cancelled or the client is gone.
    pub(super) async fn send(&self, message: ServerMessage) -> bool {
        tokio::select! {
            sent = self.data.send(Envelope::job(self.id, message)) => sent.is_ok(),
            () = self.cancel.cancelled() => false,
        }
    }

    /// Sends the message that ends the job, even when the job was cancelled.
    async fn end(&self, last: ServerMessage) {
        let _ = self.data.send(Envelope::job(self.id, last)).await;
    }

    /// The `error` that ends the job (`busy` ones say when to try again).
    pub(super) fn error(&self, code: ErrorCode, message: String) -> ServerMessage {
        error(Some(self.id), None, code, message).body
    }

    /// The message that ends a cancelled job: the client's `cancel`, or the shutdown.
    fn cancelled(&self) -> ServerMessage {
        if self.state.shutdown.cancel_jobs.is_cancelled() {
            self.error(
                ErrorCode::ShuttingDown,
                "The server is shutting down and stopped this program; try again in a moment.".into(),
            )
        } else {
            ServerMessage::Cancelled
        }
    }

    /// The message that ends a job that got no slot or no trace.
    fn failed(&self, failure: &TraceFailure) -> ServerMessage {
        match failure {
            TraceFailure::Cancelled => self.cancelled(),
            failure => self.error(failure.code(), failure.to_string()),
        }
    }
}

/// Runs a neural debugger job ([`predict`]): tokens, then `predict_end`.
async fn predict_job(context: JobContext, job: PredictJob) {
    let last = predict::run(&context, job).await;
    context.end(last.unwrap_or_else(|| context.cancelled())).await;
}

/// Agent events waiting to be forwarded to the client; a slow client slows the agent.
const AGENT_EVENT_QUEUE: usize = 64;

/// Runs a reproduction job: a slot (like a trace), then the agent's events as `agent`
/// messages; the agent's `finished` or `failed` event ends it, or `cancelled` / `error`.
#[tracing::instrument(skip_all, fields(job = context.id))]
async fn repro_job(context: JobContext, job: ReproJob) {
    if let Some(last) = repro_job_messages(&context, job).await {
        context.end(last).await;
    }
}

async fn repro_job_messages(context: &JobContext, job: ReproJob) -> Option<ServerMessage> {
    let state = &context.state;
    let _permit = match state.job_slot(context.client, &context.cancel).await {
        Ok(permit) => permit,
        Err(failure) => return Some(context.failed(&failure)),
    };
    let deps = state.agent();
    let config = crate::repro::agent::AgentConfig {
        ablate: job.ablate,
        ..crate::repro::agent::AgentConfig::default()
    };
    let (events, mut received) = mpsc::channel(AGENT_EVENT_QUEUE);
    let agent = crate::repro::agent::run_agent(job.report, job.project, &deps, &config, events, context.cancel.clone());
    // Owns the receiver, so a client that is gone unblocks the agent at once.
    let forward = async move {
        while let Some(event) = received.recv().await {
            let last = matches!(
                event,
                replayground_shared::repro::AgentEvent::Finished { .. }
                    | replayground_shared::repro::AgentEvent::Failed { .. }
            );
            let message = ServerMessage::Agent { event };
            if !context.send(message).await {
                return false;
            }
            if last {
                return true;
            }
        }
        false
    };
    let (_, ended) = tokio::join!(agent, forward);
    if context.cancel.is_cancelled() {
        return Some(context.cancelled());
    }
    (!ended).then(|| {
        context.error(
            ErrorCode::Internal,
            "The agent stopped without a result; press Run to try again.".into(),
        )
    })
}

/// Runs a trace job: a slot, `trace_start`, chunks while it runs, then the rest and `trace_end`.
#[tracing::instrument(skip_all, fields(job = context.id, code_bytes = job.code.len()))]
async fn trace_job(context: JobContext, job: TraceJob) {
    let last = trace_job_messages(&context, &job).await;
    // The last message goes out even when the job was cancelled (then it says so).
    context.end(last).await;
}

async fn trace_job_messages(context: &JobContext, job: &TraceJob) -> ServerMessage {
    let state = &context.state;
    let mut live = LiveChunks::new(context);
    let run = state
        .run_in_slot(
            context.client,
            job,
            &context.cancel,
            async || context.send(ServerMessage::TraceStart).await,
            &mut |assembler| live.observe(assembler),
        )
        .await;
    let trace = match run {
        Ok(trace) => trace,
        Err(failure) => return context.failed(&failure),
    };
    let sent = live.sent;
    if !live.is_prefix_of(&trace) {
        return context.error(
            ErrorCode::CannotTrace,
            "The program could not be traced: the tracer's output was damaged after part of it was sent.".into(),
        );
    }
    for (frames, values, events) in chunk_trace_from(&trace, sent, context.events_per_chunk) {
        let chunk = ServerMessage::TraceChunk { frames, values, events };
        if !context.send(chunk).await {
            return context.cancelled();
        }
    }
    if job.neural {
        crate::neural::read_ahead::read_ahead(&state.neural, job.code.clone(), trace.clone());
    }
    let Trace {
        stdout,
        stderr,
        outcome,
        ..
    } = trace;
    ServerMessage::TraceEnd {
        stdout,
        stderr,
        outcome,
    }
}

/// Streams a trace while the program runs: whole chunks as they fill, and what there is
/// every [`LIVE_FLUSH`]. When the client is behind (no room in the queue), events simply
/// stay in the assembler until there is.
struct LiveChunks<'a> {
    context: &'a JobContext,
    sent: TraceProgress,
    last_flush: Instant,
    /// The largest output lengths the sent events refer to (see [`LiveChunks::is_prefix_of`]).
    max_stdout_len: u32,
    max_stderr_len: u32,
}

impl<'a> LiveChunks<'a> {
    fn new(context: &'a JobContext) -> Self {
        Self {
            context,
            sent: TraceProgress::default(),
            last_flush: Instant::now(),
            max_stdout_len: 0,
            max_stderr_len: 0,
        }
    }

    fn observe(&mut self, assembler: &TraceAssembler) {
        let per = self.context.events_per_chunk;
        loop {
            let pending = assembler.events().len() - self.sent.events;
            let due = pending >= per || (pending > 0 && self.last_flush.elapsed() >= LIVE_FLUSH);
            if !due {
                return;
            }
            let Ok(permit) = self.context.data.try_reserve() else {
                return;
            };
            let events = &assembler.events()[self.sent.events..self.sent.events + pending.min(per)];
            for e in events {
                self.max_stdout_len = self.max_stdout_len.max(e.stdout_len);
                self.max_stderr_len = self.max_stderr_len.max(e.stderr_len);
            }
            permit.send(Envelope::job(
                self.context.id,
                ServerMessage::TraceChunk {
                    frames: assembler.frames()[self.sent.frames..].to_vec(),
                    values: assembler.values()[self.sent.values..].to_vec(),
                    events: events.to_vec(),
                },
            ));
            self.sent = TraceProgress {
                frames: assembler.frames().len(),
                values: assembler.values().len(),
                events: self.sent.events + events.len(),
            };
            self.last_flush = Instant::now();
        }
    }

    /// Whether what was streamed is unchanged in the finished trace. The assembler only
    /// appends, except that a damaged stream yields an empty trace and a stream cut inside
    /// an output line clamps the events' output lengths.
    fn is_prefix_of(&self, trace: &Trace) -> bool {
        let len = |s: &str| u32::try_from(s.len()).unwrap_or(u32::MAX);
        trace.events.len() >= self.sent.events
            && trace.frames.len() >= self.sent.frames
            && trace.values.len() >= self.sent.values
            && self.max_stdout_len <= len(&trace.stdout)
            && self.max_stderr_len <= len(&trace.stderr)
    }
}
