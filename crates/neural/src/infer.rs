//! Inference for the neural debugger: KV-cached generation of the next state line,
//! constrained to the trace language.
//!
//! Any Qwen2-family directory (`config.json`, `tokenizer.json`, `*.safetensors`)
//! loads through candle-transformers' `qwen2`: this project's small models and
//! larger fine-tuned checkpoints alike. At every decoding step the tokens that would
//! leave the grammar of a state line (`StateLineMachine`) are masked out, so every
//! answer parses. A `..` (unchanged) value is only allowed for a variable that the
//! previous state of the same frame has, so every finished line also resolves; a line
//! cut by the token budget is reported as a parse failure. What the code and the action
//! allow (`Bounds`: lines, frames, names, depths) masks more tokens still. The loop
//! itself, shared by every engine, is [`decode_state_line`] in `decode.rs`.
//!
//! Inverse mode samples k candidate previous states ([`NeuralDebugger::sample_previous`])
//! and [`mark_consistent`] checks each against the real execution.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_transformers::models::qwen2::ModelForCausalLM;
use replayground_shared::trace_lang::{self, Trajectory, normalize_state};
use replayground_shared::{Action, State};
use tokenizers::Tokenizer;

pub use super::bounds::Guide;
pub use super::decode::{Prediction, Sampling};
pub(crate) use super::decode::{Reader, decode_state_line};
use super::model::{Qwen2Checkpoint, Qwen2Config};

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
        let (first, budget, position) = self.read_prompt(prompt, guide.previous, sampling)?;
        let mut reader = OneByOne {
            model: &mut self.model,
            device: &self.device,
            position,
        };
        decode_state_line(
            first,
            &mut reader,
            None,
            &self.token_bytes,
            guide,
            sampling,
            budget,
            on_text,
        )
    }
}

/// Reads the from-scratch model's answer one token at a time: its cache cannot forget,
/// so it checks no drafts.
struct OneByOne<'a> {
    model: &'a mut ModelForCausalLM,
    device: &'a Device,
    position: usize,
}

impl Reader for OneByOne<'_> {
    fn read(&mut self, tokens: &[u32], tail: usize) -> anyhow::Result<Vec<Vec<f32>>> {
        let ([token], 1) = (tokens, tail) else {
            anyhow::bail!("the from-scratch model reads one token at a time")
        };
        let input = Tensor::new(&[*token], self.device)?.unsqueeze(0)?;
        let logits = forward_logits(self.model, &input, self.position)?;
        self.position += 1;
        Ok(vec![logits])
    }

    fn forget(&mut self, n: usize) -> anyhow::Result<()> {
        anyhow::ensure!(n == 0, "the from-scratch model's cache cannot forget tokens");
        Ok(())
    }

    fn prompt(&self) -> &[u32] {
        &[]
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

    /// Reads what every prompt starts with ([`PromptFrame::header`]) ahead of the first
    /// question, where the engine keeps it: a code LLM's instructions and worked
    /// examples take a CPU longer to read than ten answers. Nothing by default.
    fn warm_up(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    /// Reads `prompt` before anyone asks it, where the engine keeps what it read: a
    /// later prompt that starts the same way (the same program, more states) reads only
    /// the rest. A code LLM takes 4–7 s on these CPUs to read a program it has not seen,
    /// so the playground has it read when the program runs, not at the first step.
    /// Nothing by default.
    fn read_ahead(&mut self, _prompt: &str) -> anyhow::Result<()> {
        Ok(())
    }

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

    /// The state after `action` from the end of `prefix`, with `breakpoints` set besides
    /// a forward trajectory's own where the caller knows them: by default one
    /// prediction from [`Engine::prompt`] under the code's and the action's bounds; an
    /// engine may work towards it in several (see [`crate::stepwise`]).
    fn answer(
        &mut self,
        prefix: &Trajectory,
        action: Action,
        breakpoints: Option<&BTreeSet<u32>>,
        sampling: &Sampling,
        on_text: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Prediction> {
        let prompt = self.prompt(prefix, action, sampling)?;
        let guide = Guide::after_with_breakpoints(prefix, action, breakpoints);
        self.predict(&prompt, &guide, sampling, on_text)
    }

    /// Whether [`Engine::answer`] does more than predict once from [`Engine::prompt`],
    /// so that a caller holding a ready prompt must still ask it.
    fn answers_stepwise(&self) -> bool {
        false
    }

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
    use crate::decode::{UnchangedGuard, best_allowed};

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
}
