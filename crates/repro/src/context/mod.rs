//! The Context stage (RepGen §3.1): the project's Python cut into modules, classes and
//! functions ([`chunk`]), embedded ([`embed`]), and ranked against the report by hybrid
//! BM25 + dense retrieval over an HNSW index, reranked ([`retrieval`]).

pub mod chunk;
pub mod embed;
pub mod retrieval;

use std::sync::Arc;

use replayground_shared::repro::{AgentEvent, RankedContext, Stage};
use tokio::sync::mpsc::Sender;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::project::Project;
use crate::report::ParsedReport;
use crate::training_loops::TrainingLoop;
use embed::{CrossEncoder, Embedder};
use retrieval::{RetrievalConfig, RetrievalError, Retriever};

/// The Context stage: chunks `project`, embeds the chunks (with an embedder) and ranks
/// them against `report`, reporting its progress to `events`; the best `top_k` contexts,
/// none when the project gives none (the events say why). The CPU-bound work runs on
/// `threads` and stops when `cancel` fires.
pub(crate) async fn find_contexts(
    report: &ParsedReport,
    project: Arc<Project>,
    (embedder, reranker): (Option<Arc<Embedder>>, Option<Arc<CrossEncoder>>),
    top_k: usize,
    events: &Sender<AgentEvent>,
    (cancel, threads): (&CancellationToken, &TaskTracker),
) -> Vec<RankedContext> {
    let files = project.python_files().count();
    say(events, format!("indexing {files} Python file(s)")).await;
    if embedder.is_none() {
        say(
            events,
            "no embedding model (run `cargo xtask setup` or set REPLAYGROUND_EMBEDDINGS): ranking by BM25 only",
        )
        .await;
    }
    let query = report.query();
    let progress_events = events.clone();
    // Chunking, embedding and searching are CPU-bound: off the async threads.
    let cancel = cancel.clone();
    let built = threads
        .spawn_blocking(move || {
            let mut last = 0;
            let mut progress = |done, total| {
                if done == total || done >= last + 32 {
                    last = done;
                    let _ = progress_events.blocking_send(AgentEvent::Progress {
                        stage: Stage::Context,
                        message: format!("embedding {done}/{total} chunks"),
                    });
                }
            };
            let stop = || cancel.is_cancelled();
            let retriever = Retriever::build_until(&project, embedder.as_deref(), &mut progress, &stop)?;
            let retrieval = RetrievalConfig {
                top_k,
                ..RetrievalConfig::default()
            };
            let contexts = retriever.retrieve(&query, &retrieval, embedder.as_deref(), reranker.as_deref());
            let loops: Vec<String> = retriever.training_loops().iter().map(TrainingLoop::describe).collect();
            Ok::<_, RetrievalError>((contexts, loops))
        })
        .await;
    match built {
        Ok(Ok((contexts, training_loops))) => {
            let _ = events
                .send(AgentEvent::Context {
                    contexts: contexts.clone(),
                    training_loops,
                })
                .await;
            contexts
        }
        Ok(Err(e)) => {
            say(events, format!("no context from the project: {e}")).await;
            Vec::new()
        }
        Err(e) => {
            say(events, format!("no context from the project: retrieval stopped ({e})")).await;
            Vec::new()
        }
    }
}

async fn say(events: &Sender<AgentEvent>, message: impl Into<String>) {
    // A closed channel means nobody listens any more; the agent checks for it.
    let _ = events
        .send(AgentEvent::Progress {
            stage: Stage::Context,
            message: message.into(),
        })
        .await;
}
