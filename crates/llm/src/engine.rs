//! One loaded model (weights, tokenizer, stop tokens) and its generation loop.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use candle_core::Device;
use candle_core::quantized::gguf_file;
use candle_core::quantized::tokenizer::TokenizerFromGguf as _;
use candle_transformers::generation::{LogitsProcessor, Sampling};
use tokenizers::Tokenizer;

use crate::chat::{ChatMessage, END_OF_TURN, chat_prompt};
use crate::error::{LlmError, Result};
use crate::model::{Hparams, Qwen2};
use crate::prompt_cache::{DEFAULT_KEPT_PROMPTS, Prefilled, PromptCache};
use crate::stream::TokenStream;

/// How to sample.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerationParams {
    /// At most this many new tokens.
    pub max_tokens: usize,
    /// 0 is greedy.
    pub temperature: f64,
    /// Nucleus sampling: the smallest set of tokens whose probabilities reach `top_p`; 1 keeps all.
    pub top_p: f64,
    pub seed: u64,
    /// Divides the logits of the last 64 generated tokens (multiplies
    /// negative ones) by this, as llama.cpp's `repeat_penalty` does; 1 is off. Small models
    /// asked to continue code otherwise tend to repeat it block by block.
    pub repeat_penalty: f32,
}

/// How many of the latest generated tokens the repeat penalty looks at.
const REPEAT_WINDOW: usize = 64;

impl GenerationParams {
    pub fn greedy(max_tokens: usize) -> Self {
        Self {
            max_tokens,
            temperature: 0.0,
            top_p: 1.0,
            seed: 0,
            repeat_penalty: 1.0,
        }
    }
}

/// Why a generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The model ended its turn (`<|im_end|>` or `<|endoftext|>`).
    EndOfTurn,
    MaxTokens,
    /// The context window is full.
    ContextFull,
    Cancelled,
}

/// A finished generation.
#[derive(Debug, Clone)]
pub struct Generation {
    pub text: String,
    /// The generated token ids, without the stop token.
    pub tokens: Vec<u32>,
    pub prompt_tokens: usize,
    /// How many of the prompt's tokens were not read again: an earlier prompt started the same.
    pub reused_prompt_tokens: usize,
    pub stop: StopReason,
    /// Time to read the prompt (up to the first new token's logits).
    pub prefill: Duration,
    /// Time for every token after the first.
    pub decode: Duration,
}

struct Loaded {
    model: Qwen2,
    tokenizer: Tokenizer,
    stop_ids: Vec<u32>,
    name: String,
    path: PathBuf,
    /// One generation at a time: the weights are shared, the prompts read last are the
    /// state (a prompt that starts like one of them reads only the rest).
    prompts: Mutex<PromptCache>,
}

/// A Qwen2 GGUF model loaded once; cloning shares it.
#[derive(Clone)]
pub struct LocalLlm {
    inner: Arc<Loaded>,
}

/// CUDA when built with the `cuda` feature and a GPU answers, else the CPU.
pub fn default_device() -> Device {
    #[cfg(feature = "cuda")]
    if let Ok(device) = Device::new_cuda(0) {
        return device;
    }
    Device::Cpu
}

/// Reads only the header of a GGUF file (no weights): checks that this runtime can run it
/// and returns the model's name. Cheap enough to call at start-up.
pub fn describe(path: &Path) -> Result<String> {
    let file = File::open(path).map_err(|source| LlmError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let content = gguf_file::Content::read(&mut BufReader::new(file)).map_err(|e| LlmError::Format {
        path: path.to_path_buf(),
        detail: format!("cannot read its header: {e}"),
    })?;
    Hparams::from_gguf(&content).map_err(|detail| LlmError::Format {
        path: path.to_path_buf(),
        detail,
    })?;
    Ok(model_name(&content, path))
}

fn model_name(content: &gguf_file::Content, path: &Path) -> String {
    content
        .metadata
        .get("general.name")
        .and_then(|v| v.to_string().ok())
        .cloned()
        .unwrap_or_else(|| path.file_stem().unwrap_or_default().to_string_lossy().into_owned())
}

impl LocalLlm {
    /// Loads a GGUF file: weights, the tokenizer from its metadata, its name.
    pub fn load(path: &Path, device: &Device) -> Result<Self> {
        let format = |detail: String| LlmError::Format {
            path: path.to_path_buf(),
            detail,
        };
        let file = File::open(path).map_err(|source| LlmError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let mut reader = BufReader::new(file);
        let content =
            gguf_file::Content::read(&mut reader).map_err(|e| format(format!("cannot read its header: {e}")))?;
        let tokenizer =
            Tokenizer::from_gguf(&content).map_err(|e| format(format!("its tokenizer metadata is unusable: {e}")))?;
        let model = Qwen2::from_gguf(path, &content, &mut reader, device)?;
        let name = model_name(&content, path);
        let mut stop_ids: Vec<u32> = [END_OF_TURN, "<|endoftext|>"]
            .iter()
            .filter_map(|t| tokenizer.token_to_id(t))
            .collect();
        if let Some(eos) = content
            .metadata
            .get("tokenizer.ggml.eos_token_id")
            .and_then(|v| v.to_u32().ok())
        {
            stop_ids.push(eos);
        }
        if stop_ids.is_empty() {
            return Err(format("it names no end-of-turn token".into()));
        }
        let prompts = Mutex::new(PromptCache::new(DEFAULT_KEPT_PROMPTS));
        Ok(Self {
            inner: Arc::new(Loaded {
                model,
                tokenizer,
                stop_ids,
                name,
                path: path.to_path_buf(),
                prompts,
            }),
        })
    }

    /// The model's own name (`general.name`), e.g. `Qwen2.5 Coder 0.5B Instruct AWQ`.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.inner.tokenizer
    }

    pub fn model(&self) -> &Qwen2 {
        &self.inner.model
    }

    /// Token ids of `text`; special tokens written in it (`<|im_start|>`) are single ids.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        self.inner
            .tokenizer
            .encode(text, false)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| LlmError::Tokenizer(e.to_string()))
    }

    /// Answers a chat (see [`chat_prompt`]).
    pub fn chat(
        &self,
        messages: &[ChatMessage],
        params: &GenerationParams,
        cancel: &AtomicBool,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Generation> {
        self.generate(&chat_prompt(messages), params, cancel, on_text)
    }

    /// Continues `prompt` (raw text, special tokens allowed), handing each whole piece of
    /// new text to `on_text`. Stops at an end-of-turn token, after `params.max_tokens`, at
    /// the end of the context, or when `cancel` is set (checked before every forward pass).
    pub fn generate(
        &self,
        prompt: &str,
        params: &GenerationParams,
        cancel: &AtomicBool,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Generation> {
        let ids = self.encode(prompt)?;
        self.generate_ids(&ids, params, cancel, on_text)
    }

    /// [`Self::generate`] from token ids.
    pub fn generate_ids(
        &self,
        prompt: &[u32],
        params: &GenerationParams,
        cancel: &AtomicBool,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Generation> {
        let mut prompts = self.inner.prompts.lock().unwrap_or_else(PoisonError::into_inner);
        self.generate_with(&mut prompts, prompt, params, cancel, on_text)
    }

    /// [`Self::generate_ids`] starting from (and keeping its prompt in) `prompts` instead
    /// of the prompts this model keeps for its callers.
    pub fn generate_with(
        &self,
        prompts: &mut PromptCache,
        prompt: &[u32],
        params: &GenerationParams,
        cancel: &AtomicBool,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Generation> {
        let inner = &*self.inner;
        let context = inner.model.hparams.context_length;
        if prompt.is_empty() {
            return Err(LlmError::EmptyPrompt);
        }
        if prompt.len() >= context {
            return Err(LlmError::PromptTooLong {
                tokens: prompt.len(),
                max: context - 1,
            });
        }
        let mut sampler = LogitsProcessor::from_sampling(params.seed, sampling(params));
        let mut stream = TokenStream::new(&inner.tokenizer);
        let mut text = String::new();
        let mut emit = |piece: Option<String>, text: &mut String| {
            if let Some(piece) = piece {
                on_text(&piece);
                text.push_str(&piece);
            }
        };
        let started = Instant::now();
        let prefilled = prompts.read(&inner.model, prompt, cancel)?;
        let prefill = started.elapsed();
        let reused_prompt_tokens = prefilled.as_ref().map_or(0, |p| p.reused);
        let decode_started = Instant::now();
        let stop = match prefilled {
            None => StopReason::Cancelled,
            Some(_) if params.max_tokens == 0 => StopReason::MaxTokens,
            Some(Prefilled {
                mut cache, mut logits, ..
            }) => loop {
                if (params.repeat_penalty - 1.0).abs() > f32::EPSILON {
                    let recent = stream.tokens();
                    let recent = &recent[recent.len().saturating_sub(REPEAT_WINDOW)..];
                    logits = candle_transformers::utils::apply_repeat_penalty(&logits, params.repeat_penalty, recent)?;
                }
                let next = sampler.sample(&logits)?;
                if inner.stop_ids.contains(&next) {
                    break StopReason::EndOfTurn;
                }
                emit(stream.push(next)?, &mut text);
                if stream.tokens().len() >= params.max_tokens {
                    break StopReason::MaxTokens;
                }
                if cache.len() >= context {
                    break StopReason::ContextFull;
                }
                if cancel.load(Ordering::Relaxed) {
                    break StopReason::Cancelled;
                }
                logits = inner.model.forward(&[next], &mut cache)?;
            },
        };
        emit(stream.finish()?, &mut text);
        Ok(Generation {
            text,
            tokens: stream.tokens().to_vec(),
            prompt_tokens: prompt.len(),
            reused_prompt_tokens,
            stop,
            prefill,
            decode: decode_started.elapsed(),
        })
    }
}

fn sampling(params: &GenerationParams) -> Sampling {
    if params.temperature <= 0.0 {
        Sampling::ArgMax
    } else if params.top_p >= 1.0 {
        Sampling::All {
            temperature: params.temperature,
        }
    } else {
        Sampling::TopP {
            p: params.top_p,
            temperature: params.temperature,
        }
    }
}
