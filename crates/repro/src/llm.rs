//! The agent's language models behind one object-safe trait, [`Llm`]:
//!
//! - [`OpenAiLlm`]: any OpenAI-compatible server (`/v1/chat/completions` with
//!   `stream: true`): Ollama, vLLM, the llama.cpp server. Tokens arrive as server-sent events.
//! - [`CandleLlm`]: a local Qwen2-family directory (`config.json`, `tokenizer.json`,
//!   `*.safetensors`) run by candle with the Qwen chat template and a KV cache.
//! - [`GgufLlm`]: a Qwen2 GGUF file run by `replayground-llm`; the embedded default is
//!   Qwen2.5-Coder-0.5B-Instruct, which `cargo xtask setup` installs.
//! - [`ScriptedLlm`]: canned replies, for tests and demos.
//!
//! [`from_spec`] builds one from a one-line spec (`--llm`, `REPLAYGROUND_LLM`):
//!
//! | Spec | Backend |
//! | --- | --- |
//! | `openai:http://127.0.0.1:11434/v1#qwen2.5-coder:7b` | Ollama (any OpenAI-compatible base URL, `#` then the model name) |
//! | `candle:/models/Qwen2.5-Coder-7B-Instruct` | a local Qwen2-family directory |
//! | `gguf:.tools/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf` | a Qwen2 GGUF file (the default when installed) |
//! | `rules` | no LLM: the rule-based generator |
//! | `scripted:/path/replies.json` | a JSON list of replies (strings, or `{"task": "generate", "reply": "..."}`) |
//!
//! An API key for a hosted server is read from `REPLAYGROUND_LLM_API_KEY`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use candle_core::{DType, Device, Tensor};
use candle_transformers::generation::{LogitsProcessor, Sampling};
use candle_transformers::models::qwen2::ModelForCausalLM;
use eventsource_stream::Eventsource as _;
use futures_util::StreamExt as _;
use serde::{Deserialize, Serialize};
use tokenizers::Tokenizer;

use replayground_llm::catalogue::{self, QWEN_CODER_0_5B};
use replayground_llm::stream::TokenStream;
use replayground_llm::{GenerationParams, LocalLlm};

use replayground_exec::sandbox::BoxFuture;
use replayground_neural::model::Qwen2Checkpoint;

/// The chat types of the embedded runtime serve every backend.
pub use replayground_llm::{ChatMessage, Role};

/// What the agent asks a model to do; [`ScriptedLlm`] answers by task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LlmTask {
    Restructure,
    Plan,
    Generate,
    Relevance,
    Approximate,
    /// One line per name a draft uses undefined (an import or a definition).
    Define,
}

/// How to generate.
#[derive(Debug, Clone, PartialEq)]
pub struct GenParams {
    pub task: LlmTask,
    pub max_tokens: usize,
    /// 0 is greedy.
    pub temperature: f64,
    pub seed: u64,
}

impl GenParams {
    pub fn new(task: LlmTask, max_tokens: usize) -> Self {
        Self {
            task,
            max_tokens,
            temperature: 0.2,
            seed: 0,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error(
        "`{spec}` is not an LLM spec ({reason}); use openai:URL#MODEL, candle:DIR, gguf:FILE, scripted:FILE or rules"
    )]
    Spec { spec: String, reason: String },
    #[error("cannot reach the LLM server at {url} ({detail}); start it (e.g. `ollama serve`) or check the --llm URL")]
    Unreachable { url: String, detail: String },
    #[error("the LLM server at {url} answered {status}: {body}")]
    Status { url: String, status: u16, body: String },
    #[error("the LLM server at {url} sent a stream this client cannot read ({detail})")]
    Protocol { url: String, detail: String },
    #[error("the LLM server at {url} sent nothing for {seconds} s; it may be overloaded, try again")]
    Stalled { url: String, seconds: u64 },
    #[error("the model in {dir} cannot be used: {detail}")]
    Model { dir: String, detail: String },
    #[error("the scripted LLM has no reply left for a {task:?} request")]
    Exhausted { task: LlmTask },
}

/// A chat model that streams its answer. Object safe, so the agent holds `Arc<dyn Llm>`.
pub trait Llm: Send + Sync {
    /// A short name for events and logs, e.g. `openai:qwen2.5-coder:7b`.
    fn name(&self) -> String;

    /// Answers the chat, handing each piece of text to `on_token` as it is generated;
    /// resolves to the whole answer.
    fn complete<'a>(
        &'a self,
        messages: &'a [ChatMessage],
        params: &'a GenParams,
        on_token: &'a mut (dyn FnMut(&str) + Send),
    ) -> BoxFuture<'a, Result<String, LlmError>>;
}

/// Builds a backend from a spec (see the module documentation).
pub fn from_spec(spec: &str) -> Result<Arc<dyn Llm>, LlmError> {
    let bad = |reason: &str| LlmError::Spec {
        spec: spec.to_owned(),
        reason: reason.to_owned(),
    };
    let (kind, rest) = spec.split_once(':').ok_or_else(|| bad("no backend before `:`"))?;
    match kind {
        "openai" => {
            let (url, model) = rest.split_once('#').ok_or_else(|| bad("no `#MODEL` after the URL"))?;
            if model.trim().is_empty() {
                return Err(bad("the model name after `#` is empty"));
            }
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(bad("the URL must start with http:// or https://"));
            }
            let api_key = std::env::var("REPLAYGROUND_LLM_API_KEY").ok().filter(|k| !k.is_empty());
            Ok(Arc::new(OpenAiLlm::new(url, model, api_key)))
        }
        "candle" => Ok(Arc::new(CandleLlm::load(Path::new(rest))?)),
        "gguf" => Ok(Arc::new(GgufLlm::open(Path::new(rest))?)),
        "scripted" => {
            let text = std::fs::read_to_string(rest).map_err(|e| bad(&format!("cannot read {rest}: {e}")))?;
            let replies: Vec<ScriptedReply> =
                serde_json::from_str(&text).map_err(|e| bad(&format!("{rest} is not a JSON list of replies: {e}")))?;
            Ok(Arc::new(ScriptedLlm::new(replies)))
        }
        _ => Err(bad(&format!("unknown backend `{kind}`"))),
    }
}

/// The LLM that `--llm` (`REPLAYGROUND_LLM`) asks for. `rules` is none; any other spec must
/// load. Without `--llm`: the embedded model when its file is installed (in `.tools/models/`
/// under the working directory, or the cache), else none. Says in one log line which it is.
pub fn resolve(spec: Option<&str>) -> Result<Option<Arc<dyn Llm>>, LlmError> {
    match spec.map(str::trim) {
        Some("rules") => {
            tracing::info!("reproduction agent: --llm rules, candidates come from rule-based edit actions");
            Ok(None)
        }
        Some(spec) => {
            let llm = from_spec(spec)?;
            tracing::info!("reproduction agent: LLM {} (--llm {spec})", llm.name());
            Ok(Some(llm))
        }
        None => Ok(embedded()),
    }
}

/// The default model, when setup installed it; a file that does not open is one warning.
fn embedded() -> Option<Arc<dyn Llm>> {
    let root = std::env::current_dir().unwrap_or_default();
    let Some(path) = catalogue::locate(&QWEN_CODER_0_5B, &root) else {
        tracing::info!(
            "reproduction agent: no code LLM installed (`cargo xtask setup` installs {}), candidates come from rule-based edit actions",
            QWEN_CODER_0_5B.name
        );
        return None;
    };
    match GgufLlm::open(&path) {
        Ok(llm) => {
            tracing::info!(
                "reproduction agent: LLM {} from {} (the embedded default; --llm rules for rule-based edits only)",
                llm.name(),
                path.display()
            );
            Some(Arc::new(llm))
        }
        Err(e) => {
            tracing::warn!("reproduction agent: {e}; candidates come from rule-based edit actions");
            None
        }
    }
}

/// How long a streaming server may stay silent before the request is given up.
const STREAM_IDLE: Duration = Duration::from_secs(180);

/// An OpenAI-compatible chat server, streamed over server-sent events.
pub struct OpenAiLlm {
    base_url: String,
    model: String,
    api_key: Option<String>,
    client: reqwest::Client,
}

impl OpenAiLlm {
    /// `base_url` ends before `/chat/completions`, e.g. `http://127.0.0.1:11434/v1`.
    pub fn new(base_url: &str, model: &str, api_key: Option<String>) -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .unwrap_or_default();
        Self {
            base_url: base_url.trim_end_matches('/').to_owned(),
            model: model.to_owned(),
            api_key,
            client,
        }
    }

    async fn stream(
        &self,
        messages: &[ChatMessage],
        params: &GenParams,
        on_token: &mut (dyn FnMut(&str) + Send),
    ) -> Result<String, LlmError> {
        let url = format!("{}/chat/completions", self.base_url);
        let body = serde_json::json!({
            "model": self.model,
            "messages": messages,
            "stream": true,
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "seed": params.seed,
        });
        let mut request = self.client.post(&url).json(&body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|e| LlmError::Unreachable {
            url: url.clone(),
            detail: error_chain(&e),
        })?;
        let status = response.status();
        if !status.is_success() {
            let text = response.text().await.unwrap_or_default();
            return Err(LlmError::Status {
                url,
                status: status.as_u16(),
                body: text.chars().take(300).collect(),
            });
        }
        let mut events = response.bytes_stream().eventsource();
        let mut answer = String::new();
        loop {
            let next = tokio::time::timeout(STREAM_IDLE, events.next())
                .await
                .map_err(|_| LlmError::Stalled {
                    url: url.clone(),
                    seconds: STREAM_IDLE.as_secs(),
                })?;
            let Some(event) = next else { break };
            let event = event.map_err(|e| LlmError::Protocol {
                url: url.clone(),
                detail: e.to_string(),
            })?;
            let data = event.data.trim();
            if data == "[DONE]" {
                break;
            }
            if data.is_empty() {
                continue;
            }
            let chunk: StreamChunk = serde_json::from_str(data).map_err(|e| LlmError::Protocol {
                url: url.clone(),
                detail: format!("{e} in `{data}`"),
            })?;
            if let Some(error) = chunk.error {
                return Err(LlmError::Status {
                    url,
                    status: 200,
                    body: error.to_string(),
                });
            }
            for choice in chunk.choices {
                if let Some(text) = choice.delta.and_then(|d| d.content).filter(|t| !t.is_empty()) {
                    on_token(&text);
                    answer.push_str(&text);
                }
            }
        }
        Ok(answer)
    }
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        out.push_str(": ");
        out.push_str(&inner.to_string());
        source = inner.source();
    }
    out
}

#[derive(Deserialize)]
struct StreamChunk {
    #[serde(default)]
    choices: Vec<StreamChoice>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct StreamChoice {
    #[serde(default)]
    delta: Option<StreamDelta>,
}

#[derive(Deserialize)]
struct StreamDelta {
    #[serde(default)]
    content: Option<String>,
}

impl Llm for OpenAiLlm {
    fn name(&self) -> String {
        format!("openai:{}", self.model)
    }

    fn complete<'a>(
        &'a self,
        messages: &'a [ChatMessage],
        params: &'a GenParams,
        on_token: &'a mut (dyn FnMut(&str) + Send),
    ) -> BoxFuture<'a, Result<String, LlmError>> {
        Box::pin(self.stream(messages, params, on_token))
    }
}

/// The weights and tokenizer of a local model; one generation at a time.
struct CandleModel {
    model: ModelForCausalLM,
    tokenizer: Tokenizer,
    max_positions: usize,
    stop_ids: Vec<u32>,
    device: Device,
}

/// A local Qwen2-family model run with candle (CPU).
pub struct CandleLlm {
    dir: PathBuf,
    model: Arc<Mutex<CandleModel>>,
}

impl CandleLlm {
    /// Loads a directory with `config.json`, `tokenizer.json` and `*.safetensors`.
    pub fn load(dir: &Path) -> Result<Self, LlmError> {
        let fail = |detail: String| LlmError::Model {
            dir: dir.display().to_string(),
            detail,
        };
        let Qwen2Checkpoint {
            model,
            tokenizer,
            config,
        } = Qwen2Checkpoint::load(dir, &Device::Cpu).map_err(fail)?;
        let mut stop_ids: Vec<u32> = ["<|im_end|>", "<|endoftext|>"]
            .iter()
            .filter_map(|t| tokenizer.token_to_id(t))
            .collect();
        stop_ids.extend(config.eos_token_id);
        Ok(Self {
            dir: dir.to_path_buf(),
            model: Arc::new(Mutex::new(CandleModel {
                model,
                tokenizer,
                max_positions: config.max_position_embeddings,
                stop_ids,
                device: Device::Cpu,
            })),
        })
    }
}

impl CandleModel {
    /// Samples up to `params.max_tokens` tokens after `prompt`, sending decoded text to
    /// `out` as soon as it is whole UTF-8; stops early when `stop` is set.
    fn generate(
        &mut self,
        prompt: &str,
        params: &GenParams,
        stop: &AtomicBool,
        out: &dyn Fn(&str),
    ) -> Result<String, String> {
        let encoding = self
            .tokenizer
            .encode(prompt, false)
            .map_err(|e| format!("cannot tokenise: {e}"))?;
        let mut ids = encoding.get_ids().to_vec();
        let budget = params.max_tokens.min(self.max_positions / 2).max(1);
        let room = self.max_positions.saturating_sub(budget);
        if ids.len() > room {
            // The end of the prompt (the task) matters most; cut from the front.
            ids.drain(..ids.len() - room);
        }
        self.model.clear_kv_cache();
        let sampling = if params.temperature <= 0.0 {
            Sampling::ArgMax
        } else {
            Sampling::TopP {
                p: 0.95,
                temperature: params.temperature,
            }
        };
        let mut processor = LogitsProcessor::from_sampling(params.seed, sampling);
        let mut input = Tensor::new(ids.as_slice(), &self.device)
            .and_then(|t| t.unsqueeze(0))
            .map_err(|e| e.to_string())?;
        let mut position = 0;
        let mut stream = TokenStream::new(&self.tokenizer);
        let mut text = String::new();
        let mut send = |piece: Option<String>| {
            if let Some(piece) = piece {
                out(&piece);
                text.push_str(&piece);
            }
        };
        while stream.tokens().len() < budget
            && position + input.dims().last().copied().unwrap_or(0) < self.max_positions
        {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let logits = self
                .model
                .forward(&input, position)
                .and_then(|l| l.squeeze(0))
                .and_then(|l| l.squeeze(0))
                .and_then(|l| l.to_dtype(DType::F32))
                .map_err(|e| e.to_string())?;
            position += input.dim(1).map_err(|e| e.to_string())?;
            let next = processor.sample(&logits).map_err(|e| e.to_string())?;
            if self.stop_ids.contains(&next) {
                break;
            }
            send(stream.push(next).map_err(|e| e.to_string())?);
            input = Tensor::new(&[next], &self.device)
                .and_then(|t| t.unsqueeze(0))
                .map_err(|e| e.to_string())?;
        }
        send(stream.finish().map_err(|e| e.to_string())?);
        Ok(text)
    }
}

/// Runs a CPU-bound generation of the model at `source` on a blocking thread and hands
/// each piece it streams to `on_token`. Dropping the future (a cancelled request) sets the
/// stop flag, so the thread ends after its current token.
async fn generate_blocking(
    source: String,
    on_token: &mut (dyn FnMut(&str) + Send),
    generate: impl FnOnce(&AtomicBool, &dyn Fn(&str)) -> Result<String, String> + Send + 'static,
) -> Result<String, LlmError> {
    let stop = Arc::new(AtomicBool::new(false));
    let _guard = StopOnDrop(Arc::clone(&stop));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let worker = tokio::task::spawn_blocking(move || {
        generate(&stop, &|piece| {
            let _ = tx.send(piece.to_owned());
        })
    });
    while let Some(piece) = rx.recv().await {
        on_token(&piece);
    }
    let failed = |detail: String| LlmError::Model {
        dir: source.clone(),
        detail,
    };
    worker
        .await
        .map_err(|e| failed(format!("generation stopped: {e}")))?
        .map_err(failed)
}

/// Sets the flag when dropped: a cancelled request stops the generation thread.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Llm for CandleLlm {
    fn name(&self) -> String {
        let name = self
            .dir
            .file_name()
            .map_or_else(|| self.dir.display().to_string(), |n| n.to_string_lossy().into_owned());
        format!("candle:{name}")
    }

    fn complete<'a>(
        &'a self,
        messages: &'a [ChatMessage],
        params: &'a GenParams,
        on_token: &'a mut (dyn FnMut(&str) + Send),
    ) -> BoxFuture<'a, Result<String, LlmError>> {
        let prompt = replayground_llm::chat_prompt(messages);
        let model = Arc::clone(&self.model);
        let params = params.clone();
        Box::pin(generate_blocking(
            self.dir.display().to_string(),
            on_token,
            move |stop, out| {
                let mut model = model.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                model.generate(&prompt, &params, stop, out)
            },
        ))
    }
}

/// A Qwen2 GGUF file run by `replayground-llm` on this machine. The header is read when
/// the backend is made (so a wrong file is reported at once); the weights on first use,
/// once, then shared by every request (one generation at a time).
pub struct GgufLlm {
    path: PathBuf,
    name: String,
    loaded: Arc<OnceLock<Result<LocalLlm, String>>>,
}

impl GgufLlm {
    pub fn open(path: &Path) -> Result<Self, LlmError> {
        let name = replayground_llm::describe(path).map_err(|e| LlmError::Model {
            dir: path.display().to_string(),
            detail: e.to_string(),
        })?;
        Ok(Self {
            path: path.to_path_buf(),
            name,
            loaded: Arc::new(OnceLock::new()),
        })
    }
}

impl Llm for GgufLlm {
    fn name(&self) -> String {
        format!("gguf:{}", self.name)
    }

    fn complete<'a>(
        &'a self,
        messages: &'a [ChatMessage],
        params: &'a GenParams,
        on_token: &'a mut (dyn FnMut(&str) + Send),
    ) -> BoxFuture<'a, Result<String, LlmError>> {
        let chat = messages.to_vec();
        let generation = GenerationParams {
            max_tokens: params.max_tokens,
            temperature: params.temperature,
            top_p: 0.95,
            seed: params.seed,
            repeat_penalty: 1.1,
        };
        let loaded = Arc::clone(&self.loaded);
        let path = self.path.clone();
        let task = params.task;
        Box::pin(generate_blocking(
            self.path.display().to_string(),
            on_token,
            move |stop, out| {
                let llm = loaded.get_or_init(|| {
                    let started = Instant::now();
                    let llm = LocalLlm::load(&path, &replayground_llm::default_device()).map_err(|e| e.to_string());
                    if llm.is_ok() {
                        tracing::info!("loaded {} in {:.1} s", path.display(), started.elapsed().as_secs_f64());
                    }
                    llm
                });
                let llm = llm.as_ref().map_err(Clone::clone)?;
                llm.chat(&chat, &generation, stop, &mut |piece| out(piece))
                    .map(|g| {
                        tracing::debug!(
                            ?task,
                            prompt_tokens = g.prompt_tokens,
                            reused_prompt_tokens = g.reused_prompt_tokens,
                            prefill_s = g.prefill.as_secs_f64(),
                            new_tokens = g.tokens.len(),
                            decode_s = g.decode.as_secs_f64(),
                            "LLM answer"
                        );
                        g.text
                    })
                    .map_err(|e| e.to_string())
            },
        ))
    }
}

/// One canned reply; `task` limits it to requests of that kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ScriptedReply {
    Any(String),
    For { task: LlmTask, reply: String },
}

/// Replies from a list, in order: each request takes the first unused reply meant for
/// its task (or for any task). Streams the reply word by word.
pub struct ScriptedLlm {
    replies: Mutex<Vec<ScriptedReply>>,
    asked: Mutex<HashMap<LlmTask, u32>>,
    /// Every request: its task, last user message and temperature.
    requests: Mutex<Vec<(LlmTask, String, f64)>>,
}

impl ScriptedLlm {
    pub fn new(replies: Vec<ScriptedReply>) -> Self {
        Self {
            replies: Mutex::new(replies),
            asked: Mutex::new(HashMap::new()),
            requests: Mutex::new(Vec::new()),
        }
    }

    /// Every request so far: its task and its last user message.
    pub fn prompts(&self) -> Vec<(LlmTask, String)> {
        self.requests.lock().map_or_else(
            |_| Vec::new(),
            |r| r.iter().map(|(task, prompt, _)| (*task, prompt.clone())).collect(),
        )
    }

    /// The temperature of every request of `task` so far, in order.
    pub fn temperatures(&self, task: LlmTask) -> Vec<f64> {
        self.requests.lock().map_or_else(
            |_| Vec::new(),
            |r| {
                r.iter()
                    .filter(|(t, ..)| *t == task)
                    .map(|(.., temperature)| *temperature)
                    .collect()
            },
        )
    }

    /// How many requests of `task` were made.
    pub fn asked(&self, task: LlmTask) -> u32 {
        self.asked.lock().map_or(0, |a| a.get(&task).copied().unwrap_or(0))
    }

    fn take(&self, task: LlmTask) -> Option<String> {
        *self.asked.lock().ok()?.entry(task).or_default() += 1;
        let mut replies = self.replies.lock().ok()?;
        let index = replies.iter().position(|r| match r {
            ScriptedReply::Any(_) => true,
            ScriptedReply::For { task: t, .. } => *t == task,
        })?;
        Some(match replies.remove(index) {
            ScriptedReply::Any(reply) | ScriptedReply::For { reply, .. } => reply,
        })
    }
}

impl Llm for ScriptedLlm {
    fn name(&self) -> String {
        "scripted".to_owned()
    }

    fn complete<'a>(
        &'a self,
        messages: &'a [ChatMessage],
        params: &'a GenParams,
        on_token: &'a mut (dyn FnMut(&str) + Send),
    ) -> BoxFuture<'a, Result<String, LlmError>> {
        Box::pin(async move {
            if let Ok(mut requests) = self.requests.lock() {
                requests.push((
                    params.task,
                    messages
                        .iter()
                        .rev()
                        .find(|m| m.role == Role::User)
                        .map(|m| m.content.clone())
                        .unwrap_or_default(),
                    params.temperature,
                ));
            }
            let reply = self
                .take(params.task)
                .ok_or(LlmError::Exhausted { task: params.task })?;
            for piece in reply.split_inclusive(' ') {
                on_token(piece);
                tokio::task::yield_now().await;
            }
            Ok(reply)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_or_say_what_is_wrong() {
        assert!(
            from_spec("openai:http://127.0.0.1:11434/v1#qwen2.5-coder:7b")
                .is_ok_and(|l| l.name() == "openai:qwen2.5-coder:7b")
        );
        let error = from_spec("openai:http://127.0.0.1:11434/v1").err().unwrap().to_string();
        assert!(error.contains("#MODEL"), "{error}");
        let error = from_spec("ollama:qwen").err().unwrap().to_string();
        assert!(error.contains("unknown backend `ollama`"), "{error}");
        let error = from_spec("candle:/nonexistent/model").err().unwrap().to_string();
        assert!(error.contains("config.json"), "{error}");
        let error = from_spec("gguf:/nonexistent/model.gguf").err().unwrap().to_string();
        assert!(error.contains("/nonexistent/model.gguf"), "{error}");
        assert!(resolve(Some("rules")).unwrap().is_none());
    }

    #[tokio::test]
    async fn scripted_replies_follow_their_task() {
        let llm = ScriptedLlm::new(vec![
            ScriptedReply::For {
                task: LlmTask::Generate,
                reply: "print(1)".into(),
            },
            ScriptedReply::Any("yes".into()),
        ]);
        let mut pieces = Vec::new();
        let params = GenParams::new(LlmTask::Relevance, 10);
        let answer = llm
            .complete(&[], &params, &mut |t| pieces.push(t.to_owned()))
            .await
            .unwrap();
        assert_eq!(answer, "yes");
        let params = GenParams::new(LlmTask::Generate, 10);
        assert_eq!(llm.complete(&[], &params, &mut |_| {}).await.unwrap(), "print(1)");
        assert!(matches!(
            llm.complete(&[], &params, &mut |_| {}).await,
            Err(LlmError::Exhausted { .. })
        ));
        assert_eq!(llm.asked(LlmTask::Generate), 2);
        assert_eq!(pieces.concat(), "yes");
    }

    /// A tiny OpenAI-compatible server that streams a fixed answer as SSE.
    async fn sse_server(chunks: Vec<&'static str>) -> String {
        use axum::response::sse::{Event, Sse};
        let app = axum::Router::new().route(
            "/v1/chat/completions",
            axum::routing::post(move |axum::Json(body): axum::Json<serde_json::Value>| {
                let chunks = chunks.clone();
                async move {
                    assert_eq!(body["stream"], true);
                    assert_eq!(body["model"], "tiny");
                    let events = chunks
                        .into_iter()
                        .map(|c| serde_json::json!({"choices": [{"delta": {"content": c}}]}).to_string())
                        .chain(std::iter::once("[DONE]".to_owned()))
                        .map(|data| Ok::<_, std::convert::Infallible>(Event::default().data(data)));
                    Sse::new(futures_util::stream::iter(events))
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{addr}/v1")
    }

    #[tokio::test]
    async fn openai_backend_streams_tokens() {
        let url = sse_server(vec!["```python\n", "import numpy", " as np\n", "```"]).await;
        let llm = OpenAiLlm::new(&url, "tiny", None);
        let mut pieces = Vec::new();
        let params = GenParams::new(LlmTask::Generate, 64);
        let answer = llm
            .complete(&[ChatMessage::user("write code")], &params, &mut |t| {
                pieces.push(t.to_owned());
            })
            .await
            .unwrap();
        assert_eq!(pieces.len(), 4);
        assert_eq!(answer, "```python\nimport numpy as np\n```");
    }

    #[tokio::test]
    async fn an_unreachable_server_is_named() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let llm = OpenAiLlm::new(&format!("http://{addr}/v1"), "m", None);
        let params = GenParams::new(LlmTask::Generate, 8);
        let error = llm.complete(&[], &params, &mut |_| {}).await.unwrap_err().to_string();
        assert!(
            error.contains("cannot reach the LLM server") && error.contains(&addr.to_string()),
            "{error}"
        );
    }

    #[tokio::test]
    async fn the_bundled_qwen2_model_streams_tokens() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/neural-debugger-tiny");
        let llm = CandleLlm::load(&dir).unwrap();
        let mut pieces = Vec::new();
        let params = GenParams {
            temperature: 0.0,
            ..GenParams::new(LlmTask::Generate, 12)
        };
        let answer = llm
            .complete(&[ChatMessage::user("x = 1\n")], &params, &mut |t| {
                pieces.push(t.to_owned());
            })
            .await
            .unwrap();
        assert!(!pieces.is_empty(), "no tokens streamed");
        assert_eq!(pieces.concat(), answer);
        assert!(llm.name().starts_with("candle:neural-debugger-tiny"));
    }

    /// The embedded model through the agent's trait: named from its metadata, streamed.
    /// Bounded: a few greedy tokens. `cargo xtask setup` installs the file.
    #[tokio::test]
    async fn the_embedded_gguf_model_streams_a_short_answer() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let path = catalogue::locate(&QWEN_CODER_0_5B, &root)
            .expect("the Qwen2.5-Coder-0.5B file is not installed: run `cargo xtask setup`");
        let llm = from_spec(&format!("gguf:{}", path.display())).unwrap();
        assert!(llm.name().starts_with("gguf:Qwen2.5 Coder 0.5B"), "{}", llm.name());
        let mut pieces = Vec::new();
        let params = GenParams {
            temperature: 0.0,
            ..GenParams::new(LlmTask::Generate, 6)
        };
        let answer = llm
            .complete(
                &[ChatMessage::user("Write `import numpy as np` and nothing else.")],
                &params,
                &mut |t| pieces.push(t.to_owned()),
            )
            .await
            .unwrap();
        assert!(answer.contains("import"), "{answer:?}");
        assert_eq!(pieces.concat(), answer);
    }
}
