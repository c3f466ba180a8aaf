//! Inference for the neural debugger: KV-cached generation of the next state line,
//! constrained to the trace language.
//!
//! Any Qwen2-family directory (`config.json`, `tokenizer.json`, `*.safetensors`)
//! loads through candle-transformers' `qwen2`: this project's small models and
//! larger fine-tuned checkpoints alike. At every decoding step the tokens that would
//! leave the grammar of a state line ([`StateLineMachine`]) are masked out, so every
//! answer parses (a line that still fails to resolve, say a `..` with nothing before
//! it, is reported as a parse failure).

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::generation::{LogitsProcessor, Sampling as CandleSampling};
use candle_transformers::models::qwen2::ModelForCausalLM;
use replayground_shared::State;
use replayground_shared::trace_lang::{StateLineMachine, parse_state};
use tokenizers::Tokenizer;

use super::model::Qwen2Config;

/// How to pick tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// 0 picks the most likely token (greedy).
    pub temperature: f64,
    pub top_p: Option<f64>,
    pub seed: u64,
    /// A state line longer than this is cut and counted as a parse failure.
    pub max_tokens: usize,
}

impl Default for Sampling {
    fn default() -> Self {
        Self {
            temperature: 0.0,
            top_p: None,
            seed: 0,
            max_tokens: 256,
        }
    }
}

/// One generated state line.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    pub text: String,
    /// The parsed state, or why the line did not parse.
    pub state: Result<State, String>,
    pub tokens: usize,
}

/// A loaded model plus what constrained decoding needs.
pub struct NeuralDebugger {
    model: ModelForCausalLM,
    tokenizer: Tokenizer,
    /// The bytes each token id stands for.
    token_bytes: Vec<Vec<u8>>,
    config: Qwen2Config,
    device: Device,
}

impl NeuralDebugger {
    /// Loads a model directory, or says which file is missing or wrong.
    pub fn load(dir: &Path) -> anyhow::Result<Self> {
        let read = |name: &str| {
            std::fs::read_to_string(dir.join(name)).map_err(|e| {
                anyhow::anyhow!("{} has no readable {name} ({e}); a model directory needs config.json, tokenizer.json and *.safetensors", dir.display())
            })
        };
        let config: Qwen2Config = serde_json::from_str(&read("config.json")?)
            .map_err(|e| anyhow::anyhow!("{}/config.json is not a Qwen2 configuration: {e}", dir.display()))?;
        let tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| anyhow::anyhow!("{}/tokenizer.json cannot be read: {e}", dir.display()))?;
        let mut weights: Vec<_> = std::fs::read_dir(dir)?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "safetensors") && !p.ends_with("optimizer.safetensors"))
            .collect();
        weights.sort();
        anyhow::ensure!(!weights.is_empty(), "{} has no *.safetensors weights", dir.display());
        let device = Device::Cpu;
        let mut tensors = HashMap::new();
        for file in &weights {
            tensors.extend(candle_core::safetensors::load(file, &device)?);
        }
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &device);
        let model = ModelForCausalLM::new(&config.to_candle(), vb)
            .map_err(|e| anyhow::anyhow!("the weights in {} do not fit config.json: {e}", dir.display()))?;
        let token_bytes = token_bytes(&tokenizer);
        Ok(Self {
            model,
            tokenizer,
            token_bytes,
            config,
            device,
        })
    }

    pub fn config(&self) -> &Qwen2Config {
        &self.config
    }

    /// Generates the state line that follows `prompt` (which ends with an action
    /// line), streaming each piece of text to `on_text`. `previous` resolves `..`.
    pub fn predict(
        &mut self,
        prompt: &str,
        previous: Option<&State>,
        sampling: &Sampling,
        on_text: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Prediction> {
        let encoding = self
            .tokenizer
            .encode(prompt, false)
            .map_err(|e| anyhow::anyhow!("cannot tokenise: {e}"))?;
        let mut ids = encoding.get_ids().to_vec();
        let room = self
            .config
            .max_position_embeddings
            .saturating_sub(sampling.max_tokens.min(64));
        if ids.len() > room {
            // Keep the most recent context: the states right before the action matter most.
            ids.drain(..ids.len() - room);
        }
        self.model.clear_kv_cache();
        let mut processor = LogitsProcessor::from_sampling(
            sampling.seed,
            if sampling.temperature <= 0.0 {
                CandleSampling::ArgMax
            } else {
                match sampling.top_p {
                    Some(p) => CandleSampling::TopP {
                        p,
                        temperature: sampling.temperature,
                    },
                    None => CandleSampling::All {
                        temperature: sampling.temperature,
                    },
                }
            },
        );
        let mut machine = StateLineMachine::new();
        let mut bytes = Vec::new();
        let mut position = 0;
        let mut input = Tensor::new(ids.as_slice(), &self.device)?.unsqueeze(0)?;
        let mut produced = 0;
        let budget = sampling
            .max_tokens
            .min(self.config.max_position_embeddings.saturating_sub(ids.len()));
        while produced < budget && !machine.is_done() {
            let logits = self
                .model
                .forward(&input, position)?
                .squeeze(0)?
                .squeeze(0)?
                .to_dtype(DType::F32)?;
            position += input.dim(1)?;
            let mut values = logits.to_vec1::<f32>()?;
            let mut any = false;
            for (id, value) in values.iter_mut().enumerate() {
                let piece = self.token_bytes.get(id).map_or(&[][..], Vec::as_slice);
                let mut probe = machine.clone();
                if piece.is_empty() || !probe.feed(piece) {
                    *value = f32::NEG_INFINITY;
                } else {
                    any = true;
                }
            }
            if !any {
                break;
            }
            let masked = Tensor::from_vec(values, logits.shape(), &self.device)?;
            let next = processor.sample(&masked)?;
            let piece = &self.token_bytes[next as usize];
            machine.feed(piece);
            bytes.extend_from_slice(piece);
            on_text(&String::from_utf8_lossy(piece));
            produced += 1;
            input = Tensor::new(&[next], &self.device)?.unsqueeze(0)?;
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let state = if machine.is_done() {
            parse_state(text.trim_end_matches('\n'), previous).map_err(|(_, message)| message)
        } else {
            Err(format!(
                "the model did not finish a state line within {produced} tokens"
            ))
        };
        Ok(Prediction {
            text,
            state,
            tokens: produced,
        })
    }
}

/// The bytes of every token: special tokens are their text, others undo the
/// byte-level alphabet (each byte is written as one printable character).
fn token_bytes(tokenizer: &Tokenizer) -> Vec<Vec<u8>> {
    let to_byte = byte_level_decoder();
    let added = tokenizer.get_added_tokens_decoder();
    (0..tokenizer.get_vocab_size(true) as u32)
        .map(|id| {
            if let Some(token) = added.get(&id) {
                return token.content.as_bytes().to_vec();
            }
            tokenizer
                .id_to_token(id)
                .map(|t| t.chars().filter_map(|c| to_byte.get(&c).copied()).collect())
                .unwrap_or_default()
        })
        .collect()
}

/// The inverse of the byte-level pre-tokeniser's byte → character table.
fn byte_level_decoder() -> HashMap<char, u8> {
    let printable = |b: u8| (b'!'..=b'~').contains(&b) || (0xa1..=0xac).contains(&b) || b >= 0xae;
    let mut map = HashMap::new();
    let mut shifted = 0u32;
    for b in 0..=255u8 {
        let c = if printable(b) {
            char::from(b)
        } else {
            shifted += 1;
            char::from_u32(255 + shifted).expect("a valid code point")
        };
        map.insert(c, b);
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_table_covers_every_byte_once() {
        let map = byte_level_decoder();
        assert_eq!(map.len(), 256);
        assert_eq!(map[&'Ġ'], b' ');
        assert_eq!(map[&'Ċ'], b'\n');
        assert_eq!(map[&'a'], b'a');
    }
}
