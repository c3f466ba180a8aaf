//! Inference for the neural debugger: KV-cached generation of the next state line,
//! constrained to the trace language.
//!
//! Any Qwen2-family directory (`config.json`, `tokenizer.json`, `*.safetensors`)
//! loads through candle-transformers' `qwen2`: this project's small models and
//! larger fine-tuned checkpoints alike. At every decoding step the tokens that would
//! leave the grammar of a state line ([`StateLineMachine`]) are masked out, so every
//! answer parses. A `..` (unchanged) value is only allowed for a variable that the
//! previous state of the same frame has, so every finished line also resolves; a line
//! cut by the token budget is reported as a parse failure. What the code and the action
//! allow ([`Bounds`]: lines, frames, names, depths) masks more tokens still.
//!
//! Inverse mode samples k candidate previous states ([`NeuralDebugger::sample_previous`])
//! and [`mark_consistent`] checks each against the real execution.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_transformers::generation::{LogitsProcessor, Sampling as CandleSampling};
use candle_transformers::models::qwen2::ModelForCausalLM;
use replayground_shared::trace_lang::{self, StateLineMachine, Trajectory, normalize_state, parse_state};
use replayground_shared::{Action, State};
use tokenizers::Tokenizer;

pub use super::bounds::Guide;
use super::bounds::{Bounds, Scan};
use super::model::{Qwen2Checkpoint, Qwen2Config};

/// How to pick tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// 0 picks the most likely token (greedy).
    pub temperature: f64,
    pub top_p: Option<f64>,
    pub seed: u64,
    /// A state line longer than this is cut and counted as a parse failure.
    pub max_tokens: usize,
    /// Whether the code's and the action's [`Bounds`] apply besides the grammar (off
    /// only to measure what they add).
    pub bounded: bool,
    /// Whether text the grammar and bounds leave no choice about (` <|vars|>{"`, a
    /// frame's function, the names it must show again) is read in one forward pass
    /// instead of decoded token by token, where the engine can tokenize it (off only to
    /// measure what it saves).
    pub jump_forward: bool,
}

impl Default for Sampling {
    fn default() -> Self {
        Self {
            temperature: 0.0,
            top_p: None,
            seed: 0,
            max_tokens: 256,
            bounded: true,
            jump_forward: true,
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
    /// Whether the bounds left no token somewhere and the rest was decoded under the
    /// grammar alone.
    pub bounds_dropped: bool,
}

/// One of k sampled answers (a previous state, or a call whose arguments are the
/// function's inputs), and whether it agrees with the real execution once checked.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Candidate {
    pub text: String,
    /// The parsed state; `None` when the line did not parse (`error` says why).
    pub state: Option<State>,
    pub error: Option<String>,
    /// `None` until checked against the real execution.
    pub consistent: Option<bool>,
    /// The seed this candidate was sampled with (reproduces it alone).
    pub seed: u64,
}

impl Candidate {
    fn from_prediction(prediction: Prediction, seed: u64) -> Self {
        let (state, error) = match prediction.state {
            Ok(state) => (Some(state), None),
            Err(e) => (None, Some(e)),
        };
        Self {
            text: prediction.text,
            state,
            error,
            consistent: None,
            seed,
        }
    }
}

/// Marks each candidate consistent when its state is the real one (after
/// normalisation); an unparsed candidate is inconsistent.
pub fn mark_consistent(candidates: &mut [Candidate], real: &State) {
    let real = normalize_state(real);
    for c in candidates {
        c.consistent = Some(c.state.as_ref().is_some_and(|s| normalize_state(s) == real));
    }
}

/// A loaded model plus what constrained decoding needs.
pub struct NeuralDebugger {
    model: ModelForCausalLM,
    tokenizer: Tokenizer,
    /// The bytes each token id stands for.
    token_bytes: Vec<Vec<u8>>,
    config: Qwen2Config,
    device: Device,
    /// The model folder's name.
    name: String,
}

impl NeuralDebugger {
    /// Loads a model directory onto the CPU, or says which file is missing or wrong.
    pub fn load(dir: &Path) -> anyhow::Result<Self> {
        Self::load_on(dir, &Device::Cpu)
    }

    /// Loads a model directory onto `device` (see [`super::device::choose`]).
    pub fn load_on(dir: &Path, device: &Device) -> anyhow::Result<Self> {
        let Qwen2Checkpoint {
            model,
            tokenizer,
            config,
        } = Qwen2Checkpoint::load(dir, device).map_err(|detail| anyhow::anyhow!("{}: {detail}", dir.display()))?;
        let device = device.clone();
        let token_bytes = token_bytes(&tokenizer, AddedTokens::AsText);
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string());
        Ok(Self {
            model,
            tokenizer,
            token_bytes,
            config,
            device,
            name,
        })
    }

    pub fn config(&self) -> &Qwen2Config {
        &self.config
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    /// How many tokens `text` takes.
    pub fn count_tokens(&self, text: &str) -> anyhow::Result<usize> {
        Ok(self
            .tokenizer
            .encode(text, false)
            .map_err(|e| anyhow::anyhow!("cannot tokenise: {e}"))?
            .len())
    }

    /// Tokens to leave for the answer after `previous` when the context is full: an
    /// answer is about as long as the state before it written in full, plus room for a
    /// new variable or value (at most `sampling.max_tokens`, at most half the context).
    pub fn answer_budget(&self, previous: Option<&State>, sampling: &Sampling) -> usize {
        let full = previous
            .and_then(|p| trace_lang::state_text(p, None).ok())
            .and_then(|t| self.count_tokens(&t).ok())
            .unwrap_or(0);
        (full + full / 4 + 48)
            .max(64)
            .min(sampling.max_tokens)
            .min(self.config.max_position_embeddings / 2)
    }

    /// The logits after `prompt` (which ends with an action line, cut to leave the
    /// answer its budget), the budget and the number of prompt tokens read.
    fn read_prompt(
        &mut self,
        prompt: &str,
        previous: Option<&State>,
        sampling: &Sampling,
    ) -> anyhow::Result<(Vec<f32>, usize, usize)> {
        let encoding = self
            .tokenizer
            .encode(prompt, false)
            .map_err(|e| anyhow::anyhow!("cannot tokenise: {e}"))?;
        let mut ids = encoding.get_ids().to_vec();
        // Leave the answer its budget; cutting the prompt costs less than cutting the answer.
        let room = self
            .config
            .max_position_embeddings
            .saturating_sub(self.answer_budget(previous, sampling));
        if ids.len() > room {
            // Keep the most recent context: the states right before the action matter most.
            ids.drain(..ids.len() - room);
        }
        self.model.clear_kv_cache();
        let input = Tensor::new(ids.as_slice(), &self.device)?.unsqueeze(0)?;
        let logits = forward_logits(&mut self.model, &input, 0)?;
        let budget = sampling
            .max_tokens
            .min(self.config.max_position_embeddings.saturating_sub(ids.len()));
        Ok((logits, budget, ids.len()))
    }
}

impl Engine for NeuralDebugger {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn count_tokens(&self, text: &str) -> anyhow::Result<usize> {
        NeuralDebugger::count_tokens(self, text)
    }

    fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    fn frame(&self) -> PromptFrame {
        PromptFrame::default()
    }

    fn context(&self) -> usize {
        self.config.max_position_embeddings
    }

    fn prompt(&self, prefix: &Trajectory, action: Action, sampling: &Sampling) -> anyhow::Result<String> {
        let previous = prefix.steps.last().map(|s| &s.state);
        let room = self
            .config
            .max_position_embeddings
            .saturating_sub(self.answer_budget(previous, sampling));
        fitted_prompt(prefix, action, "", room, &|text| self.count_tokens(text))
    }

    fn predict(
        &mut self,
        prompt: &str,
        guide: &Guide<'_>,
        sampling: &Sampling,
        on_text: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Prediction> {
        let (first, budget, mut position) = self.read_prompt(prompt, guide.previous, sampling)?;
        let (model, device) = (&mut self.model, &self.device);
        decode_state_line(
            first,
            &mut |tokens| {
                let [token] = tokens else {
                    anyhow::bail!("the from-scratch model reads one token at a time")
                };
                let input = Tensor::new(&[*token], device)?.unsqueeze(0)?;
                let logits = forward_logits(model, &input, position);
                position += 1;
                logits
            },
            None,
            &self.token_bytes,
            guide,
            sampling,
            budget,
            on_text,
        )
    }
}

/// The logits (f32) after `input`, read at `position` of the model's cache.
fn forward_logits(model: &mut ModelForCausalLM, input: &Tensor, position: usize) -> anyhow::Result<Vec<f32>> {
    Ok(model
        .forward(input, position)?
        .squeeze(0)?
        .squeeze(0)?
        .to_dtype(DType::F32)?
        .to_vec1::<f32>()?)
}

/// A model that predicts the state a debugger action leads to: the from-scratch
/// [`NeuralDebugger`] or a code LLM prompted in context
/// ([`super::in_context::InContextDebugger`]). Both decode under the same grammar.
pub trait Engine: Send {
    /// What reports call it.
    fn name(&self) -> String;

    /// How many of the engine's tokens `text` takes.
    fn count_tokens(&self, text: &str) -> anyhow::Result<usize>;

    /// The engine's tokenizer, for callers that fit prompts without holding the engine.
    fn tokenizer(&self) -> &Tokenizer;

    /// What a prompt holds before the trajectory (nothing for a model trained on the
    /// trace language).
    fn frame(&self) -> PromptFrame;

    /// The most tokens a prompt and its answer may take together.
    fn context(&self) -> usize;

    /// The prompt that asks for the state after `action` from the end of `prefix`,
    /// fitted into the engine's context.
    fn prompt(&self, prefix: &Trajectory, action: Action, sampling: &Sampling) -> anyhow::Result<String>;

    /// Generates the state line that follows `prompt` (made by [`Engine::prompt`]),
    /// streaming each piece of text to `on_text`, within `guide`'s bounds.
    fn predict(
        &mut self,
        prompt: &str,
        guide: &Guide<'_>,
        sampling: &Sampling,
        on_text: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Prediction>;

    /// k answers to `prompt`, candidate `i` sampled with seed `sampling.seed + i`.
    fn sample(
        &mut self,
        prompt: &str,
        guide: &Guide<'_>,
        sampling: &Sampling,
        k: usize,
    ) -> anyhow::Result<Vec<Candidate>> {
        (0..k as u64)
            .map(|i| {
                let seed = sampling.seed.wrapping_add(i);
                let one = Sampling { seed, ..*sampling };
                Ok(Candidate::from_prediction(
                    self.predict(prompt, guide, &one, &mut |_| {})?,
                    seed,
                ))
            })
            .collect()
    }

    /// Inverse mode: k candidate states before the last state of `inverse` (a
    /// trajectory written backwards), reached by the reverse `action`. Check them
    /// with [`mark_consistent`] against the real previous state.
    fn sample_previous(
        &mut self,
        inverse: &Trajectory,
        action: Action,
        sampling: &Sampling,
        k: usize,
    ) -> anyhow::Result<Vec<Candidate>> {
        anyhow::ensure!(
            inverse.direction == trace_lang::Direction::Inverse,
            "sampling previous states needs a trajectory written backwards (Direction::Inverse)"
        );
        let prompt = self.prompt(inverse, action, sampling)?;
        self.sample(&prompt, &Guide::after(inverse, action), sampling, k)
    }
}

/// What a prompt holds before the trajectory: a fixed header, then (when `listing`)
/// the program with line numbers, which a general code LLM cannot count reliably.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptFrame {
    pub header: String,
    pub listing: bool,
}

impl PromptFrame {
    /// The text before the trajectory of `code`.
    pub fn preamble(&self, code: &str) -> String {
        let mut text = self.header.clone();
        if self.listing {
            text.push_str(&numbered_listing(code));
        }
        text
    }
}

/// `code` with line numbers, introduced for a model that reads it before the trace.
pub fn numbered_listing(code: &str) -> String {
    use std::fmt::Write as _;
    let mut text = String::from("The program with line numbers:\n");
    for (n, line) in code.lines().enumerate() {
        let _ = writeln!(text, "{:>3}| {line}", n + 1);
    }
    text.push_str("Its trace:\n");
    text
}

/// `header`, then as much of `prefix` as fits in `room` tokens (counted by `count`), then
/// the action line. When the whole trajectory does not fit, its earliest states are left
/// out: the code always stays, and the first state kept is written in full, so that
/// every `..` still resolves.
pub(crate) fn fitted_prompt(
    prefix: &Trajectory,
    action: Action,
    header: &str,
    room: usize,
    count: &dyn Fn(&str) -> anyhow::Result<usize>,
) -> anyhow::Result<String> {
    let action_line = format!("{}\n", trace_lang::action_text(action));
    let mut first = 0;
    loop {
        let mut steps = prefix.steps[first..].to_vec();
        if let Some(s) = steps.first_mut() {
            s.action = None;
        }
        let kept = Trajectory {
            code: prefix.code.clone(),
            direction: prefix.direction,
            steps,
        };
        let mut text = header.to_owned();
        text.push_str(&trace_lang::serialize(&kept)?);
        text.push_str(&action_line);
        if first + 1 >= prefix.steps.len() || count(&text)? <= room {
            return Ok(text);
        }
        first += 1;
    }
}

/// Turns text into the engine's token ids, for [`decode_state_line`]'s jump forward.
pub(crate) type Encode<'a> = &'a dyn Fn(&str) -> anyhow::Result<Vec<u32>>;

/// Decodes one state line under the trace language's grammar. `first` holds the logits
/// after the prompt; `next` reads the chosen tokens (one, or with `encode` the forced
/// text after it too) and returns the logits after the last.
/// Tokens whose bytes would leave the grammar (or are empty: special tokens an engine
/// refuses) are never chosen; greedy decoding takes the best allowed token, checking the
/// likeliest first, so a large vocabulary costs little. With `encode` (and
/// `sampling.jump_forward`), the bytes that the grammar and bounds then leave no choice
/// about are tokenized and read with the chosen token in one forward pass: a CPU reads
/// a token of a prompt several times faster than it decodes one.
#[allow(clippy::too_many_arguments)]
pub(crate) fn decode_state_line(
    first: Vec<f32>,
    next: &mut dyn FnMut(&[u32]) -> anyhow::Result<Vec<f32>>,
    encode: Option<Encode<'_>>,
    token_bytes: &[Vec<u8>],
    guide: &Guide<'_>,
    sampling: &Sampling,
    budget: usize,
    on_text: &mut dyn FnMut(&str),
) -> anyhow::Result<Prediction> {
    let previous = guide.previous;
    let mut processor = (sampling.temperature > 0.0).then(|| {
        LogitsProcessor::from_sampling(
            sampling.seed,
            match sampling.top_p {
                Some(p) => CandleSampling::TopP {
                    p,
                    temperature: sampling.temperature,
                },
                None => CandleSampling::All {
                    temperature: sampling.temperature,
                },
            },
        )
    });
    let mut machine = StateLineMachine::new();
    let unbounded = Bounds::none();
    let mut scan = if sampling.bounded { &guide.bounds } else { &unbounded }.scan();
    let unchanged = UnchangedGuard::new(previous);
    let mut bytes = Vec::new();
    let mut produced = 0;
    let mut logits = first;
    // Bounds that leave no token at all (a case they do not foresee) are dropped for the
    // rest of the answer rather than cutting it: the grammar alone still holds.
    let mut bounded = true;
    while produced < budget && !machine.is_done() {
        let allowed = |id: usize, bounded: bool| {
            let piece = token_bytes.get(id).map_or(&[][..], Vec::as_slice);
            let mut probe = machine.clone();
            !piece.is_empty()
                && probe.feed(piece)
                && (!bounded || scan.clone().feed(piece))
                && !(piece.contains(&b'.') && unchanged.breaks(&bytes, piece))
        };
        let mut chosen = pick(&logits, |id| allowed(id, bounded), processor.as_mut())?;
        if chosen.is_none() && bounded {
            tracing::warn!(
                so_far = %String::from_utf8_lossy(&bytes),
                "the decoding bounds left no token; decoding the rest of this answer under the grammar alone"
            );
            bounded = false;
            chosen = pick(&logits, |id| allowed(id, false), processor.as_mut())?;
        }
        let Some(token) = chosen else { break };
        let piece = &token_bytes[token as usize];
        machine.feed(piece);
        if bounded {
            scan.feed(piece);
        }
        bytes.extend_from_slice(piece);
        on_text(&String::from_utf8_lossy(piece));
        produced += 1;
        let mut read = vec![token];
        if let Some(encode) = encode.filter(|_| sampling.jump_forward && !machine.is_done()) {
            let forced = forced_bytes(&machine, bounded.then_some(&scan), &unchanged, &bytes);
            if let Some((ids, forced)) = forced_tokens(&forced, encode, token_bytes)?
                && produced + ids.len() <= budget
            {
                machine.feed(&forced);
                if bounded {
                    scan.feed(&forced);
                }
                bytes.extend_from_slice(&forced);
                on_text(&String::from_utf8_lossy(&forced));
                produced += ids.len();
                read.extend(ids);
            }
        }
        if machine.is_done() || produced >= budget {
            break;
        }
        logits = next(&read)?;
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
        bounds_dropped: sampling.bounded && !bounded,
    })
}

/// The bytes that must come next: each the only byte the grammar (and `scan`'s bounds,
/// when bounded) accept after `written` and the bytes before it, up to the first choice
/// or the end of the line.
fn forced_bytes(
    machine: &StateLineMachine,
    scan: Option<&Scan<'_>>,
    unchanged: &UnchangedGuard<'_>,
    written: &[u8],
) -> Vec<u8> {
    let mut machine = machine.clone();
    let mut scan = scan.cloned();
    let mut so_far = written.to_vec();
    let mut forced = Vec::new();
    while !machine.is_done() {
        let mut accepted = (0..=u8::MAX).filter(|&b| {
            let piece = [b];
            machine.clone().feed(&piece)
                && scan.as_ref().is_none_or(|s| s.clone().feed(&piece))
                && !(b == b'.' && unchanged.breaks(&so_far, &piece))
        });
        let (Some(only), None) = (accepted.next(), accepted.next()) else {
            break;
        };
        machine.feed(&[only]);
        if let Some(scan) = scan.as_mut() {
            scan.feed(&[only]);
        }
        so_far.push(only);
        forced.push(only);
    }
    forced
}

/// The tokens to read for `forced` and the bytes they spell: the engine's tokens for it,
/// when they spell it exactly, but the last one, unless it ends the line. The model
/// writes that one itself, so that where the forced text runs into the value it then
/// chooses, it can take the token that spans both, as its tokenizer would have split
/// the line (without this, the 0.5B got a third fewer variables right).
fn forced_tokens(
    forced: &[u8],
    encode: Encode<'_>,
    token_bytes: &[Vec<u8>],
) -> anyhow::Result<Option<(Vec<u32>, Vec<u8>)>> {
    let Ok(text) = std::str::from_utf8(forced) else {
        return Ok(None);
    };
    if text.is_empty() {
        return Ok(None);
    }
    let mut ids = encode(text)?;
    let spell = |ids: &[u32]| -> Vec<u8> {
        ids.iter()
            .flat_map(|&id| token_bytes.get(id as usize).map_or(&[][..], Vec::as_slice))
            .copied()
            .collect()
    };
    if spell(&ids) != forced {
        return Ok(None);
    }
    if !forced.ends_with(b"\n") {
        ids.pop();
    }
    if ids.is_empty() {
        return Ok(None);
    }
    let spelled = spell(&ids);
    Ok(Some((ids, spelled)))
}

/// The token to take from `logits` among those `allowed` accepts: the likeliest, or one
/// sampled by `processor` from the allowed ones; `None` when none is allowed.
fn pick(
    logits: &[f32],
    allowed: impl Fn(usize) -> bool,
    processor: Option<&mut LogitsProcessor>,
) -> anyhow::Result<Option<u32>> {
    let Some(processor) = processor else {
        return Ok(best_allowed(logits, allowed));
    };
    let mut masked = logits.to_vec();
    let mut any = false;
    for (id, value) in masked.iter_mut().enumerate() {
        if allowed(id) {
            any = true;
        } else {
            *value = f32::NEG_INFINITY;
        }
    }
    if !any {
        return Ok(None);
    }
    let len = masked.len();
    Ok(Some(processor.sample(&Tensor::from_vec(masked, len, &Device::Cpu)?)?))
}

/// The likeliest token that `allowed` accepts: the top 64 are checked in order first,
/// then the rest, so a 150,000-token vocabulary is rarely walked in full.
fn best_allowed(logits: &[f32], allowed: impl Fn(usize) -> bool) -> Option<u32> {
    let descending = |a: &u32, b: &u32| logits[*b as usize].total_cmp(&logits[*a as usize]);
    let mut order: Vec<u32> = (0..u32::try_from(logits.len()).ok()?).collect();
    let head = order.len().min(64);
    if head == 0 {
        return None;
    }
    order.select_nth_unstable_by(head - 1, descending);
    let (top, rest) = order.split_at_mut(head);
    top.sort_unstable_by(descending);
    if let Some(&id) = top.iter().find(|&&id| allowed(id as usize)) {
        return Some(id);
    }
    rest.sort_unstable_by(descending);
    rest.iter().copied().find(|&id| allowed(id as usize))
}

/// Refuses a `..` (unchanged) value for a variable that the previous state of the
/// same frame does not have: `parse_state` could not resolve it.
struct UnchangedGuard<'a> {
    previous: Option<&'a State>,
}

impl<'a> UnchangedGuard<'a> {
    fn new(previous: Option<&'a State>) -> Self {
        Self { previous }
    }

    /// Whether `so_far` followed by `piece` writes an unresolvable `..`.
    fn breaks(&self, so_far: &[u8], piece: &[u8]) -> bool {
        let mut text = Vec::with_capacity(so_far.len() + piece.len());
        text.extend_from_slice(so_far);
        text.extend_from_slice(piece);
        let marker = trace_lang::VARS.as_bytes();
        let Some(at) = text.windows(marker.len()).position(|w| w == marker) else {
            return false;
        };
        // `<|kind|>LINE DEPTH FUNCTION ` before the variables.
        let header = String::from_utf8_lossy(&text[..at]);
        let mut words = header.split(' ');
        let (_, depth, function) = (words.next(), words.next(), words.next());
        let known: Vec<&str> = self
            .previous
            .filter(|p| p.function.as_deref() == function && p.depth.map(|d| d.to_string()).as_deref() == depth)
            .map(|p| {
                let vars = if p.depth == Some(0) { &p.globals } else { &p.locals };
                vars.as_ref()
                    .map(|v| v.0.iter().map(|(n, _)| n.as_str()).collect())
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        json_values(&text[at + marker.len()..])
            .iter()
            .any(|(key, value)| value.starts_with(b"..") && !known.contains(&key.as_str()))
    }
}

/// The (key, raw value so far) pairs of a possibly unfinished JSON object of strings.
fn json_values(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    // Reads one JSON string from `i` (at its opening quote): raw contents and whether it closed.
    fn string(bytes: &[u8], mut i: usize) -> (Vec<u8>, usize, bool) {
        let mut raw = Vec::new();
        i += 1;
        while i < bytes.len() {
            match bytes[i] {
                b'"' => return (raw, i + 1, true),
                b'\\' => {
                    raw.extend_from_slice(&bytes[i..(i + 2).min(bytes.len())]);
                    i += 2;
                }
                b => {
                    raw.push(b);
                    i += 1;
                }
            }
        }
        (raw, i, false)
    }
    let mut out = Vec::new();
    let mut i = bytes.iter().position(|&b| b == b'{').map_or(bytes.len(), |p| p + 1);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let (key, next, closed) = string(bytes, i);
                if !closed {
                    break;
                }
                let key = serde_json::from_slice::<String>(&[b"\"", key.as_slice(), b"\""].concat())
                    .unwrap_or_else(|_| String::from_utf8_lossy(&key).into_owned());
                let mut j = next;
                while j < bytes.len() && bytes[j] != b'"' {
                    if bytes[j] == b'}' {
                        return out;
                    }
                    j += 1;
                }
                if j >= bytes.len() {
                    break;
                }
                let (value, after, _) = string(bytes, j);
                out.push((key, value));
                i = after;
            }
            b'}' => break,
            _ => i += 1,
        }
    }
    out
}

/// What a constrained decoder may do with the tokenizer's added (special) tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AddedTokens {
    /// They are the trace language's markers: each stands for its text.
    AsText,
    /// They are a chat model's control tokens: never chosen (no bytes).
    Refused,
}

/// The bytes of every token id the tokenizer knows: added tokens as `added` says,
/// others undo the byte-level alphabet (each byte is written as one printable character).
pub(crate) fn token_bytes(tokenizer: &Tokenizer, added: AddedTokens) -> Vec<Vec<u8>> {
    let to_byte = byte_level_decoder();
    let added_tokens = tokenizer.get_added_tokens_decoder();
    (0..tokenizer.get_vocab_size(true) as u32)
        .map(|id| {
            if let Some(token) = added_tokens.get(&id) {
                return match added {
                    AddedTokens::AsText => token.content.as_bytes().to_vec(),
                    AddedTokens::Refused => Vec::new(),
                };
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
    fn the_best_allowed_token_is_the_likeliest_the_grammar_accepts() {
        let logits: Vec<f32> = (0..200).map(|i| (i % 97) as f32).collect();
        // 96 and 193 score highest; an odd rule refuses 193 and every id above 100.
        assert_eq!(best_allowed(&logits, |id| id <= 100), Some(96));
        // Beyond the first 64 candidates the rest are searched in order too.
        assert_eq!(best_allowed(&logits, |id| id == 3 || id == 5), Some(5));
        assert_eq!(best_allowed(&logits, |_| false), None);
        assert_eq!(best_allowed(&[], |_| true), None);
    }

    #[test]
    fn the_byte_table_covers_every_byte_once() {
        let map = byte_level_decoder();
        assert_eq!(map.len(), 256);
        assert_eq!(map[&'Ġ'], b' ');
        assert_eq!(map[&'Ċ'], b'\n');
        assert_eq!(map[&'a'], b'a');
    }

    fn frame(vars: &[(&str, &str)]) -> State {
        State {
            event: replayground_shared::StopKind::Line,
            line: Some(2),
            function: Some("f".into()),
            depth: Some(1),
            locals: Some(replayground_shared::Vars(
                vars.iter().map(|(n, r)| ((*n).to_owned(), (*r).to_owned())).collect(),
            )),
            globals: None,
            value: None,
        }
    }

    #[test]
    fn unchanged_values_are_refused_only_where_they_cannot_resolve() {
        let previous = frame(&[("x", "1")]);
        let guard = UnchangedGuard::new(Some(&previous));
        let head = br#"<|line|>3 1 f <|vars|>{"x":"#;
        assert!(!guard.breaks(head, br#"".."#), "x is in the previous state");
        let head = br#"<|line|>3 1 f <|vars|>{"x":"..","y":"#;
        assert!(guard.breaks(head, br#"".."#), "y is not");
        assert!(!guard.breaks(head, br#""0.5""#), "a value with a dot is fine");
        let other_frame = br#"<|call|>1 2 g <|vars|>{"x":"#;
        assert!(guard.breaks(other_frame, br#"".."#), "another frame resolves nothing");
        assert!(UnchangedGuard::new(None).breaks(br#"<|line|>1 0 <module> <|vars|>{"a":"#, b"\"..\""));
    }

    #[test]
    fn candidates_are_consistent_only_when_they_equal_the_real_state() {
        let real = frame(&[("x", "1")]);
        let mut candidates = vec![
            Candidate::from_prediction(
                Prediction {
                    text: String::new(),
                    state: Ok(real.clone()),
                    tokens: 1,
                    bounds_dropped: false,
                },
                0,
            ),
            Candidate::from_prediction(
                Prediction {
                    text: String::new(),
                    state: Ok(frame(&[("x", "2")])),
                    tokens: 1,
                    bounds_dropped: false,
                },
                1,
            ),
            Candidate::from_prediction(
                Prediction {
                    text: String::new(),
                    state: Err("cut".into()),
                    tokens: 1,
                    bounds_dropped: false,
                },
                2,
            ),
        ];
        mark_consistent(&mut candidates, &real);
        let marks: Vec<_> = candidates.iter().map(|c| c.consistent).collect();
        assert_eq!(marks, [Some(true), Some(false), Some(false)]);
        assert_eq!(candidates[2].error.as_deref(), Some("cut"));
    }
    /// A model over single-byte tokens that always prefers the next byte of `target`.
    fn spell(target: &[u8], jump_forward: bool) -> (Prediction, Vec<usize>) {
        let token_bytes: Vec<Vec<u8>> = (0..=u8::MAX).map(|b| vec![b]).collect();
        let logits_for = |at: usize| {
            let mut logits = vec![0.0f32; 256];
            if let Some(&b) = target.get(at) {
                logits[b as usize] = 10.0;
            }
            logits
        };
        let mut at = 0;
        let mut reads = Vec::new();
        let encode = |text: &str| Ok(text.bytes().map(u32::from).collect::<Vec<u32>>());
        let sampling = Sampling {
            jump_forward,
            ..Sampling::default()
        };
        let prediction = decode_state_line(
            logits_for(0),
            &mut |tokens| {
                reads.push(tokens.len());
                at += tokens.len();
                Ok(logits_for(at))
            },
            Some(&encode),
            &token_bytes,
            &Guide::unbounded(None),
            &sampling,
            200,
            &mut |_| {},
        )
        .unwrap();
        (prediction, reads)
    }

    #[test]
    fn jumping_forward_reads_the_forced_text_at_once_and_writes_the_same_line() {
        let target = br#"<|line|>3 0 <module> <|vars|>{"x":"1","y":"2"}"#;
        let mut line = target.to_vec();
        line.push(b'\n');
        let (stepped, one_by_one) = spell(&line, false);
        let (jumped, reads) = spell(&line, true);
        assert_eq!(stepped.text, String::from_utf8(line.clone()).unwrap());
        assert_eq!(jumped.text, stepped.text);
        assert_eq!(jumped.state, stepped.state);
        assert_eq!(jumped.tokens, stepped.tokens, "forced tokens count against the budget");
        assert!(one_by_one.iter().all(|&n| n == 1));
        // `|>` after `<|line`, ` <|vars|>{` after the function's space, and so on.
        assert!(reads.len() < one_by_one.len(), "{reads:?}");
        assert!(
            reads.iter().any(|&n| n >= 8),
            "the vars marker is read at once: {reads:?}"
        );
    }
}
