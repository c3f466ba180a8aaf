//! Prometheus metrics of the server, served as text at `GET /metrics`.
//!
//! The exposition is `OpenMetrics` text (`prometheus-client`), which Prometheus scrapes
//! natively. Label values come from small fixed sets (route templates, outcomes), never
//! from user input, so the number of series stays bounded.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};
use replayground_shared::Outcome;

/// The content type of [`Metrics::render`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// The route template (`/api/share/{id}`), `static` or `unmatched`.
    pub route: String,
    pub method: String,
    pub status: u16,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub route: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RunLabels {
    /// `finished`, `uncaught_exception`, `exited`, `syntax_error`, `limit_reached`,
    /// `crashed` (the tracer failed), `sandbox_error` (the sandbox could not run it) or
    /// `cancelled`.
    pub outcome: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RejectLabels {
    /// `queue_full`, `queue_timeout`, `shutting_down` or `rate_limited`.
    pub reason: &'static str,
}

/// Every metric the server exports; cheap to update from any task.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    pub http_requests: Family<RequestLabels, Counter>,
    pub http_duration: Family<RouteLabels, Histogram, fn() -> Histogram>,
    pub sandbox_runs: Family<RunLabels, Counter>,
    pub sandbox_duration: Histogram,
    pub jobs_running: Gauge,
    pub jobs_queued: Gauge,
    pub jobs_rejected: Family<RejectLabels, Counter>,
    pub websockets_active: Gauge,
    pub websocket_sessions: Counter,
    pub shares_created: Counter,
}

fn latency_histogram() -> Histogram {
    // 1 ms .. ~33 s: static files at the bottom, traces that hit the wall clock at the top.
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("replayground");
        let http_requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests by route, method and status",
            http_requests.clone(),
        );
        let http_duration =
            Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(latency_histogram);
        registry.register_with_unit(
            "http_request_duration",
            "Time from request to response head, by route",
            Unit::Seconds,
            http_duration.clone(),
        );
        let sandbox_runs = Family::<RunLabels, Counter>::default();
        registry.register(
            "sandbox_runs",
            "Programs run in the sandbox, by outcome (crashed and sandbox_error are failures)",
            sandbox_runs.clone(),
        );
        let sandbox_duration = latency_histogram();
        registry.register_with_unit(
            "sandbox_run_duration",
            "Wall-clock time of one sandbox run",
            Unit::Seconds,
            sandbox_duration.clone(),
        );
        let jobs_running = Gauge::default();
        registry.register("jobs_running", "Sandbox jobs running now", jobs_running.clone());
        let jobs_queued = Gauge::default();
        registry.register(
            "jobs_queued",
            "Sandbox jobs waiting for a free slot",
            jobs_queued.clone(),
        );
        let jobs_rejected = Family::<RejectLabels, Counter>::default();
        registry.register(
            "jobs_rejected",
            "Jobs and requests turned away, by reason",
            jobs_rejected.clone(),
        );
        let websockets_active = Gauge::default();
        registry.register(
            "websockets_active",
            "Open WebSocket sessions",
            websockets_active.clone(),
        );
        let websocket_sessions = Counter::default();
        registry.register(
            "websocket_sessions",
            "WebSocket sessions opened",
            websocket_sessions.clone(),
        );
        let shares_created = Counter::default();
        registry.register("shares_created", "Shares stored", shares_created.clone());
        Self {
            registry,
            http_requests,
            http_duration,
            sandbox_runs,
            sandbox_duration,
            jobs_running,
            jobs_queued,
            jobs_rejected,
            websockets_active,
            websocket_sessions,
            shares_created,
        }
    }

    /// The exposition text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    pub fn request(&self, route: &str, method: &str, status: u16, elapsed: Duration) {
        self.http_requests
            .get_or_create(&RequestLabels {
                route: route.to_owned(),
                method: method.to_owned(),
                status,
            })
            .inc();
        self.http_duration
            .get_or_create(&RouteLabels {
                route: route.to_owned(),
            })
            .observe(elapsed.as_secs_f64());
    }

    pub fn run(&self, outcome: &'static str, elapsed: Duration) {
        self.sandbox_runs.get_or_create(&RunLabels { outcome }).inc();
        self.sandbox_duration.observe(elapsed.as_secs_f64());
    }

    pub fn rejected(&self, reason: &'static str) {
        self.jobs_rejected.get_or_create(&RejectLabels { reason }).inc();
    }
}

/// The `outcome` label of a trace's outcome.
pub fn outcome_label(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Finished => "finished",
        Outcome::UncaughtException { .. } => "uncaught_exception",
        Outcome::Exited { .. } => "exited",
        Outcome::SyntaxError { .. } => "syntax_error",
        Outcome::LimitReached { .. } => "limit_reached",
        Outcome::Crashed { .. } => "crashed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_family_with_the_prefix() {
        let m = Metrics::new();
        m.request("/api/trace", "POST", 200, Duration::from_millis(12));
        m.run("finished", Duration::from_millis(80));
        m.websockets_active.inc();
        let text = m.render();
        for needle in [
            "replayground_http_requests_total{route=\"/api/trace\",method=\"POST\",status=\"200\"} 1",
            "replayground_http_request_duration_seconds_bucket",
            "replayground_sandbox_runs_total{outcome=\"finished\"} 1",
            "replayground_websockets_active 1",
            "replayground_jobs_queued 0",
            "# EOF",
        ] {
            assert!(text.contains(needle), "{needle} missing from\n{text}");
        }
    }
}
