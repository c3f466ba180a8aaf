use std::path::PathBuf;

/// Why a model could not be loaded or could not generate.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("cannot read the model file {}: {source}", path.display())]
    Open { path: PathBuf, source: std::io::Error },
    #[error("{} is not a usable Qwen2 GGUF file: {detail}", path.display())]
    Format { path: PathBuf, detail: String },
    #[error("cannot tokenise the text: {0}")]
    Tokenizer(String),
    #[error("the prompt has {tokens} tokens but the model reads at most {max}; shorten it")]
    PromptTooLong { tokens: usize, max: usize },
    #[error("the prompt is empty")]
    EmptyPrompt,
    #[error("the model failed while computing: {0}")]
    Compute(#[from] candle_core::Error),
}

pub type Result<T, E = LlmError> = std::result::Result<T, E>;
