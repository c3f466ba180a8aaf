//! Sandbox jobs: the domain form of a trace request, the cap on jobs that run at once
//! with its bounded wait queue, and the shutdown signals that end them.
//!
//! HTTP requests and WebSocket jobs share one [`JobQueue`]: at most `max_jobs` run,
//! at most `max_queued` wait (each for at most `queue_timeout`), and everyone else is
//! told at once that the server is busy.

use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use replayground_shared::protocol::{MAX_CODE_BYTES, MAX_STDIN_BYTES, TraceRequest};
use tokio::sync::oneshot;
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
    /// Have the neural debugger read the program once it has run ([`TraceRequest::neural`]).
    pub neural: bool,
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
            neural: request.neural,
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

/// The cap on concurrent sandbox jobs, with a bounded queue of waiters served fairly:
/// a freed slot goes to the waiting client that runs the fewest jobs (the earliest among
/// equals), so a few clients that keep every slot busy with sleeping programs do not
/// make everyone else wait behind their queued jobs.
#[derive(Debug, Clone)]
pub struct JobQueue {
    inner: Arc<QueueInner>,
}

#[derive(Debug)]
struct QueueInner {
    max_jobs: usize,
    max_queued: usize,
    queue_timeout: Duration,
    state: Mutex<Slots>,
    metrics: Arc<Metrics>,
}

#[derive(Debug, Default)]
struct Slots {
    free: usize,
    /// Running jobs per client.
    running: HashMap<IpAddr, usize>,
    /// In arrival order.
    waiting: Vec<Waiter>,
    next_waiter: u64,
}

#[derive(Debug)]
struct Waiter {
    id: u64,
    client: IpAddr,
    grant: oneshot::Sender<JobPermit>,
}

/// A running job's slot; freed (and handed to the next waiter) when dropped.
#[derive(Debug)]
pub struct JobPermit {
    queue: Arc<QueueInner>,
    client: IpAddr,
}

impl Drop for JobPermit {
    fn drop(&mut self) {
        self.queue.metrics.jobs_running.dec();
        let unclaimed = {
            let mut slots = self.queue.lock();
            if let Some(n) = slots.running.get_mut(&self.client) {
                *n -= 1;
                if *n == 0 {
                    slots.running.remove(&self.client);
                }
            }
            slots.free += 1;
            self.queue.dispatch(&mut slots)
        };
        // Permits whose waiter left meanwhile: dropped outside the lock, each frees its slot again.
        drop(unclaimed);
    }
}

impl QueueInner {
    fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Hands free slots to waiters, fewest running jobs first; returns the permits
    /// nobody was there to take.
    fn dispatch(self: &Arc<Self>, slots: &mut Slots) -> Vec<JobPermit> {
        let mut unclaimed = Vec::new();
        while slots.free > 0 && !slots.waiting.is_empty() {
            let next = (0..slots.waiting.len())
                .min_by_key(|&i| (slots.running.get(&slots.waiting[i].client).copied().unwrap_or(0), i))
                .expect("someone is waiting");
            let waiter = slots.waiting.remove(next);
            self.metrics.jobs_queued.dec();
            let permit = self.grant(slots, waiter.client);
            if let Err(permit) = waiter.grant.send(permit) {
                unclaimed.push(permit);
            }
        }
        unclaimed
    }

    fn grant(self: &Arc<Self>, slots: &mut Slots, client: IpAddr) -> JobPermit {
        slots.free -= 1;
        *slots.running.entry(client).or_default() += 1;
        self.metrics.jobs_running.inc();
        JobPermit {
            queue: Arc::clone(self),
            client,
        }
    }
}

impl JobQueue {
    pub fn new(max_jobs: usize, max_queued: usize, queue_timeout: Duration, metrics: Arc<Metrics>) -> Self {
        let max_jobs = max_jobs.max(1);
        Self {
            inner: Arc::new(QueueInner {
                max_jobs,
                max_queued,
                queue_timeout,
                state: Mutex::new(Slots {
                    free: max_jobs,
                    ..Slots::default()
                }),
                metrics,
            }),
        }
    }

    pub fn max_jobs(&self) -> usize {
        self.inner.max_jobs
    }

    /// Jobs running now.
    pub fn running(&self) -> usize {
        self.inner.max_jobs - self.inner.lock().free
    }

    /// Jobs waiting for a slot now.
    pub fn queued(&self) -> usize {
        self.inner.lock().waiting.len()
    }

    /// A slot for `client` now, or after waiting in the queue; never waits when the
    /// queue is full.
    pub async fn acquire(&self, client: IpAddr, shutdown: &CancellationToken) -> Result<JobPermit, QueueError> {
        let result = self.try_acquire(client, shutdown).await;
        if let Err(e) = result {
            self.inner.metrics.rejected(e.metric_reason());
        }
        result
    }

    async fn try_acquire(&self, client: IpAddr, shutdown: &CancellationToken) -> Result<JobPermit, QueueError> {
        let inner = &self.inner;
        if shutdown.is_cancelled() {
            return Err(QueueError::ShuttingDown);
        }
        let (id, granted) = {
            let mut slots = inner.lock();
            if slots.free > 0 && slots.waiting.is_empty() {
                return Ok(inner.grant(&mut slots, client));
            }
            if slots.waiting.len() >= inner.max_queued {
                return Err(QueueError::Full);
            }
            let (grant, granted) = oneshot::channel();
            let id = slots.next_waiter;
            slots.next_waiter += 1;
            slots.waiting.push(Waiter { id, client, grant });
            inner.metrics.jobs_queued.inc();
            (id, granted)
        };
        let mut granted = granted;
        let error = tokio::select! {
            permit = &mut granted => return permit.map_err(|_| QueueError::ShuttingDown),
            () = tokio::time::sleep(inner.queue_timeout) => QueueError::TimedOut,
            () = shutdown.cancelled() => QueueError::ShuttingDown,
        };
        {
            let mut slots = inner.lock();
            if let Some(position) = slots.waiting.iter().position(|w| w.id == id) {
                slots.waiting.remove(position);
                inner.metrics.jobs_queued.dec();
            }
        }
        // A slot that arrived as the wait ended is in `granted`: dropping it frees the slot.
        drop(granted);
        Err(error)
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
            neural: false,
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

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 2));

    #[tokio::test]
    async fn the_queue_is_bounded_and_waiters_time_out() {
        let queue = JobQueue::new(1, 1, Duration::from_millis(200), Arc::new(Metrics::new()));
        let never = CancellationToken::new();
        let first = queue.acquire(A, &never).await.unwrap();
        assert_eq!(queue.running(), 1);
        let q2 = queue.clone();
        let never2 = never.clone();
        let waiter = tokio::spawn(async move { q2.acquire(A, &never2).await.map(drop) });
        while queue.queued() == 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!(queue.acquire(A, &never).await.unwrap_err(), QueueError::Full);
        assert_eq!(waiter.await.unwrap(), Err(QueueError::TimedOut));
        assert_eq!(queue.queued(), 0);
        drop(first);
        assert_eq!(queue.running(), 0);
        let again = queue.acquire(A, &never).await.unwrap();
        let stopping = CancellationToken::new();
        stopping.cancel();
        drop(again);
        assert_eq!(queue.acquire(A, &stopping).await.unwrap_err(), QueueError::ShuttingDown);
    }

    #[tokio::test]
    async fn a_freed_slot_goes_to_the_client_running_the_fewest_jobs() {
        let queue = JobQueue::new(2, 8, Duration::from_secs(10), Arc::new(Metrics::new()));
        let never = CancellationToken::new();
        let busy = [
            queue.acquire(A, &never).await.unwrap(),
            queue.acquire(A, &never).await.unwrap(),
        ];
        // A queues a third job first, then B asks for its first.
        let (qa, qb, n1, n2) = (queue.clone(), queue.clone(), never.clone(), never.clone());
        let a_again = tokio::spawn(async move { qa.acquire(A, &n1).await });
        while queue.queued() < 1 {
            tokio::task::yield_now().await;
        }
        let b_first = tokio::spawn(async move { qb.acquire(B, &n2).await });
        while queue.queued() < 2 {
            tokio::task::yield_now().await;
        }
        let [one, _two] = busy;
        drop(one);
        let b_permit = tokio::time::timeout(Duration::from_secs(1), b_first)
            .await
            .expect("B, running nothing, goes first")
            .unwrap()
            .unwrap();
        assert!(!a_again.is_finished(), "A waits for the next slot");
        drop(b_permit);
        assert!(a_again.await.unwrap().is_ok());
    }
}
