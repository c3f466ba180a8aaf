//! A trainable Qwen2 for the neural debugger.
//!
//! candle-transformers' `qwen2` is the fast inference path, but its fused kernels
//! (`softmax_last_dim`, `rms_norm`, `rope`) have no backward pass: training through it
//! silently produces no gradients. This implementation computes the same function
//! with ops that have gradients (`rms_norm_slow`, `rope_slow`, `softmax`), under the
//! exact weight names of Hugging Face's `Qwen2ForCausalLM`, so a checkpoint trained
//! here loads into candle-transformers (and any Qwen2 tool) unchanged. A test checks
//! that both give the same logits on the same weights.

// Tensor code reads best in the notation of the papers: b, t, h, q, k, v.
#![allow(clippy::many_single_char_names)]

use candle_core::{D, DType, Device, Module, Result, Tensor};
use candle_nn::{Embedding, Linear, VarBuilder};
use serde::{Deserialize, Serialize};

/// `config.json` of a Qwen2 checkpoint (the fields this project reads and writes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Qwen2Config {
    #[serde(default = "default_architectures")]
    pub architectures: Vec<String>,
    #[serde(default = "default_model_type")]
    pub model_type: String,
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub num_key_value_heads: usize,
    pub max_position_embeddings: usize,
    #[serde(default = "default_rope_theta")]
    pub rope_theta: f64,
    #[serde(default = "default_rms_norm_eps")]
    pub rms_norm_eps: f64,
    #[serde(default)]
    pub tie_word_embeddings: bool,
    #[serde(default)]
    pub sliding_window: Option<usize>,
    #[serde(default)]
    pub use_sliding_window: bool,
    #[serde(default)]
    pub max_window_layers: Option<usize>,
    #[serde(default = "default_hidden_act")]
    pub hidden_act: String,
    #[serde(default)]
    pub bos_token_id: Option<u32>,
    #[serde(default)]
    pub eos_token_id: Option<u32>,
    #[serde(default = "default_dtype")]
    pub torch_dtype: String,
}

fn default_architectures() -> Vec<String> {
    vec!["Qwen2ForCausalLM".to_owned()]
}
fn default_model_type() -> String {
    "qwen2".to_owned()
}
fn default_rope_theta() -> f64 {
    10_000.0
}
fn default_rms_norm_eps() -> f64 {
    1e-6
}
fn default_hidden_act() -> String {
    "silu".to_owned()
}
fn default_dtype() -> String {
    "float32".to_owned()
}

/// A Qwen2-family checkpoint directory loaded for inference: the neural debugger's own
/// models and any Hugging Face Qwen2 folder the agent's `candle:DIR` backend is given.
pub struct Qwen2Checkpoint {
    pub model: candle_transformers::models::qwen2::ModelForCausalLM,
    pub tokenizer: tokenizers::Tokenizer,
    pub config: Qwen2Config,
}

impl Qwen2Checkpoint {
    /// Loads `dir` (`config.json`, `tokenizer.json`, `*.safetensors`; a training run's
    /// `optimizer.safetensors` is not weights) onto `device`. The error names the file
    /// that is missing or wrong, without the folder (the caller says which).
    pub fn load(dir: &std::path::Path, device: &Device) -> std::result::Result<Self, String> {
        let config = std::fs::read_to_string(dir.join("config.json")).map_err(|e| {
            format!(
                "no readable config.json ({e}); a model directory needs config.json, tokenizer.json and *.safetensors"
            )
        })?;
        let config: Qwen2Config =
            serde_json::from_str(&config).map_err(|e| format!("config.json is not a Qwen2 configuration: {e}"))?;
        let tokenizer = tokenizers::Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| format!("tokenizer.json cannot be read: {e}"))?;
        let mut weights: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| e.to_string())?
            .filter_map(std::result::Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "safetensors") && !p.ends_with("optimizer.safetensors"))
            .collect();
        weights.sort();
        if weights.is_empty() {
            return Err("there are no *.safetensors weights".into());
        }
        let mut tensors = std::collections::HashMap::new();
        for file in &weights {
            let loaded = candle_core::safetensors::load(file, device)
                .map_err(|e| format!("{} cannot be read: {e}", file.display()))?;
            tensors.extend(loaded);
        }
        let vb = VarBuilder::from_tensors(tensors, DType::F32, device);
        let model = candle_transformers::models::qwen2::ModelForCausalLM::new(&config.to_candle(), vb)
            .map_err(|e| format!("the weights do not fit config.json: {e}"))?;
        Ok(Self {
            model,
            tokenizer,
            config,
        })
    }
}

impl Qwen2Config {
    /// A small configuration for this project's from-scratch models.
    pub fn small(vocab_size: usize, hidden_size: usize, layers: usize, heads: usize, context: usize) -> Self {
        Self {
            architectures: default_architectures(),
            model_type: default_model_type(),
            vocab_size,
            hidden_size,
            intermediate_size: hidden_size * 8 / 3 / 32 * 32,
            num_hidden_layers: layers,
            num_attention_heads: heads,
            num_key_value_heads: (heads / 2).max(1),
            max_position_embeddings: context,
            rope_theta: default_rope_theta(),
            rms_norm_eps: default_rms_norm_eps(),
            tie_word_embeddings: true,
            sliding_window: Some(context),
            use_sliding_window: false,
            max_window_layers: Some(layers),
            hidden_act: default_hidden_act(),
            bos_token_id: None,
            eos_token_id: Some(0),
            torch_dtype: default_dtype(),
        }
    }

    pub fn head_dim(&self) -> usize {
        self.hidden_size / self.num_attention_heads
    }

    /// The same model as candle-transformers' inference configuration. Its causal mask
    /// always applies the sliding window, so the window is widened to the context.
    pub fn to_candle(&self) -> candle_transformers::models::qwen2::Config {
        candle_transformers::models::qwen2::Config {
            vocab_size: self.vocab_size,
            hidden_size: self.hidden_size,
            intermediate_size: self.intermediate_size,
            num_hidden_layers: self.num_hidden_layers,
            num_attention_heads: self.num_attention_heads,
            num_key_value_heads: self.num_key_value_heads,
            max_position_embeddings: self.max_position_embeddings,
            sliding_window: self.sliding_window.unwrap_or(0).max(self.max_position_embeddings),
            max_window_layers: self.max_window_layers.unwrap_or(self.num_hidden_layers),
            tie_word_embeddings: self.tie_word_embeddings,
            rope_theta: self.rope_theta,
            rms_norm_eps: self.rms_norm_eps,
            use_sliding_window: self.use_sliding_window,
            hidden_act: candle_nn::Activation::Silu,
        }
    }

    /// Parameters, counted from the shapes.
    pub fn parameters(&self) -> usize {
        let (h, i, v) = (self.hidden_size, self.intermediate_size, self.vocab_size);
        let kv = self.num_key_value_heads * self.head_dim();
        let attention = h * h + h + 2 * (h * kv + kv) + h * h;
        let layer = attention + 3 * h * i + 2 * h;
        let head = if self.tie_word_embeddings { 0 } else { v * h };
        v * h + self.num_hidden_layers * layer + h + head
    }
}

struct Block {
    q_proj: Linear,
    k_proj: Linear,
    v_proj: Linear,
    o_proj: Linear,
    gate_proj: Linear,
    up_proj: Linear,
    down_proj: Linear,
    input_layernorm: Tensor,
    post_attention_layernorm: Tensor,
}

/// Qwen2 built from differentiable ops; weights named as in Hugging Face.
pub struct TrainableQwen2 {
    config: Qwen2Config,
    embed_tokens: Embedding,
    layers: Vec<Block>,
    norm: Tensor,
    /// `None` when the head is tied to the embeddings.
    lm_head: Option<Linear>,
    cos: Tensor,
    sin: Tensor,
}

impl TrainableQwen2 {
    /// Builds the model from `vb` (a `VarMap` to train, or loaded safetensors).
    pub fn new(config: &Qwen2Config, vb: &VarBuilder) -> Result<Self> {
        let (h, i) = (config.hidden_size, config.intermediate_size);
        let kv = config.num_key_value_heads * config.head_dim();
        let m = vb.pp("model");
        let embed_tokens = candle_nn::embedding(config.vocab_size, h, m.pp("embed_tokens"))?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for n in 0..config.num_hidden_layers {
            let l = m.pp(format!("layers.{n}"));
            let a = l.pp("self_attn");
            let mlp = l.pp("mlp");
            layers.push(Block {
                q_proj: candle_nn::linear(h, h, a.pp("q_proj"))?,
                k_proj: candle_nn::linear(h, kv, a.pp("k_proj"))?,
                v_proj: candle_nn::linear(h, kv, a.pp("v_proj"))?,
                o_proj: candle_nn::linear_no_bias(h, h, a.pp("o_proj"))?,
                gate_proj: candle_nn::linear_no_bias(h, i, mlp.pp("gate_proj"))?,
                up_proj: candle_nn::linear_no_bias(h, i, mlp.pp("up_proj"))?,
                down_proj: candle_nn::linear_no_bias(i, h, mlp.pp("down_proj"))?,
                input_layernorm: l
                    .pp("input_layernorm")
                    .get_with_hints(h, "weight", candle_nn::Init::Const(1.0))?,
                post_attention_layernorm: l.pp("post_attention_layernorm").get_with_hints(
                    h,
                    "weight",
                    candle_nn::Init::Const(1.0),
                )?,
            });
        }
        let norm = m.pp("norm").get_with_hints(h, "weight", candle_nn::Init::Const(1.0))?;
        let lm_head = if config.tie_word_embeddings {
            None
        } else {
            Some(candle_nn::linear_no_bias(h, config.vocab_size, vb.pp("lm_head"))?)
        };
        let (cos, sin) = rotary_tables(config, vb.device(), vb.dtype())?;
        Ok(Self {
            config: config.clone(),
            embed_tokens,
            layers,
            norm,
            lm_head,
            cos,
            sin,
        })
    }

    pub fn config(&self) -> &Qwen2Config {
        &self.config
    }

    /// Logits for every position: `(batch, time)` token ids → `(batch, time, vocab)`.
    pub fn forward(&self, input_ids: &Tensor) -> Result<Tensor> {
        let (b, t) = input_ids.dims2()?;
        let c = &self.config;
        let eps = c.rms_norm_eps as f32;
        let (nh, nkv, hd) = (c.num_attention_heads, c.num_key_value_heads, c.head_dim());
        let mask = causal_mask(t, input_ids.device(), self.cos.dtype())?;
        let cos = self.cos.narrow(0, 0, t)?;
        let sin = self.sin.narrow(0, 0, t)?;
        let scale = 1.0 / (hd as f64).sqrt();
        let mut x = self.embed_tokens.forward(input_ids)?;
        for layer in &self.layers {
            let h = candle_nn::ops::rms_norm_slow(&x, &layer.input_layernorm, eps)?;
            let heads = |proj: &Linear, n: usize| -> Result<Tensor> {
                proj.forward(&h)?.reshape((b, t, n, hd))?.transpose(1, 2)?.contiguous()
            };
            let q = candle_nn::rotary_emb::rope_slow(&heads(&layer.q_proj, nh)?, &cos, &sin)?;
            let k = candle_nn::rotary_emb::rope_slow(&heads(&layer.k_proj, nkv)?, &cos, &sin)?;
            let v = heads(&layer.v_proj, nkv)?;
            let (k, v) = (repeat_kv(&k, nh / nkv)?, repeat_kv(&v, nh / nkv)?);
            let scores = (q.matmul(&k.t()?)? * scale)?.broadcast_add(&mask)?;
            let attention = candle_nn::ops::softmax(&scores, D::Minus1)?.matmul(&v)?;
            let attention = attention.transpose(1, 2)?.reshape((b, t, nh * hd))?;
            x = (x + layer.o_proj.forward(&attention)?)?;
            let h = candle_nn::ops::rms_norm_slow(&x, &layer.post_attention_layernorm, eps)?;
            let gated = (layer.gate_proj.forward(&h)?.silu()? * layer.up_proj.forward(&h)?)?;
            x = (x + layer.down_proj.forward(&gated)?)?;
        }
        let x = candle_nn::ops::rms_norm_slow(&x, &self.norm, eps)?;
        match &self.lm_head {
            Some(head) => head.forward(&x),
            None => x.broadcast_matmul(&self.embed_tokens.embeddings().t()?),
        }
    }
}

/// cos and sin of the rotary angles, `(context, head_dim / 2)` each.
fn rotary_tables(config: &Qwen2Config, device: &Device, dtype: DType) -> Result<(Tensor, Tensor)> {
    let dim = config.head_dim();
    let inv_freq: Vec<f32> = (0..dim)
        .step_by(2)
        .map(|i| 1.0 / config.rope_theta.powf(i as f64 / dim as f64) as f32)
        .collect();
    let inv_freq = Tensor::from_vec(inv_freq, (1, dim / 2), device)?;
    let positions = Tensor::arange(0u32, config.max_position_embeddings as u32, device)?
        .to_dtype(DType::F32)?
        .reshape((config.max_position_embeddings, 1))?;
    let angles = positions.matmul(&inv_freq)?;
    Ok((angles.cos()?.to_dtype(dtype)?, angles.sin()?.to_dtype(dtype)?))
}

fn causal_mask(t: usize, device: &Device, dtype: DType) -> Result<Tensor> {
    let values: Vec<f32> = (0..t)
        .flat_map(|i| (0..t).map(move |j| if j > i { f32::NEG_INFINITY } else { 0.0 }))
        .collect();
    Tensor::from_vec(values, (t, t), device)?.to_dtype(dtype)
}

/// Grouped-query attention: each key/value head serves `n_rep` query heads.
fn repeat_kv(x: &Tensor, n_rep: usize) -> Result<Tensor> {
    if n_rep == 1 {
        return Ok(x.clone());
    }
    let (b, n_kv, t, hd) = x.dims4()?;
    Tensor::cat(&vec![x; n_rep], 2)?.reshape((b, n_kv * n_rep, t, hd))
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_nn::VarMap;

    fn tiny() -> Qwen2Config {
        let mut c = Qwen2Config::small(64, 32, 2, 4, 32);
        c.intermediate_size = 48;
        c
    }

    fn random_model(config: &Qwen2Config) -> (VarMap, TrainableQwen2) {
        let varmap = VarMap::new();
        let vb = VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu);
        let model = TrainableQwen2::new(config, &vb).unwrap();
        // Non-trivial norms and biases, so that a wrong formula cannot hide.
        for (name, var) in varmap.data().lock().unwrap().iter() {
            if name.contains("norm") || name.rsplit('.').next() == Some("bias") {
                let shape = var.shape().clone();
                var.set(&Tensor::randn(1.0f32, 0.2, shape, &Device::Cpu).unwrap())
                    .unwrap();
            }
        }
        (varmap, model)
    }

    #[test]
    fn same_logits_as_candle_transformers_on_the_same_weights() {
        for tied in [true, false] {
            let mut config = tiny();
            config.tie_word_embeddings = tied;
            let (varmap, model) = random_model(&config);
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("model.safetensors");
            varmap.save(&file).unwrap();
            let ids = Tensor::new(&[[5u32, 9, 13, 2, 41, 7, 7, 63, 0, 18]], &Device::Cpu).unwrap();
            let ours = model.forward(&ids).unwrap().squeeze(0).unwrap();
            let bytes = std::fs::read(&file).unwrap();
            let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &Device::Cpu).unwrap();
            let mut reference =
                candle_transformers::models::qwen2::ModelForCausalLM::new(&config.to_candle(), vb).unwrap();
            let theirs = reference
                .forward(&ids, 0)
                .unwrap()
                .squeeze(0)
                .unwrap()
                .squeeze(0)
                .unwrap();
            let last = ours.get(ids.dim(1).unwrap() - 1).unwrap();
            let diff = (last - &theirs)
                .unwrap()
                .abs()
                .unwrap()
                .max(0)
                .unwrap()
                .to_scalar::<f32>()
                .unwrap();
            assert!(diff < 1e-4, "tied={tied}: logits differ by {diff}");
        }
    }

    #[test]
    fn every_weight_gets_a_gradient() {
        let config = tiny();
        let (varmap, model) = random_model(&config);
        let ids = Tensor::new(&[[1u32, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1]], &Device::Cpu).unwrap();
        let logits = model.forward(&ids).unwrap();
        let loss = candle_nn::loss::cross_entropy(&logits.flatten_to(1).unwrap(), &ids.flatten_all().unwrap()).unwrap();
        let grads = loss.backward().unwrap();
        let vars = varmap.all_vars();
        assert_eq!(vars.len(), varmap.data().lock().unwrap().len());
        for var in &vars {
            let g = grads.get(var).expect("a gradient for every weight");
            let norm = g.sqr().unwrap().sum_all().unwrap().to_scalar::<f32>().unwrap();
            assert!(norm > 0.0, "a zero gradient");
        }
    }

    #[test]
    fn parameter_count_matches_the_weights() {
        let config = tiny();
        let (varmap, _) = random_model(&config);
        let counted: usize = varmap.all_vars().iter().map(|v| v.elem_count()).sum();
        assert_eq!(config.parameters(), counted);
    }
}
