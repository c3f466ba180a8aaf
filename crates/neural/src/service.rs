//! The neural debugger as a service the server and the reproduction agent share: the
//! model loads once, on a blocking thread, at start-up; a model directory that does not
//! load is logged and leaves neural mode off with the sentence the page shows, while
//! whoever holds the service keeps working.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Instant;

use replayground_shared::protocol::NeuralCapability;
use tokenizers::Tokenizer;
use tokio::sync::Mutex;

use crate::infer::{Engine, PromptFrame, Sampling};
use crate::rollout::{self, Rollout};

/// The checkpoint this repository ships, relative to the checkout (`cargo xtask serve`).
pub const BUNDLED_MODEL_DIR: &str = "models/neural-debugger-tiny";
/// How long a rollout waits for predictions ahead of it.
const ROLLOUT_QUEUE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

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

pub struct LoadedModel {
    pub(crate) name: String,
    /// One prediction at a time: the model keeps its KV cache inside.
    pub(crate) debugger: Arc<Mutex<Box<dyn Engine>>>,
    /// The engine's tokenizer, to fit prompts into its context without waiting for it.
    pub(crate) tokenizer: Tokenizer,
    /// What a prompt holds before the trajectory.
    pub(crate) frame: PromptFrame,
    pub(crate) context: usize,
}

impl LoadedModel {
    /// Wraps a loaded engine.
    pub fn new(debugger: Box<dyn Engine>) -> Self {
        Self {
            name: debugger.name(),
            context: debugger.context(),
            tokenizer: debugger.tokenizer().clone(),
            frame: debugger.frame(),
            debugger: Arc::new(Mutex::new(debugger)),
        }
    }

    /// The engine, one prediction at a time: it keeps its KV cache inside.
    pub fn engine(&self) -> Arc<Mutex<Box<dyn Engine>>> {
        Arc::clone(&self.debugger)
    }
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

    /// The loaded model, or the sentence saying why there is none.
    pub fn ready(&self) -> Result<Arc<LoadedModel>, String> {
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

    /// Rolls `code` forward in the model's head (see [`crate::rollout`]), on a
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

    /// Serves `engine`, loaded by the test, at once.
    #[cfg(test)]
    pub(crate) fn install(&self, engine: Box<dyn Engine>) {
        self.set(Slot::Ready(Arc::new(LoadedModel::new(engine))));
    }

    /// Loads `dir` (an engine as [`crate::load_engine`] names it) on a blocking
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
                let model = LoadedModel::new(debugger);
                tracing::info!(
                    model = %dir.display(),
                    seconds = started.elapsed().as_secs_f64(),
                    context = model.context,
                    "neural debugger model loaded; neural mode is on"
                );
                self.set(Slot::Ready(Arc::new(model)));
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
        let Some(dir) = model_dir.or_else(playground_engine) else {
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

/// The playground's engine when `serve` is not told one, in a checkout (the working
/// directory): the embedded Qwen2.5-Coder-0.5B in context where `cargo xtask setup`
/// installed it there (the realistic benchmark ranks it first among the engines that
/// answer a step within 2 s here, once the program is read ahead; see the README's
/// neural-debugger table), else the bundled model.
pub fn playground_engine() -> Option<PathBuf> {
    let installed = replayground_llm::catalogue::QWEN_CODER_0_5B.file_name;
    let embedded = Path::new(replayground_llm::catalogue::TOOLS_MODELS_DIR).join(installed);
    let embedded = embedded.is_file().then(|| PathBuf::from(EMBEDDED_ENGINE));
    embedded.or_else(|| model_dir_to_load(None))
}

/// The code LLM the playground prefers ([`playground_engine`]).
pub const EMBEDDED_ENGINE: &str = "qwen-0.5b";

/// The model to load: the one asked for, else the bundled one when the working
/// directory is a checkout (the reproduction agent's approximations: forty steps each,
/// where the tiny model answers in a quarter of a second).
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

/// Loads the engine and reads its prompts' common start, so that the first step a user
/// asks for is answered as fast as the next.
fn load_model(dir: &Path) -> anyhow::Result<Box<dyn Engine>> {
    let mut engine = crate::load_engine(
        &dir.to_string_lossy(),
        &candle_core::Device::Cpu,
        crate::in_context::DEFAULT_MAX_TRAJECTORY_TOKENS,
    )?;
    engine.warm_up()?;
    Ok(engine)
}
