//! `replayground repro`: the agent on the command line, with a progress view of its
//! events (or one JSON line per event), and the search budget `repro` and
//! `bench-repro` share.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use replayground_exec::sandbox::Sandbox;
use replayground_neural::service::{NeuralService, model_dir_to_load};
use replayground_shared::repro::{AgentEvent, Stage};
use tokio_util::sync::CancellationToken;

use super::agent::{AgentConfig, AgentDeps, AgentModels, run_agent};
use super::project::Project;

/// How many candidates the agent may try: `repro` and `bench-repro` take the same flags.
#[derive(Debug, Clone, clap::Args)]
pub struct SearchBudget {
    /// Candidates per context.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub attempts: u32,
    /// Contexts tried.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub contexts: usize,
}

impl SearchBudget {
    /// The default configuration with this budget (at least one of each).
    pub fn config(&self) -> AgentConfig {
        AgentConfig {
            attempts_per_context: self.attempts.max(1),
            max_contexts: self.contexts.max(1),
            ..AgentConfig::default()
        }
    }
}

/// `replayground repro`: the agent on the command line.
#[derive(Debug, Clone, clap::Args)]
pub struct ReproArgs {
    /// The bug report: `.json` (the `BugReport` fields), or `.md` / `.txt` text pasted from an issue tracker.
    #[arg(long, value_name = "FILE")]
    pub report: PathBuf,
    /// The project the bug is in: a directory, or a .zip / .tar.gz / .tar archive.
    #[arg(long, value_name = "DIR|ARCHIVE")]
    pub project: Option<PathBuf>,
    #[command(flatten)]
    pub models: AgentModels,
    /// Switch a stage off (repeatable): context, restructure, plan, structural, static, relevance, runtime, refine.
    #[arg(long, value_name = "STAGE")]
    pub ablate: Vec<Stage>,
    #[command(flatten)]
    pub budget: SearchBudget,
    /// Write the final script here.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print every event as one JSON line instead of the progress view.
    #[arg(long)]
    pub json: bool,
    /// The neural debugger that approximates a script this machine cannot run (a missing
    /// package) when no LLM is set: a model folder or a code LLM in context (`qwen-0.5b`,
    /// `qwen-1.5b`, `gguf:FILE`). Default: the bundled models/neural-debugger-tiny when
    /// run from a checkout.
    #[arg(long, alias = "neural-model", value_name = "ENGINE")]
    pub model_dir: Option<PathBuf>,
    /// Do not load a neural debugger.
    #[arg(long, conflicts_with = "model_dir")]
    pub no_model: bool,
}

fn read_project(path: &std::path::Path) -> anyhow::Result<Project> {
    if path.is_dir() {
        return Ok(Project::from_dir(path)?);
    }
    let bytes = std::fs::read(path).map_err(|e| {
        anyhow::anyhow!(
            "cannot read the project {}: {e}; give a directory or an archive",
            path.display()
        )
    })?;
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    Ok(Project::from_archive(&name, &bytes)?)
}

/// One line of the readable view for an event, or `None` for events it leaves out.
fn describe(event: &AgentEvent) -> Option<String> {
    Some(match event {
        AgentEvent::Started { generator, llm, .. } => {
            format!(
                "reproducing with the {generator} generator{}",
                llm.as_ref().map(|l| format!(" ({l})")).unwrap_or_default()
            )
        }
        AgentEvent::Progress { stage, message } => format!("[{}] {message}", stage.as_str()),
        AgentEvent::Context {
            contexts,
            training_loops,
        } => {
            let mut lines = vec![format!(
                "context: {} ranked chunk(s), {} training loop(s)",
                contexts.len(),
                training_loops.len()
            )];
            lines.extend(contexts.iter().map(|c| {
                format!(
                    "  {:.2}  {}:{}-{} {}",
                    c.score, c.path, c.start_line, c.end_line, c.name
                )
            }));
            lines.join("\n")
        }
        AgentEvent::Report { report } => format!(
            "report: {}{} ({} step(s){})",
            report.symptom.class.as_str(),
            report
                .symptom
                .error_type
                .as_ref()
                .map(|e| format!(" {e}"))
                .unwrap_or_default(),
            report.steps.len(),
            report.framework.as_ref().map(|f| format!(", {f}")).unwrap_or_default()
        ),
        AgentEvent::Plan { steps } => {
            let mut lines = vec!["plan:".to_owned()];
            lines.extend(
                steps
                    .iter()
                    .enumerate()
                    .map(|(i, s)| format!("  {}. {}", i + 1, s.description)),
            );
            lines.join("\n")
        }
        AgentEvent::AttemptStarted { attempt, context } => {
            format!(
                "attempt {attempt}{}",
                if *context > 0 {
                    format!(" (context {context})")
                } else {
                    String::new()
                }
            )
        }
        AgentEvent::Token { .. } => return None,
        AgentEvent::Candidate { code, edits, .. } => {
            format!("  candidate: {} lines; {}", code.lines().count(), edits.join("; "))
        }
        AgentEvent::Check { verdict, .. } => {
            let mark = if verdict.passed {
                "pass"
            } else if verdict.approximated {
                "~approx"
            } else {
                "FAIL"
            };
            let score = verdict.score.map(|s| format!(" {s:.2}")).unwrap_or_default();
            format!(
                "  {mark:<7} {:<10}{score}  {}",
                format!("{:?}", verdict.check).to_lowercase(),
                verdict.detail
            )
        }
        AgentEvent::AttemptFinished { score, accepted, .. } => {
            format!("  score {score:.2}{}", if *accepted { " (accepted)" } else { "" })
        }
        AgentEvent::Finished { outcome } => format!(
            "{} after {} attempt(s) in {:.1} s, best score {:.2}{}",
            if outcome.reproduced {
                "REPRODUCED"
            } else {
                "not reproduced"
            },
            outcome.attempts,
            outcome.elapsed_ms as f64 / 1000.0,
            outcome.score,
            if outcome.approximated {
                " (approximated: not observed here)"
            } else {
                ""
            }
        ),
        AgentEvent::Failed { message } => format!("failed: {message}"),
    })
}

/// Runs `replayground repro`; exit status 0 when the bug was reproduced, 1 when not.
pub async fn command(
    args: &ReproArgs,
    sandbox: Arc<dyn Sandbox>,
    python: PathBuf,
) -> anyhow::Result<std::process::ExitCode> {
    use std::io::{IsTerminal as _, Write as _};
    let report = super::report::read_report(&args.report).map_err(anyhow::Error::msg)?;
    let project = args.project.as_deref().map(read_project).transpose()?.map(Arc::new);
    let notes = |line: &str| {
        if !args.json {
            eprintln!("{line}");
        }
    };
    let neural = match model_dir_to_load(args.model_dir.clone()).filter(|_| !args.no_model) {
        Some(dir) => {
            let service = NeuralService::default();
            match service.load(dir).await {
                Ok(()) => Some(service),
                Err(why) => {
                    notes(&format!("{why} Going on without approximation by the neural debugger."));
                    None
                }
            }
        }
        None => None,
    };
    let models = args.models.clone();
    let deps = tokio::task::spawn_blocking(move || AgentDeps::load(&models, sandbox, python, neural)).await??;
    let config = AgentConfig {
        ablate: args.ablate.iter().copied().collect(),
        ..args.budget.config()
    };
    let (tx, mut rx) = tokio::sync::mpsc::channel(256);
    let cancel = CancellationToken::new();
    let ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            ctrl_c.cancel();
        }
    });
    let json = args.json;
    let view = tokio::spawn(async move {
        // A spinner only on a terminal; piped stderr gets the plain lines.
        let spinner = (!json && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        let mut out = std::io::stdout();
        while let Some(event) = rx.recv().await {
            if json {
                if let Ok(line) = serde_json::to_string(&event) {
                    let _ = writeln!(out, "{line}");
                }
                continue;
            }
            let Some(bar) = &spinner else {
                if let Some(line) = describe(&event) {
                    eprintln!("{line}");
                }
                continue;
            };
            {
                if let AgentEvent::Token { attempt, .. } = &event {
                    bar.set_message(format!("attempt {attempt}: writing the candidate"));
                } else if let Some(line) = describe(&event) {
                    bar.println(line);
                    if let AgentEvent::AttemptStarted { attempt, .. } = &event {
                        bar.set_message(format!("attempt {attempt}"));
                    }
                    if matches!(event, AgentEvent::Check { .. } | AgentEvent::Candidate { .. }) {
                        bar.set_message("checking");
                    }
                }
            }
        }
        if let Some(bar) = spinner {
            bar.finish_and_clear();
        }
    });
    let outcome = run_agent(report, project, &deps, &config, tx, cancel).await;
    view.await?;
    if let Some(script) = &outcome.script {
        match &args.out {
            Some(path) => {
                std::fs::write(path, script)
                    .map_err(|e| anyhow::anyhow!("cannot write the script to {}: {e}", path.display()))?;
                notes(&format!("script written to {}", path.display()));
            }
            None if !args.json => {
                let mut out = std::io::stdout().lock();
                writeln!(out, "{script}")?;
            }
            None => {}
        }
    }
    Ok(if outcome.reproduced {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(1)
    })
}
