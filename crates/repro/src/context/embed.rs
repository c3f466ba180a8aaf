//! Sentence embeddings for dense retrieval (all-MiniLM-L6-v2 on candle's BERT, mean
//! pooled and L2-normalised) and the optional cross-encoder reranker (an HF
//! `BertForSequenceClassification` directory such as ms-marco-MiniLM-L-6-v2).
//!
//! Models are files: `cargo xtask setup` puts MiniLM in `.tools/models/all-minilm-l6-v2`.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::{Linear, Module, VarBuilder};
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// Where `cargo xtask setup` installs the embedding model, under the checkout.
pub const MODEL_DIR: &str = ".tools/models/all-minilm-l6-v2";
/// Environment variable that points at another embedding model directory.
pub const MODEL_ENV: &str = "REPLAYGROUND_EMBEDDINGS";
/// Tokens per text; MiniLM was trained on 256, longer code is cut.
pub const MAX_TOKENS: usize = 256;
/// Texts per forward pass: bounded so a large project does not need a large tensor.
const BATCH: usize = 16;
/// The files a model directory must hold.
const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("The model directory {} is missing {file}. Run `cargo xtask setup` to fetch the embedding model, or point {MODEL_ENV} at a complete model directory.", dir.display())]
    MissingFile { dir: PathBuf, file: &'static str },
    #[error("The model in {} could not be loaded: {detail}. Run `cargo xtask setup` again to fetch a fresh copy.", dir.display())]
    Load { dir: PathBuf, detail: String },
    #[error("Tokenizing the text failed: {0}.")]
    Tokenize(String),
    #[error("The embedding model failed while running: {0}.")]
    Inference(#[from] candle_core::Error),
}

/// A BERT encoder with its tokenizer; shared by the bi-encoder and the cross-encoder.
struct Encoder {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
}

impl Encoder {
    fn load(dir: &Path, prefix: Option<&str>) -> Result<(Self, VarBuilder<'static>), EmbedError> {
        for file in MODEL_FILES {
            if !dir.join(file).is_file() {
                return Err(EmbedError::MissingFile {
                    dir: dir.to_owned(),
                    file,
                });
            }
        }
        let load_error = |detail: String| EmbedError::Load {
            dir: dir.to_owned(),
            detail,
        };
        let config_text = std::fs::read_to_string(dir.join("config.json")).map_err(|e| load_error(e.to_string()))?;
        let config: Config = serde_json::from_str(&config_text).map_err(|e| load_error(format!("config.json: {e}")))?;
        let mut tokenizer =
            Tokenizer::from_file(dir.join("tokenizer.json")).map_err(|e| load_error(format!("tokenizer.json: {e}")))?;
        // The shipped tokenizer pads every text to 128: pad per batch and cut at 256 instead.
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| load_error(format!("tokenizer.json: {e}")))?;
        let device = Device::Cpu;
        // Read, not memory-mapped: mapping needs `unsafe`, and the file is only 90 MB.
        let vb = load_weights(&dir.join("model.safetensors"), &device).map_err(|e| load_error(e.to_string()))?;
        let bert_vb = match prefix {
            Some(prefix) => vb.pp(prefix),
            None => vb.clone(),
        };
        let model = BertModel::load(bert_vb, &config).map_err(|e| load_error(e.to_string()))?;
        Ok((
            Self {
                model,
                tokenizer,
                device,
            },
            vb,
        ))
    }

    /// Runs a batch of encodings; returns the hidden states and the attention mask.
    fn forward(&self, encodings: &[tokenizers::Encoding]) -> Result<(Tensor, Tensor), EmbedError> {
        let rows = |get: fn(&tokenizers::Encoding) -> &[u32]| -> Result<Tensor, EmbedError> {
            let rows = encodings
                .iter()
                .map(|encoding| Tensor::new(get(encoding), &self.device))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Tensor::stack(&rows, 0)?)
        };
        let ids = rows(tokenizers::Encoding::get_ids)?;
        let type_ids = rows(tokenizers::Encoding::get_type_ids)?;
        let mask = rows(tokenizers::Encoding::get_attention_mask)?;
        let hidden = self.model.forward(&ids, &type_ids, Some(&mask))?;
        Ok((hidden, mask))
    }
}

fn load_weights(path: &Path, device: &Device) -> candle_core::Result<VarBuilder<'static>> {
    let tensors = candle_core::safetensors::load(path, device)?;
    Ok(VarBuilder::from_tensors(tensors, DType::F32, device))
}

/// The bi-encoder: texts to unit vectors whose dot product is their cosine similarity.
pub struct Embedder {
    encoder: Encoder,
}

impl Embedder {
    /// Loads a sentence-transformers BERT directory (config.json, tokenizer.json,
    /// model.safetensors).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        Ok(Self {
            encoder: Encoder::load(dir, None)?.0,
        })
    }

    /// The model directory: `$REPLAYGROUND_EMBEDDINGS`, else the checkout's
    /// `.tools/models/all-minilm-l6-v2` when it holds a model.
    pub fn locate() -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os(MODEL_ENV).filter(|dir| !dir.is_empty()) {
            return Some(PathBuf::from(dir));
        }
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(MODEL_DIR);
        dir.join("model.safetensors").is_file().then_some(dir)
    }

    /// The embedder every command of the agent uses (`serve`, `repro`, `bench-repro`):
    /// `explicit` (`--embeddings DIR`) must load; none when `disabled` (`--no-embeddings`);
    /// else the installed default, and a default that does not load is one warning. Without
    /// one, retrieval ranks by BM25 and relevance is word overlap.
    pub fn resolve(explicit: Option<&Path>, disabled: bool) -> Result<Option<std::sync::Arc<Self>>, EmbedError> {
        if let Some(dir) = explicit {
            return Ok(Some(std::sync::Arc::new(Self::load(dir)?)));
        }
        if disabled {
            tracing::info!("reproduction agent: --no-embeddings, ranking by BM25 only");
            return Ok(None);
        }
        let Some(dir) = Self::locate() else {
            tracing::info!(
                "reproduction agent: no embedding model (`cargo xtask setup` installs all-MiniLM-L6-v2, or set {MODEL_ENV}); ranking by BM25 only"
            );
            return Ok(None);
        };
        match Self::load(&dir) {
            Ok(embedder) => {
                tracing::info!(dir = %dir.display(), "reproduction agent: embedding model ready");
                Ok(Some(std::sync::Arc::new(embedder)))
            }
            Err(e) => {
                tracing::warn!(
                    "reproduction agent: the embedding model in {} does not load ({e}); ranking by BM25 only",
                    dir.display()
                );
                Ok(None)
            }
        }
    }

    /// Embeds each text (cut at 256 tokens) into an L2-normalised vector.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        // Similar lengths in one batch waste less work on padding.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut vectors = vec![Vec::new(); texts.len()];
        for batch in order.chunks(BATCH) {
            let inputs: Vec<&str> = batch.iter().map(|&i| texts[i]).collect();
            let encodings = self
                .encoder
                .tokenizer
                .encode_batch(inputs, true)
                .map_err(|e| EmbedError::Tokenize(e.to_string()))?;
            let (hidden, mask) = self.encoder.forward(&encodings)?;
            // Mean pooling over real tokens only.
            let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
            let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
            let mean = summed.broadcast_div(&counts)?;
            let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
            let normalised: Vec<Vec<f32>> = mean.broadcast_div(&norms)?.to_vec2()?;
            for (&index, vector) in batch.iter().zip(normalised) {
                vectors[index] = vector;
            }
        }
        Ok(vectors)
    }

    /// Embeds one text.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(self.embed(&[text])?.remove(0))
    }
}

/// Cosine similarity; for the embedder's unit vectors this is the dot product.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm_a: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let norm_b: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm_a == 0.0 || norm_b == 0.0 {
        0.0
    } else {
        dot / (norm_a * norm_b)
    }
}

/// A cross-encoder: scores (query, passage) pairs with a BERT plus a classification head.
pub struct CrossEncoder {
    encoder: Encoder,
    pooler: Linear,
    classifier: Linear,
}

impl CrossEncoder {
    /// Loads an HF `BertForSequenceClassification` directory (weights under `bert.`,
    /// `bert.pooler.dense`, `classifier`).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let (encoder, vb) = Encoder::load(dir, Some("bert"))?;
        let load_error = |detail: String| EmbedError::Load {
            dir: dir.to_owned(),
            detail,
        };
        let hidden = encoder_hidden_size(dir).map_err(load_error)?;
        let pooler =
            candle_nn::linear(hidden, hidden, vb.pp("bert.pooler.dense")).map_err(|e| load_error(e.to_string()))?;
        let labels = vb
            .get_unchecked("classifier.weight")
            .map_err(|e| load_error(e.to_string()))?
            .dim(0)
            .map_err(|e| load_error(e.to_string()))?;
        let classifier =
            candle_nn::linear(hidden, labels, vb.pp("classifier")).map_err(|e| load_error(e.to_string()))?;
        Ok(Self {
            encoder,
            pooler,
            classifier,
        })
    }

    /// One relevance score per passage (the first logit; higher is more relevant).
    pub fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, EmbedError> {
        let mut scores = Vec::with_capacity(passages.len());
        for batch in passages.chunks(BATCH) {
            let pairs: Vec<(String, String)> = batch.iter().map(|p| (query.to_owned(), (*p).to_owned())).collect();
            let encodings = self
                .encoder
                .tokenizer
                .encode_batch(pairs, true)
                .map_err(|e| EmbedError::Tokenize(e.to_string()))?;
            let (hidden, _) = self.encoder.forward(&encodings)?;
            let cls = hidden.narrow(1, 0, 1)?.squeeze(1)?;
            let pooled = self.pooler.forward(&cls)?.tanh()?;
            let logits = self.classifier.forward(&pooled)?;
            let first: Vec<f32> = logits.narrow(1, 0, 1)?.squeeze(1)?.to_vec1()?;
            scores.extend(first);
        }
        Ok(scores)
    }
}

fn encoder_hidden_size(dir: &Path) -> Result<usize, String> {
    let text = std::fs::read_to_string(dir.join("config.json")).map_err(|e| e.to_string())?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    value["hidden_size"]
        .as_u64()
        .map(|size| size as usize)
        .ok_or_else(|| "config.json has no hidden_size".to_owned())
}
