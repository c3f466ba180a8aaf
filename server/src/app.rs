//! What every request and session shares: configuration, the tracer, the share store,
//! the job queue, metrics, the per-client rate limiter and the shutdown signals.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::ops::Deref;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::HeaderName;
use governor::clock::Clock as _;
use replayground_shared::Trace;
use replayground_shared::protocol::ErrorCode;
use tokio_util::sync::CancellationToken;

use crate::jobs::{JobPermit, JobQueue, QueueError, Shutdown, TraceJob};
use crate::metrics::{Metrics, outcome_label};
use crate::runner::{TraceAssembler, TraceRun, Tracer};
use crate::sandbox::{Job, RunLimits, SandboxError, Termination};
use crate::store::Store;

/// Settings of the HTTP server and its WebSocket sessions. The defaults are the
/// documented defaults of `replayground serve` (README, "Configuration").
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The built browser app (index.html and its hashed assets); `None` serves the API only.
    pub static_dir: Option<PathBuf>,
    /// Sandbox jobs that run at once. Default 4.
    pub max_jobs: usize,
    /// Jobs that may wait for a free slot; more are refused with 429 at once. Default 32.
    pub max_queued_jobs: usize,
    /// How long a queued job waits before it is refused with 429. Default 10 s.
    pub queue_timeout: Duration,
    /// Sustained API requests (and WebSocket jobs) per second per client IP; 0 turns the
    /// limit off. Default 10.
    pub rate_limit_per_second: u32,
    /// Requests a client may make in a burst above the sustained rate. Default 100.
    pub rate_limit_burst: u32,
    /// A header that carries the client's IP (set by a reverse proxy you run), e.g.
    /// `x-forwarded-for` (its last address counts). Default: none, the peer address counts.
    pub client_ip_header: Option<HeaderName>,
    /// How long running jobs may finish after SIGTERM or Ctrl-C before they are cancelled. Default 10 s.
    pub shutdown_grace: Duration,
    /// A connection must send a request's head within this, also when idle between
    /// requests; otherwise it is closed. Default 10 s.
    pub header_read_timeout: Duration,
    /// Open connections one client address may hold (WebSocket sessions count until
    /// their upgrade). Default 256: a classroom behind one NAT address fits.
    pub max_connections_per_ip: usize,
    /// Open connections in all, below the common 1,024 file descriptor limit with room
    /// for sandboxes and the store. Default 768.
    pub max_connections: usize,
    /// Serve `GET /metrics` (Prometheus text). Default off: it tells anyone how busy the
    /// server is and which outcomes its programs had.
    pub metrics: bool,
    /// Origins besides the server's own that may open the WebSocket (e.g. a dev server
    /// that proxies to this one). Default none.
    pub allowed_origins: Vec<String>,
    /// Bytes of share payloads the store may hold in all; past it new shares get 507.
    /// Default 1 GiB.
    pub max_share_storage_bytes: u64,
    pub ws: WsConfig,
}

/// WebSocket session settings.
#[derive(Debug, Clone)]
pub struct WsConfig {
    /// The `hello` must arrive within this. Default 5 s.
    pub handshake_timeout: Duration,
    /// A session without messages or running jobs for this long is closed. Default 5 min.
    pub idle_timeout: Duration,
    /// A session is closed this long after it opened. Default 1 h.
    pub session_timeout: Duration,
    /// Largest client message. Default 512 KiB (a 100 KB program and 100 KB of input,
    /// JSON-escaped, fit).
    pub max_message_bytes: usize,
    /// Jobs one session may run at once. Default 2.
    pub max_jobs_per_session: usize,
    /// Server messages waiting to be written to one client; trace chunks wait for room,
    /// other messages finding it full close the session. Default 64.
    pub outbound_queue: usize,
    /// A client that accepts no data for this long is disconnected. Default 30 s.
    pub send_timeout: Duration,
    /// Events per `trace_chunk`. Default 2000.
    pub events_per_chunk: usize,
}

impl Default for WsConfig {
    fn default() -> Self {
        Self {
            handshake_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_secs(5 * 60),
            session_timeout: Duration::from_secs(60 * 60),
            max_message_bytes: 512 * 1024,
            max_jobs_per_session: 2,
            outbound_queue: 64,
            send_timeout: Duration::from_secs(30),
            events_per_chunk: 2000,
        }
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            static_dir: None,
            max_jobs: 4,
            max_queued_jobs: 32,
            queue_timeout: Duration::from_secs(10),
            rate_limit_per_second: 10,
            rate_limit_burst: 100,
            client_ip_header: None,
            shutdown_grace: Duration::from_secs(10),
            header_read_timeout: Duration::from_secs(10),
            max_connections_per_ip: 256,
            max_connections: 768,
            metrics: false,
            allowed_origins: Vec::new(),
            max_share_storage_bytes: 1 << 30,
            ws: WsConfig::default(),
        }
    }
}

/// Shared by every request; cheap to clone.
#[derive(Clone)]
pub struct AppState(Arc<App>);

impl Deref for AppState {
    type Target = App;

    fn deref(&self) -> &App {
        &self.0
    }
}

pub struct App {
    pub config: ServerConfig,
    pub tracer: Tracer,
    pub store: Store,
    pub jobs: JobQueue,
    pub metrics: Arc<Metrics>,
    pub limiter: Option<ClientLimiter>,
    pub shutdown: Shutdown,
    /// The neural debugger for `predict` jobs (off until a model loads).
    pub neural: crate::neural::service::NeuralService,
    /// Projects uploaded for the reproduction agent (`POST /api/projects`).
    pub projects: crate::projects::ProjectStore,
    /// The reproduction agent's sandbox and models, set once at startup ([`App::set_agent`]).
    agent: std::sync::OnceLock<Arc<crate::repro::agent::AgentDeps>>,
    sandbox_health: Mutex<Option<(Instant, Result<(), String>)>>,
    /// One sandbox probe at a time.
    probe: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("config", &self.config)
            .field("tracer", &self.tracer)
            .field("store", &self.store.backend())
            .finish_non_exhaustive()
    }
}

/// How a trace job ended without a trace.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the job was cancelled")]
    Cancelled,
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
}

/// Why a trace job gave no trace to show, in the words every front end (HTTP, WebSocket,
/// the neural debugger's real run) sends on; each maps it to its own status or code.
#[derive(Debug, thiserror::Error)]
pub enum TraceFailure {
    #[error("the job was cancelled")]
    Cancelled,
    /// No job slot: the queue is full, timed out, or the server is shutting down.
    #[error(transparent)]
    Queue(#[from] QueueError),
    /// Every sandbox uid is taken by another job.
    #[error("{0}")]
    SandboxBusy(String),
    #[error("{0}")]
    NoSandbox(String),
    /// The program ran but the tracer could not say what it did.
    #[error("{0}")]
    CannotTrace(String),
}

impl TraceFailure {
    /// The WebSocket protocol's code for it (`Cancelled` is answered with `cancelled`).
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Queue(QueueError::ShuttingDown) => ErrorCode::ShuttingDown,
            Self::Queue(_) | Self::SandboxBusy(_) | Self::Cancelled => ErrorCode::Busy,
            Self::NoSandbox(_) => ErrorCode::NoSandbox,
            Self::CannotTrace(_) => ErrorCode::CannotTrace,
        }
    }
}

impl From<RunError> for TraceFailure {
    fn from(e: RunError) -> Self {
        match e {
            RunError::Cancelled => Self::Cancelled,
            RunError::Sandbox(e @ SandboxError::Busy { .. }) => Self::SandboxBusy(sentence(&e.to_string())),
            RunError::Sandbox(e) => Self::NoSandbox(sentence(&e.to_string())),
        }
    }
}

/// A sandbox message as a sentence: capitalised, ending in a full stop.
pub(crate) fn sentence(message: &str) -> String {
    let message = message.trim().trim_end_matches('.');
    let mut chars = message.chars();
    match chars.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str()),
        None => "The sandbox failed.".to_owned(),
    }
}

/// `trace` when the client can show it; a trace whose tracer crashed is a failure.
pub fn showable(trace: Trace) -> Result<Trace, TraceFailure> {
    match &trace.outcome {
        replayground_shared::Outcome::Crashed { message } => Err(TraceFailure::CannotTrace(format!(
            "The program could not be traced: {}.",
            message.trim_end_matches('.')
        ))),
        _ => Ok(trace),
    }
}

/// A healthy sandbox is probed again after this long without a successful run.
const HEALTHY_FOR: Duration = Duration::from_secs(30);
/// A broken sandbox is probed again after this long.
const UNHEALTHY_FOR: Duration = Duration::from_secs(5);

impl AppState {
    pub fn new(tracer: Tracer, store: Store, config: ServerConfig) -> Self {
        let metrics = Arc::new(Metrics::new());
        let jobs = JobQueue::new(
            config.max_jobs,
            config.max_queued_jobs,
            config.queue_timeout,
            Arc::clone(&metrics),
        );
        let limiter = ClientLimiter::new(config.rate_limit_per_second, config.rate_limit_burst);
        Self(Arc::new(App {
            config,
            tracer,
            store,
            jobs,
            metrics,
            limiter,
            shutdown: Shutdown::new(),
            neural: crate::neural::service::NeuralService::default(),
            projects: crate::projects::ProjectStore::default(),
            agent: std::sync::OnceLock::new(),
            sandbox_health: Mutex::new(None),
            probe: tokio::sync::Mutex::new(()),
        }))
    }
}

impl App {
    /// Gives the reproduction agent its models; `false` when it already had them.
    pub fn set_agent(&self, deps: crate::repro::agent::AgentDeps) -> bool {
        self.agent.set(Arc::new(deps)).is_ok()
    }

    /// The reproduction agent's dependencies: those set at startup, else the tracer's
    /// sandbox and Python without models (rule-based generation, BM25 only).
    pub fn agent(&self) -> Arc<crate::repro::agent::AgentDeps> {
        Arc::clone(self.agent.get_or_init(|| {
            Arc::new(crate::repro::agent::AgentDeps::without_models(
                Arc::clone(self.tracer.sandbox()),
                self.tracer.python().to_owned(),
                Some(self.neural.clone()),
            ))
        }))
    }

    /// A job slot for `client` from the fair queue; `cancel` gives up waiting. Every
    /// sandbox job (trace, reproduction, the neural debugger's real run) holds one.
    pub async fn job_slot(&self, client: IpAddr, cancel: &CancellationToken) -> Result<JobPermit, TraceFailure> {
        tokio::select! {
            slot = self.jobs.acquire(client, &self.shutdown.draining) => Ok(slot?),
            () = cancel.cancelled() => Err(TraceFailure::Cancelled),
        }
    }

    /// The one way a client's program runs (HTTP, WebSocket and predict jobs): a job slot
    /// from the fair queue, then the trace of `job` in it, the slot freed as soon as the
    /// run ends. `slot_taken` hears that the slot is held (answering `false` gives up, as
    /// a cancel does); `observe` sees the assembler as the tracer's output arrives;
    /// `cancel` stops the wait or kills the sandbox. A trace whose tracer crashed is a
    /// failure, not a trace to show.
    pub async fn run_in_slot(
        &self,
        client: IpAddr,
        job: &TraceJob,
        cancel: &CancellationToken,
        slot_taken: impl AsyncFnOnce() -> bool,
        observe: &mut (dyn FnMut(&TraceAssembler) + Send),
    ) -> Result<Trace, TraceFailure> {
        let slot = self.job_slot(client, cancel).await?;
        if !slot_taken().await {
            return Err(TraceFailure::Cancelled);
        }
        let run = self.run_trace(job, cancel, observe).await;
        drop(slot);
        showable(run?.trace)
    }

    /// Traces `job` (the caller holds its job slot), showing `observe` the assembler as
    /// the tracer's output arrives. `cancel` kills the sandbox.
    async fn run_trace(
        &self,
        job: &TraceJob,
        cancel: &CancellationToken,
        observe: &mut (dyn FnMut(&TraceAssembler) + Send),
    ) -> Result<TraceRun, RunError> {
        let mut limits = self.tracer.limits().clone();
        if let Some(steps) = job.max_steps {
            limits.max_events = limits.max_events.min(steps.get());
        }
        let started = Instant::now();
        // Dropping the run future kills the sandboxed process group (kill_on_drop).
        let result = tokio::select! {
            result = self.tracer.run_observed(&job.code, &job.stdin, &limits, observe) => result,
            () = cancel.cancelled() => {
                self.metrics.run("cancelled", started.elapsed());
                return Err(RunError::Cancelled);
            }
        };
        match &result {
            Ok(run) => {
                self.metrics.run(outcome_label(&run.trace.outcome), started.elapsed());
                self.note_sandbox(Ok(()));
            }
            Err(e) => {
                self.metrics.run("sandbox_error", started.elapsed());
                tracing::error!("the sandbox could not run a program: {e}");
                if !matches!(e, SandboxError::Busy { .. }) {
                    self.note_sandbox(Err(e.to_string()));
                }
            }
        }
        Ok(result?)
    }

    fn note_sandbox(&self, result: Result<(), String>) {
        if let Ok(mut health) = self.sandbox_health.lock() {
            *health = Some((Instant::now(), result));
        }
    }

    /// Whether the sandbox can run programs: the last run's verdict while recent, else a
    /// trial run of `/bin/true`.
    pub async fn check_sandbox(&self) -> Result<(), String> {
        let recent = |health: &Option<(Instant, Result<(), String>)>| match health {
            Some((at, Ok(()))) if at.elapsed() < HEALTHY_FOR => Some(Ok(())),
            Some((at, Err(e))) if at.elapsed() < UNHEALTHY_FOR => Some(Err(e.clone())),
            _ => None,
        };
        if let Some(verdict) = self.sandbox_health.lock().ok().and_then(|h| recent(&h)) {
            return verdict;
        }
        let _one_at_a_time = self.probe.lock().await;
        if let Some(verdict) = self.sandbox_health.lock().ok().and_then(|h| recent(&h)) {
            return verdict;
        }
        let job = Job {
            program: PathBuf::from("/bin/true"),
            args: Vec::new(),
            stdin: Vec::new(),
            limits: RunLimits {
                wall_time: Duration::from_secs(5),
                ..RunLimits::default()
            },
        };
        let verdict = match tokio::time::timeout(
            Duration::from_secs(10),
            self.tracer.sandbox().run(job, &mut crate::sandbox::discard),
        )
        .await
        {
            Ok(Ok(report)) if report.termination == Termination::Exited(0) => Ok(()),
            Ok(Ok(report)) => Err(format!(
                "a trial run in the sandbox ended with {:?}: {}",
                report.termination,
                report.stderr.trim()
            )),
            Ok(Err(SandboxError::Busy { .. })) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("a trial run in the sandbox did not finish within 10 s".to_owned()),
        };
        self.note_sandbox(verdict.clone());
        verdict
    }
}

/// Requests per client IP: a GCRA token bucket per address (`governor`).
pub struct ClientLimiter {
    limiter: governor::DefaultKeyedRateLimiter<IpAddr>,
}

impl ClientLimiter {
    /// `None` when `per_second` is 0 (no limit).
    pub fn new(per_second: u32, burst: u32) -> Option<Self> {
        let per_second = NonZeroU32::new(per_second)?;
        let burst = NonZeroU32::new(burst).unwrap_or(per_second);
        let quota = governor::Quota::per_second(per_second).allow_burst(burst);
        Some(Self {
            limiter: governor::RateLimiter::keyed(quota),
        })
    }

    /// `Err(wait)` when `ip` must wait before its next request.
    pub fn check(&self, ip: IpAddr) -> Result<(), Duration> {
        self.limiter
            .check_key(&ip)
            .map_err(|not_until| not_until.wait_time_from(self.limiter.clock().now()))
    }

    /// Forgets clients whose buckets are full again, so memory follows active clients.
    pub fn forget_idle(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }

    pub fn clients(&self) -> usize {
        self.limiter.len()
    }
}

/// Whole seconds to wait, at least 1 (`Retry-After` takes integers).
pub fn retry_after_secs(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limiter_keys_by_address() {
        let limiter = ClientLimiter::new(1, 2).unwrap();
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        assert!(limiter.check(a).is_ok());
        assert!(limiter.check(a).is_ok());
        let wait = limiter.check(a).unwrap_err();
        assert!(wait <= Duration::from_secs(1), "{wait:?}");
        assert!(limiter.check(b).is_ok(), "another client has its own bucket");
        assert!(ClientLimiter::new(0, 10).is_none());
        assert_eq!(retry_after_secs(Duration::from_millis(1)), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(1500)), 2);
        assert_eq!(retry_after_secs(Duration::from_secs(3)), 3);
    }
}
