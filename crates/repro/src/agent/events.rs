//! How the agent tells its listener what happens: every stage's events go through here.

use replayground_shared::repro::{AgentEvent, ReproOutcome, Stage};
use tokio::sync::mpsc::Sender;

pub(super) async fn emit(events: &Sender<AgentEvent>, event: AgentEvent) {
    // A closed channel means nobody listens any more; the loop checks for it between attempts.
    let _ = events.send(event).await;
}

pub(super) async fn attempt_started(events: &Sender<AgentEvent>, attempt: u32, context: u32) {
    emit(events, AgentEvent::AttemptStarted { attempt, context }).await;
}

/// A script written by the rules, streamed line by line like an LLM's tokens.
pub(super) async fn emit_lines(events: &Sender<AgentEvent>, attempt: u32, code: &str) {
    for line in code.split_inclusive('\n') {
        emit(
            events,
            AgentEvent::Token {
                attempt,
                text: line.to_owned(),
            },
        )
        .await;
    }
}

pub(super) async fn say(events: &Sender<AgentEvent>, stage: Stage, message: impl Into<String>) {
    emit(
        events,
        AgentEvent::Progress {
            stage,
            message: message.into(),
        },
    )
    .await;
}

/// Ends a run: tells the listener its outcome and hands the outcome back.
pub(super) async fn finished(events: &Sender<AgentEvent>, outcome: ReproOutcome) -> ReproOutcome {
    emit(
        events,
        AgentEvent::Finished {
            outcome: outcome.clone(),
        },
    )
    .await;
    outcome
}
