//! Sandbox jobs: the domain form of a trace request, the cap on jobs that run at once
//! with its bounded wait queue, and the shutdown signals that end them.
//!
//! HTTP requests and WebSocket jobs share one [`JobQueue`]: at most `max_jobs` run,
//! at most `max_queued` wait (each for at most `queue_timeout`), and everyone else is
//! told at once that the server is busy.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use replayground_shared::protocol::{MAX_CODE_BYTES, MAX_STDIN_BYTES, TraceRequest};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::metrics::Metrics;

/// Seconds a busy client is told to wait (`Retry-After`, `retry_after_s`).
pub const BUSY_RETRY_AFTER_S: u64 = 5;

/// A program to trace, checked at the boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceJob {
    pub code: String,
    pub stdin: String,
    /// At most this many events; the server's own ceiling still applies.
    pub max_steps: Option<NonZeroU32>,
}

/// Why a request does not become a job.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// The program or its input is over a size limit.
    #[error("{0}")]
    TooLarge(String),
    /// A field has a value the server cannot use.
    #[error("{0}")]
    Invalid(String),
}

impl TryFrom<TraceRequest> for TraceJob {
    type Error = RequestError;

    fn try_from(request: TraceRequest) -> Result<Self, Self::Error> {
        if let Err(message) = request.check() {
            let too_large = request.code.len() > MAX_CODE_BYTES || request.stdin.len() > MAX_STDIN_BYTES;
            return Err(if too_large {
                RequestError::TooLarge(message)
            } else {
                RequestError::Invalid(message)
            });
        }
        Ok(Self {
            code: request.code,
            stdin: request.stdin,
            max_steps: request.max_steps.and_then(NonZeroU32::new),
        })
    }
}

/// Why a job did not get a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    #[error(
        "The server is busy: every sandbox is running and the wait queue is full; try again in {BUSY_RETRY_AFTER_S} seconds."
    )]
    Full,
    #[error("The server is busy: no sandbox became free in time; try again in {BUSY_RETRY_AFTER_S} seconds.")]
    TimedOut,
    #[error("The server is shutting down and takes no new programs; try again in a moment.")]
    ShuttingDown,
}

impl QueueError {
    pub fn metric_reason(self) -> &'static str {
        match self {
            Self::Full => "queue_full",
            Self::TimedOut => "queue_timeout",
            Self::ShuttingDown => "shutting_down",
        }
    }
}

/// The cap on concurrent sandbox jobs, with a bounded queue of waiters.
#[derive(Debug, Clone)]
pub struct JobQueue {
    inner: Arc<QueueInner>,
}

#[derive(Debug)]
struct QueueInner {
    slots: Arc<Semaphore>,
    max_jobs: usize,
    max_queued: usize,
    queue_timeout: Duration,
    waiting: AtomicUsize,
    metrics: Arc<Metrics>,
}

/// A running job's slot; freed when dropped.
#[derive(Debug)]
pub struct JobPermit {
    _slot: OwnedSemaphorePermit,
    metrics: Arc<Metrics>,
}

impl Drop for JobPermit {
    fn drop(&mut self) {
        self.metrics.jobs_running.dec();
    }
}

/// Counts a waiter for as long as it waits.
struct Waiting<'a>(&'a QueueInner);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::SeqCst);
        self.0.metrics.jobs_queued.dec();
    }
}

impl JobQueue {
    pub fn new(max_jobs: usize, max_queued: usize, queue_timeout: Duration, metrics: Arc<Metrics>) -> Self {
        let max_jobs = max_jobs.max(1);
        Self {
            inner: Arc::new(QueueInner {
                slots: Arc::new(Semaphore::new(max_jobs)),
                max_jobs,
                max_queued,
                queue_timeout,
                waiting: AtomicUsize::new(0),
                metrics,
            }),
        }
    }

    pub fn max_jobs(&self) -> usize {
        self.inner.max_jobs
    }

    /// Jobs running now.
    pub fn running(&self) -> usize {
        self.inner.max_jobs - self.inner.slots.available_permits()
    }

    /// Jobs waiting for a slot now.
    pub fn queued(&self) -> usize {
        self.inner.waiting.load(Ordering::SeqCst)
    }

    /// A slot now, or after waiting in the queue; never waits when the queue is full.
    pub async fn acquire(&self, shutdown: &CancellationToken) -> Result<JobPermit, QueueError> {
        let inner = &*self.inner;
        let result = self.try_acquire(shutdown).await;
        if let Err(e) = result {
            inner.metrics.rejected(e.metric_reason());
        }
        result
    }

    async fn try_acquire(&self, shutdown: &CancellationToken) -> Result<JobPermit, QueueError> {
        let inner = &*self.inner;
        if shutdown.is_cancelled() {
            return Err(QueueError::ShuttingDown);
        }
        if let Ok(slot) = Arc::clone(&inner.slots).try_acquire_owned() {
            return Ok(self.permit(slot));
        }
        if inner.waiting.fetch_add(1, Ordering::SeqCst) >= inner.max_queued {
            inner.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(QueueError::Full);
        }
        inner.metrics.jobs_queued.inc();
        let _waiting = Waiting(inner);
        tokio::select! {
            slot = Arc::clone(&inner.slots).acquire_owned() => {
                // The semaphore is never closed.
                slot.map(|slot| self.permit(slot)).map_err(|_| QueueError::ShuttingDown)
            }
            () = tokio::time::sleep(inner.queue_timeout) => Err(QueueError::TimedOut),
            () = shutdown.cancelled() => Err(QueueError::ShuttingDown),
        }
    }

    fn permit(&self, slot: OwnedSemaphorePermit) -> JobPermit {
        self.inner.metrics.jobs_running.inc();
        JobPermit {
            _slot: slot,
            metrics: Arc::clone(&self.inner.metrics),
        }
    }
}

/// How the server stops: first it stops taking work (`draining`), then, after the grace
/// period, it cancels what still runs (`cancel_jobs`: their sandboxes are killed).
/// Sessions and jobs register in `tasks` so that the server can wait for them.
#[derive(Debug, Clone, Default)]
pub struct Shutdown {
    pub draining: CancellationToken,
    pub cancel_jobs: CancellationToken,
    pub tasks: TaskTracker,
}

impl Shutdown {
    pub fn new() -> Self {
        Self::default()
    }

    /// Stops taking work now, and cancels running jobs after `grace`.
    pub fn begin(&self, grace: Duration) {
        if self.draining.is_cancelled() {
            return;
        }
        tracing::info!(grace_s = grace.as_secs_f64(), "shutting down: finishing running jobs");
        self.draining.cancel();
        let cancel = self.cancel_jobs.clone();
        tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            if !cancel.is_cancelled() {
                tracing::warn!("grace period over: cancelling the jobs still running");
                cancel.cancel();
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(code: &str, stdin: &str, max_steps: Option<u32>) -> TraceRequest {
        TraceRequest {
            code: code.into(),
            stdin: stdin.into(),
            max_steps,
        }
    }

    #[test]
    fn requests_become_jobs_or_say_why_not() {
        let job = TraceJob::try_from(request("x = 1", "", Some(10))).unwrap();
        assert_eq!(job.max_steps, NonZeroU32::new(10));
        assert!(matches!(
            TraceJob::try_from(request(&"x".repeat(MAX_CODE_BYTES + 1), "", None)),
            Err(RequestError::TooLarge(_))
        ));
        assert!(matches!(
            TraceJob::try_from(request("x", &"x".repeat(MAX_STDIN_BYTES + 1), None)),
            Err(RequestError::TooLarge(_))
        ));
        assert!(matches!(
            TraceJob::try_from(request("x", "", Some(0))),
            Err(RequestError::Invalid(_))
        ));
    }

    #[tokio::test]
    async fn the_queue_is_bounded_and_waiters_time_out() {
        let queue = JobQueue::new(1, 1, Duration::from_millis(200), Arc::new(Metrics::new()));
        let never = CancellationToken::new();
        let first = queue.acquire(&never).await.unwrap();
        assert_eq!(queue.running(), 1);
        let q2 = queue.clone();
        let never2 = never.clone();
        let waiter = tokio::spawn(async move { q2.acquire(&never2).await.map(drop) });
        while queue.queued() == 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!(queue.acquire(&never).await.unwrap_err(), QueueError::Full);
        assert_eq!(waiter.await.unwrap(), Err(QueueError::TimedOut));
        assert_eq!(queue.queued(), 0);
        drop(first);
        let again = queue.acquire(&never).await.unwrap();
        let stopping = CancellationToken::new();
        stopping.cancel();
        drop(again);
        assert_eq!(queue.acquire(&stopping).await.unwrap_err(), QueueError::ShuttingDown);
    }
}
