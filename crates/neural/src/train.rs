//! Training the neural debugger from scratch on a corpus of trajectories.
//!
//! Trajectories are tokenised, joined with `<|endoftext|>` into one stream, and
//! trained on as random windows of the context length (next-token cross-entropy).
//! The optimiser is `AdamW` with linear warm-up, cosine decay and global-norm gradient
//! clipping, written here so that its moments can be checkpointed: a run stopped at
//! any checkpoint resumes with the same weights, moments, schedule and data order.
//! Every checkpoint directory is a complete Hugging Face-style model
//! (`config.json`, `tokenizer.json`, `model.safetensors`), with `loss.csv` and its
//! curve `loss.png`.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use candle_core::{DType, Device, Tensor, Var};
use candle_nn::{VarBuilder, VarMap};
use indicatif::{ProgressBar, ProgressStyle};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use tokenizers::Tokenizer;

use super::device::{self, DeviceChoice};
use super::model::{Qwen2Config, TrainableQwen2};
use super::plot;
use super::tokenizer::{self, END_OF_TEXT};

/// What to train and how.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrainConfig {
    pub corpus: PathBuf,
    pub out: PathBuf,
    pub steps: usize,
    pub batch_size: usize,
    pub context: usize,
    pub hidden_size: usize,
    pub layers: usize,
    pub heads: usize,
    pub vocab_size: usize,
    pub learning_rate: f64,
    pub warmup_steps: usize,
    pub weight_decay: f64,
    pub max_grad_norm: f64,
    pub seed: u64,
    pub checkpoint_every: usize,
    pub eval_every: usize,
    /// Stop (with a checkpoint) after this many steps of this run, keeping the
    /// schedule of the whole `steps`: for training in several sittings.
    #[serde(default)]
    pub stop_after: Option<usize>,
    /// Train for this many seconds of wall clock instead of a fixed `steps`: a fresh run
    /// times its first steps and sets `steps` so that the whole schedule (warm-up and
    /// decay) ends within the budget; any run stops with a checkpoint when it is spent
    /// (a fresh run not before the steps it times).
    #[serde(default)]
    pub time_budget: Option<f64>,
    /// Where to train; not saved, so a run may resume on another device.
    #[serde(skip)]
    pub device: DeviceChoice,
}

/// Saved next to the weights so that a run can resume.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrainerState {
    pub step: usize,
    pub tokens_seen: u64,
    pub seconds: f64,
    pub config: TrainConfig,
}

/// `AdamW` whose moments are ordinary named tensors (and so can be saved).
pub struct AdamW {
    vars: Vec<(String, Var)>,
    m: Vec<Tensor>,
    v: Vec<Tensor>,
    step: usize,
    beta1: f64,
    beta2: f64,
    eps: f64,
    weight_decay: f64,
}

impl AdamW {
    pub fn new(varmap: &VarMap, weight_decay: f64) -> candle_core::Result<Self> {
        let mut vars: Vec<(String, Var)> = varmap
            .data()
            .lock()
            .expect("no poisoned lock")
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        let m = vars
            .iter()
            .map(|(_, v)| v.zeros_like())
            .collect::<candle_core::Result<Vec<_>>>()?;
        let v = vars
            .iter()
            .map(|(_, v)| v.zeros_like())
            .collect::<candle_core::Result<Vec<_>>>()?;
        Ok(Self {
            vars,
            m,
            v,
            step: 0,
            beta1: 0.9,
            beta2: 0.95,
            eps: 1e-8,
            weight_decay,
        })
    }

    /// One update with `lr`, after clipping the global gradient norm to `max_norm`.
    /// Returns the norm before clipping.
    pub fn step(
        &mut self,
        grads: &candle_core::backprop::GradStore,
        lr: f64,
        max_norm: f64,
    ) -> candle_core::Result<f64> {
        let mut total = 0f64;
        let mut gs = Vec::with_capacity(self.vars.len());
        for (_, var) in &self.vars {
            let g = match grads.get(var) {
                Some(g) => g.clone(),
                None => var.zeros_like()?,
            };
            total += f64::from(g.sqr()?.sum_all()?.to_scalar::<f32>()?);
            gs.push(g);
        }
        let norm = total.sqrt();
        let clip = if norm > max_norm && norm > 0.0 {
            max_norm / norm
        } else {
            1.0
        };
        self.step += 1;
        let t = self.step as i32;
        let (b1, b2) = (self.beta1, self.beta2);
        let correction1 = 1.0 - b1.powi(t);
        let correction2 = 1.0 - b2.powi(t);
        for (k, ((name, var), g)) in self.vars.iter().zip(gs).enumerate() {
            let g = (g * clip)?;
            self.m[k] = ((&self.m[k] * b1)? + (&g * (1.0 - b1))?)?;
            self.v[k] = ((&self.v[k] * b2)? + (g.sqr()? * (1.0 - b2))?)?;
            let m_hat = (&self.m[k] / correction1)?;
            let v_hat = (&self.v[k] / correction2)?;
            let update = (m_hat / (v_hat.sqrt()? + self.eps)?)?;
            // No decay on norms and biases, as is usual for transformers.
            let decay = if name.rsplit('.').next() == Some("bias") || name.contains("norm") {
                0.0
            } else {
                self.weight_decay
            };
            let next = ((var.as_tensor() * (1.0 - lr * decay))? - (update * lr)?)?;
            var.set(&next)?;
        }
        Ok(norm)
    }

    fn save(&self, path: &Path) -> candle_core::Result<()> {
        let mut tensors: HashMap<String, Tensor> = HashMap::new();
        for (k, (name, _)) in self.vars.iter().enumerate() {
            tensors.insert(format!("m.{name}"), self.m[k].clone());
            tensors.insert(format!("v.{name}"), self.v[k].clone());
        }
        tensors.insert("step".into(), Tensor::new(&[self.step as u32], &Device::Cpu)?);
        candle_core::safetensors::save(&tensors, path)
    }

    fn load(&mut self, path: &Path, device: &Device) -> candle_core::Result<()> {
        let tensors = candle_core::safetensors::load(path, device)?;
        for (k, (name, _)) in self.vars.iter().enumerate() {
            if let (Some(m), Some(v)) = (tensors.get(&format!("m.{name}")), tensors.get(&format!("v.{name}"))) {
                self.m[k] = m.clone();
                self.v[k] = v.clone();
            }
        }
        if let Some(step) = tensors.get("step") {
            self.step = step.to_vec1::<u32>()?[0] as usize;
        }
        Ok(())
    }
}

/// Linear warm-up, then cosine decay to a tenth of the peak.
pub fn learning_rate(config: &TrainConfig, step: usize) -> f64 {
    let peak = config.learning_rate;
    if step < config.warmup_steps {
        return peak * (step + 1) as f64 / config.warmup_steps as f64;
    }
    let span = config.steps.saturating_sub(config.warmup_steps).max(1) as f64;
    let progress = ((step - config.warmup_steps) as f64 / span).min(1.0);
    let floor = peak * 0.1;
    floor + (peak - floor) * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos())
}

/// The token stream of a JSONL split: every `text`, each followed by end-of-text.
pub fn token_stream(tokenizer: &Tokenizer, jsonl: &Path) -> anyhow::Result<Vec<u32>> {
    let eot = tokenizer
        .token_to_id(END_OF_TEXT)
        .ok_or_else(|| anyhow::anyhow!("the tokenizer has no {END_OF_TEXT}"))?;
    let data = std::fs::read_to_string(jsonl).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", jsonl.display()))?;
    let mut texts = Vec::new();
    for (n, line) in data.lines().enumerate() {
        let record: serde_json::Value =
            serde_json::from_str(line).map_err(|e| anyhow::anyhow!("{}:{}: not JSON: {e}", jsonl.display(), n + 1))?;
        if let Some(text) = record["text"].as_str() {
            texts.push(text.to_owned());
        }
    }
    // On every core: a GPU run's corpus of ~100 MB takes minutes on one.
    let encodings = tokenizer
        .encode_batch(texts, false)
        .map_err(|e| anyhow::anyhow!("tokenising failed: {e}"))?;
    let mut stream = Vec::with_capacity(encodings.iter().map(|e| e.len() + 1).sum());
    for encoding in &encodings {
        stream.extend_from_slice(encoding.get_ids());
        stream.push(eot);
    }
    Ok(stream)
}

/// `batch` random windows of `context + 1` tokens: inputs and next-token targets.
fn batch(
    stream: &[u32],
    batch: usize,
    context: usize,
    rng: &mut impl Rng,
    device: &Device,
) -> candle_core::Result<(Tensor, Tensor)> {
    let mut inputs = Vec::with_capacity(batch * context);
    let mut targets = Vec::with_capacity(batch * context);
    for _ in 0..batch {
        let start = rng.random_range(0..stream.len() - context - 1);
        inputs.extend_from_slice(&stream[start..start + context]);
        targets.extend_from_slice(&stream[start + 1..=start + context]);
    }
    Ok((
        Tensor::from_vec(inputs, (batch, context), device)?,
        Tensor::from_vec(targets, (batch, context), device)?,
    ))
}

fn loss(model: &TrainableQwen2, inputs: &Tensor, targets: &Tensor) -> candle_core::Result<Tensor> {
    let logits = model.forward(inputs)?;
    candle_nn::loss::cross_entropy(&logits.flatten_to(1)?, &targets.flatten_all()?)
}

/// Steps a time-budgeted run times before it fixes its schedule; the first is left out
/// (it includes the GPU's kernel loading and allocator warm-up).
const TIMED_STEPS: usize = 6;
/// The share of a time budget the planned steps may fill: evaluation and checkpoints
/// take the rest.
const BUDGET_SHARE: f64 = 0.9;

/// The steps that fit the `seconds` left when one step takes `per_step` seconds: at least
/// `done + 1`, so a run always ends on a checkpoint of its own.
pub fn steps_within(done: usize, seconds_left: f64, per_step: f64) -> usize {
    let more = (seconds_left * BUDGET_SHARE / per_step.max(1e-9)).floor();
    done + (more as usize).max(1)
}

/// What a finished run did, written to `summary.json` beside the checkpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrainSummary {
    pub device: String,
    pub parameters: usize,
    pub steps: usize,
    pub tokens_seen: u64,
    /// Seconds of this run (not of earlier sittings).
    pub seconds: f64,
    /// Training tokens per second over this run, evaluation and checkpoints included.
    pub tokens_per_second: f64,
    pub train_loss: f32,
    pub heldout_loss: Option<f32>,
    pub config: TrainConfig,
}

/// Trains (or resumes) a model as `config` says; returns the final state.
pub fn train(config: &TrainConfig) -> anyhow::Result<TrainerState> {
    let mut config = config.clone();
    let device = device::choose(config.device)?;
    // TF32 matrix products on GPUs that have them: the weights and moments stay f32.
    candle_core::cuda::set_gemm_reduced_precision_f32(true);
    std::fs::create_dir_all(&config.out)?;
    let tokenizer_path = config.out.join("tokenizer.json");
    let tokenizer = if tokenizer_path.is_file() {
        Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", tokenizer_path.display()))?
    } else {
        tokenizer::train_on_corpus(&config.corpus.join("train.jsonl"), &tokenizer_path, config.vocab_size)?
    };
    let train_stream = token_stream(&tokenizer, &config.corpus.join("train.jsonl"))?;
    let heldout_stream = token_stream(&tokenizer, &config.corpus.join("heldout.jsonl"))?;
    anyhow::ensure!(
        train_stream.len() > 2 * (config.context + 1) && heldout_stream.len() > 2 * (config.context + 1),
        "the corpus is too small for a context of {} tokens; build a bigger one (replayground corpus --programs N)",
        config.context
    );

    let mut model_config = Qwen2Config::small(
        tokenizer.get_vocab_size(true),
        config.hidden_size,
        config.layers,
        config.heads,
        config.context,
    );
    model_config.eos_token_id = tokenizer.token_to_id(END_OF_TEXT);
    let varmap = VarMap::new();
    let vb = VarBuilder::from_varmap(&varmap, DType::F32, &device);
    let model = TrainableQwen2::new(&model_config, &vb)?;
    initialize(&varmap, config.seed, config.layers)?;
    let mut optimizer = AdamW::new(&varmap, config.weight_decay)?;
    let state_path = config.out.join("trainer_state.json");
    let mut state = TrainerState {
        step: 0,
        tokens_seen: 0,
        seconds: 0.0,
        config: config.clone(),
    };
    if state_path.is_file() {
        let saved: TrainerState = serde_json::from_str(&std::fs::read_to_string(&state_path)?)?;
        let mut loaded = varmap.clone();
        loaded.load(config.out.join("model.safetensors"))?;
        optimizer.load(&config.out.join("optimizer.safetensors"), &device)?;
        state = TrainerState {
            config: config.clone(),
            ..saved
        };
        tracing::info!(step = state.step, "resuming");
    }
    std::fs::write(
        config.out.join("config.json"),
        serde_json::to_string_pretty(&model_config)?,
    )?;

    let mut log = OpenOptions::new()
        .create(true)
        .append(true)
        .open(config.out.join("loss.csv"))?;
    if state.step == 0 {
        writeln!(
            log,
            "step,tokens,train_loss,heldout_loss,learning_rate,tokens_per_second"
        )?;
    }
    let bar = ProgressBar::new(config.steps as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} steps eta {eta} {msg}").expect("a valid template"),
    );
    bar.set_position(state.step as u64);
    let tokens_per_step = (config.batch_size * config.context) as u64;
    let started = Instant::now();
    let seconds_before = state.seconds;
    let tokens_before = state.tokens_seen;
    // The last step of this sitting: `stop_after` steps from where it began, within `steps`.
    let first_step = state.step;
    let last_step = |config: &TrainConfig| {
        config
            .stop_after
            .map_or(config.steps, |n| (first_step + n).min(config.steps))
    };
    let mut until = last_step(&config);
    let fresh = first_step == 0;
    let mut last_train_loss = f32::NAN;
    let mut last_heldout = None;
    // When step 1 ended: steps 2..=TIMED_STEPS are timed from there.
    let mut timed_from = started;
    while state.step < until {
        // The data order depends only on the seed and the step, so a resumed run sees
        // the same batches as an uninterrupted one.
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ (state.step as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let (inputs, targets) = batch(&train_stream, config.batch_size, config.context, &mut rng, &device)?;
        let step_started = Instant::now();
        let train_loss = loss(&model, &inputs, &targets)?;
        let grads = train_loss.backward()?;
        let lr = learning_rate(&config, state.step);
        optimizer.step(&grads, lr, config.max_grad_norm)?;
        let train_loss = train_loss.to_scalar::<f32>()?;
        anyhow::ensure!(
            train_loss.is_finite(),
            "the loss became {train_loss} at step {}; lower --lr",
            state.step
        );
        state.step += 1;
        state.tokens_seen += tokens_per_step;
        last_train_loss = train_loss;
        if let Some(budget) = config.time_budget {
            let spent = started.elapsed().as_secs_f64();
            if fresh && state.step == 1 {
                timed_from = Instant::now();
            } else if fresh && state.step == TIMED_STEPS {
                let per_step = timed_from.elapsed().as_secs_f64() / (TIMED_STEPS - 1) as f64;
                config.steps = steps_within(state.step, budget - spent, per_step);
                config.warmup_steps = config.warmup_steps.min(config.steps / 10);
                until = last_step(&config);
                state.config = config.clone();
                bar.set_length(config.steps as u64);
                tracing::info!(steps = config.steps, per_step, "the time budget sets the schedule");
            }
            // A fresh run always finishes the steps it times, so its schedule is planned
            // from a measurement even when the budget is smaller than they take.
            if spent >= budget && !(fresh && state.step < TIMED_STEPS) {
                until = state.step;
            }
        }
        let tps = tokens_per_step as f64 / step_started.elapsed().as_secs_f64();
        let heldout =
            if state.step.is_multiple_of(config.eval_every.max(1)) || state.step == config.steps || state.step == until
            {
                let mut eval_rng = ChaCha8Rng::seed_from_u64(config.seed.wrapping_add(1));
                let (i, t) = batch(
                    &heldout_stream,
                    config.batch_size,
                    config.context,
                    &mut eval_rng,
                    &device,
                )?;
                Some(loss(&model, &i, &t)?.to_scalar::<f32>()?)
            } else {
                None
            };
        last_heldout = heldout.or(last_heldout);
        writeln!(
            log,
            "{},{},{train_loss:.5},{},{lr:.3e},{tps:.0}",
            state.step,
            state.tokens_seen,
            heldout.map(|h| format!("{h:.5}")).unwrap_or_default()
        )?;
        bar.set_message(format!("loss {train_loss:.3} {tps:.0} tok/s"));
        bar.inc(1);
        state.seconds = seconds_before + started.elapsed().as_secs_f64();
        if state.step.is_multiple_of(config.checkpoint_every.max(1)) || state.step == until {
            checkpoint(&varmap, &optimizer, &state, &config.out)?;
        }
    }
    bar.finish();
    let run_seconds = started.elapsed().as_secs_f64();
    let run_tokens = state.tokens_seen.saturating_sub(tokens_before);
    let summary = TrainSummary {
        device: device::describe(&device).to_owned(),
        parameters: varmap.all_vars().iter().map(|v| v.elem_count()).sum(),
        steps: state.step,
        tokens_seen: state.tokens_seen,
        seconds: run_seconds,
        tokens_per_second: run_tokens as f64 / run_seconds.max(1e-9),
        train_loss: last_train_loss,
        heldout_loss: last_heldout,
        config: state.config.clone(),
    };
    std::fs::write(config.out.join("summary.json"), serde_json::to_string_pretty(&summary)?)?;
    Ok(state)
}

/// Seeded initialisation, as Hugging Face initialises Qwen2 (normal with standard
/// deviation 0.02, zero biases, unit norms), with the residual projections scaled by
/// `1/sqrt(2·layers)` so that deep stacks start stable.
pub fn initialize(varmap: &VarMap, seed: u64, layers: usize) -> candle_core::Result<()> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let data = varmap.data().lock().expect("no poisoned lock");
    let mut names: Vec<&String> = data.keys().collect();
    names.sort();
    for name in names {
        let var = &data[name];
        let shape = var.shape().clone();
        let n = shape.elem_count();
        let values: Vec<f32> = if name.rsplit('.').next() == Some("bias") {
            vec![0.0; n]
        } else if name.contains("norm") {
            vec![1.0; n]
        } else {
            let residual = name.contains("o_proj") || name.contains("down_proj");
            let std = if residual {
                0.02 / (2.0 * layers as f64).sqrt()
            } else {
                0.02
            };
            (0..n).map(|_| (standard_normal(&mut rng) * std) as f32).collect()
        };
        var.set(&Tensor::from_vec(values, shape, var.device())?)?;
    }
    Ok(())
}

/// Box–Muller: one standard normal sample.
fn standard_normal(rng: &mut impl Rng) -> f64 {
    let u1: f64 = rng.random_range(f64::EPSILON..1.0);
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Weights, optimiser moments and the trainer state, each written atomically.
fn checkpoint(varmap: &VarMap, optimizer: &AdamW, state: &TrainerState, out: &Path) -> anyhow::Result<()> {
    let write = |name: &str, save: &dyn Fn(&Path) -> anyhow::Result<()>| -> anyhow::Result<()> {
        let tmp = out.join(format!("{name}.tmp"));
        save(&tmp)?;
        std::fs::rename(&tmp, out.join(name))?;
        Ok(())
    };
    write("model.safetensors", &|p| Ok(varmap.save(p)?))?;
    write("optimizer.safetensors", &|p| Ok(optimizer.save(p)?))?;
    write("trainer_state.json", &|p| {
        Ok(std::fs::write(p, serde_json::to_string_pretty(state)?)?)
    })?;
    plot::plot_dir(out)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_warms_up_then_decays() {
        let config = TrainConfig {
            corpus: PathBuf::new(),
            out: PathBuf::new(),
            steps: 100,
            batch_size: 1,
            context: 8,
            hidden_size: 8,
            layers: 1,
            heads: 1,
            vocab_size: 300,
            learning_rate: 1e-3,
            warmup_steps: 10,
            weight_decay: 0.1,
            max_grad_norm: 1.0,
            seed: 1,
            checkpoint_every: 10,
            eval_every: 10,
            stop_after: None,
            time_budget: None,
            device: DeviceChoice::Cpu,
        };
        assert!(learning_rate(&config, 0) < learning_rate(&config, 9));
        assert!((learning_rate(&config, 10) - 1e-3).abs() < 1e-9);
        assert!(learning_rate(&config, 60) < learning_rate(&config, 20));
        assert!((learning_rate(&config, 100) - 1e-4).abs() < 1e-9);
    }

    #[test]
    fn a_time_budget_plans_the_steps_that_fit_it() {
        // 60 s left at 0.5 s a step: 90% of the budget is 108 more steps.
        assert_eq!(steps_within(6, 60.0, 0.5), 114);
        // A budget already spent still ends on a step of its own.
        assert_eq!(steps_within(6, -3.0, 0.5), 7);
    }
}
