//! The constrained decoding loop every engine shares: one state line, token by token,
//! under the trace language's grammar and the code's and the action's bounds, with the
//! text they force read at once (jump forward) where the engine can tokenize it, and,
//! for greedy decoding by an engine that can check several tokens in one pass, drafts
//! copied from the prompt (prompt lookup) checked a handful at a time.

use std::collections::VecDeque;

use candle_core::{Device, Tensor};
use candle_transformers::generation::{LogitsProcessor, Sampling as CandleSampling};
use replayground_shared::State;
use replayground_shared::trace_lang::{self, StateLineMachine, parse_state};

use super::bounds::{Bounds, Guide, Scan, unchanged_names};

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
    /// Whether greedy decoding drafts the tokens that followed the line's last few
    /// tokens where they occur earlier in the prompt, and reads the draft with the chosen
    /// token in one pass: each drafted token the model then picks costs no pass of its
    /// own, and the answer is the one decoding token by token writes (off only to measure
    /// what it saves).
    pub speculate: bool,
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
            speculate: true,
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

/// Turns text into the engine's token ids, for [`decode_state_line`]'s jump forward.
pub(crate) type Encode<'a> = &'a dyn Fn(&str) -> anyhow::Result<Vec<u32>>;

/// The model as [`decode_state_line`] reads it, after the prompt.
pub(crate) trait Reader {
    /// Reads `tokens` after everything read so far and returns the logits after each of
    /// the last `tail` of them (`1 <= tail <= tokens.len()`).
    fn read(&mut self, tokens: &[u32], tail: usize) -> anyhow::Result<Vec<Vec<f32>>>;

    /// Forgets the last `n` tokens read: a draft the model did not pick.
    fn forget(&mut self, n: usize) -> anyhow::Result<()>;

    /// The prompt's tokens, where drafts are looked up; empty for an engine that cannot
    /// check a draft (it is then only asked for one tail position and never to forget).
    fn prompt(&self) -> &[u32];
}

/// Drafts are copied after the latest earlier occurrence of the line's last
/// `MAX_NGRAM`, else fewer, down to `MIN_NGRAM` tokens.
const MAX_NGRAM: usize = 4;
const MIN_NGRAM: usize = 2;
/// The most tokens drafted at once: a pass over a few more tokens costs little more
/// than over one on a CPU, a long draft that is refused early wastes its reading.
const MAX_DRAFT: usize = 6;

/// Decodes one state line under the trace language's grammar. `first` holds the logits
/// after the prompt; `reader` reads the chosen tokens (one, or with `encode` the forced
/// text after it too, and a draft when it can check one).
/// Tokens whose bytes would leave the grammar (or are empty: special tokens an engine
/// refuses) are never chosen; greedy decoding takes the best allowed token, checking the
/// likeliest first, so a large vocabulary costs little. With `encode` (and
/// `sampling.jump_forward`), the bytes that the grammar and bounds then leave no choice
/// about are tokenized and read with the chosen token in one forward pass: a CPU reads
/// a token of a prompt several times faster than it decodes one.
#[allow(clippy::too_many_arguments)]
pub(crate) fn decode_state_line(
    first: Vec<f32>,
    reader: &mut dyn Reader,
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
    let mut scan = if sampling.bounded {
        guide.scan()
    } else {
        unbounded.scan()
    };
    let unchanged = UnchangedGuard::new(previous);
    let mut bytes = Vec::new();
    let mut produced = 0;
    let mut logits = first;
    // Bounds that leave no token at all (a case they do not foresee) are dropped for the
    // rest of the answer rather than cutting it: the grammar alone still holds.
    let mut bounded = true;
    // Drafting needs greedy picks (a sampled token is not the one the draft is checked
    // against) and an engine that reads a draft's logits in one pass.
    let drafting = sampling.speculate && processor.is_none() && !reader.prompt().is_empty();
    // The prompt and the line so far, where drafts are looked up.
    let mut history = if drafting { reader.prompt().to_vec() } else { Vec::new() };
    // Drafted tokens read but not yet picked, each with the logits after it.
    let mut draft: VecDeque<(u32, Vec<f32>)> = VecDeque::new();
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
        history.push(token);
        // The tokens to read now; a drafted token the model picked was read already.
        let mut read = Vec::new();
        let mut after_draft = None;
        match draft.pop_front() {
            Some((drafted, after)) if drafted == token => after_draft = Some(after),
            Some(_) => {
                reader.forget(draft.len() + 1)?;
                draft.clear();
                read.push(token);
            }
            None => read.push(token),
        }
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
                // The draft after the token did not foresee the forced text.
                reader.forget(draft.len())?;
                draft.clear();
                history.extend_from_slice(&ids);
                read.extend(ids);
            }
        }
        if machine.is_done() || produced >= budget {
            break;
        }
        let proposal = if drafting && draft.is_empty() {
            line_draft(&history, budget - produced, token_bytes)
        } else {
            Vec::new()
        };
        if read.is_empty() && proposal.is_empty() {
            logits = after_draft.expect("a picked draft token was read with its logits");
            continue;
        }
        let tail = proposal.len() + usize::from(!read.is_empty());
        read.extend_from_slice(&proposal);
        let mut after = reader.read(&read, tail)?.into_iter();
        logits = match after_draft {
            Some(logits) if tail == proposal.len() => logits,
            _ => after.next().expect("one row per tail position"),
        };
        draft.extend(proposal.into_iter().zip(after));
    }
    // What the reader holds is the line as written, without drafts it did not take.
    reader.forget(draft.len())?;
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

/// A draft for the line that ends `history`: the tokens after the latest earlier
/// occurrence of its last few tokens, up to `max`, [`MAX_DRAFT`] and the end of a line.
fn line_draft(history: &[u32], max: usize, token_bytes: &[Vec<u8>]) -> Vec<u32> {
    let max = max.min(MAX_DRAFT);
    for n in (MIN_NGRAM..=MAX_NGRAM).rev() {
        let Some(suffix_start) = history.len().checked_sub(n) else {
            continue;
        };
        let suffix = &history[suffix_start..];
        let Some(start) = (0..suffix_start).rev().find(|&i| &history[i..i + n] == suffix) else {
            continue;
        };
        let mut draft = Vec::new();
        for &id in history[start + n..].iter().take(max) {
            draft.push(id);
            if token_bytes.get(id as usize).is_some_and(|b| b.contains(&b'\n')) {
                break;
            }
        }
        return draft;
    }
    Vec::new()
}

/// The whole answer the grammar and `guide`'s bounds leave no choice about, when they
/// force one: what the bounds answer without any model (the *bounds alone* baseline).
pub fn forced_answer(guide: &Guide<'_>) -> Option<State> {
    let mut machine = StateLineMachine::new();
    let unchanged = UnchangedGuard::new(guide.previous);
    let forced = forced_bytes(&machine, Some(&guide.scan()), &unchanged, &[]);
    if !machine.feed(&forced) || !machine.is_done() {
        return None;
    }
    parse_state(String::from_utf8_lossy(&forced).trim_end_matches('\n'), guide.previous).ok()
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
/// the line (without this, the 0.5B got about half as many variables right).
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
pub(crate) fn best_allowed(logits: &[f32], allowed: impl Fn(usize) -> bool) -> Option<u32> {
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
pub(crate) struct UnchangedGuard<'a> {
    previous: Option<&'a State>,
}

impl<'a> UnchangedGuard<'a> {
    pub(crate) fn new(previous: Option<&'a State>) -> Self {
        Self { previous }
    }

    /// Whether `so_far` followed by `piece` writes an unresolvable `..`.
    pub(crate) fn breaks(&self, so_far: &[u8], piece: &[u8]) -> bool {
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
        let known: Vec<&str> = match depth.map(str::parse::<u32>).transpose() {
            Ok(depth) => unchanged_names(self.previous, function, depth).collect(),
            Err(_) => Vec::new(),
        };
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A model over single-byte tokens that always prefers the next byte of `target`,
    /// after `prompt` (single bytes too; empty: it cannot check drafts).
    struct Spelling<'a> {
        target: &'a [u8],
        /// Answer tokens read so far.
        at: usize,
        prompt: Vec<u32>,
        /// How many tokens each pass read.
        reads: Vec<usize>,
        forgotten: usize,
    }

    impl Spelling<'_> {
        fn logits(&self, at: usize) -> Vec<f32> {
            let mut logits = vec![0.0f32; 256];
            if let Some(&b) = self.target.get(at) {
                logits[b as usize] = 10.0;
            }
            logits
        }
    }

    impl Reader for Spelling<'_> {
        fn read(&mut self, tokens: &[u32], tail: usize) -> anyhow::Result<Vec<Vec<f32>>> {
            assert!((1..=tokens.len()).contains(&tail));
            self.reads.push(tokens.len());
            let rows = (tokens.len() - tail..tokens.len())
                .map(|j| self.logits(self.at + j + 1))
                .collect();
            self.at += tokens.len();
            Ok(rows)
        }

        fn forget(&mut self, n: usize) -> anyhow::Result<()> {
            self.at -= n;
            self.forgotten += n;
            Ok(())
        }

        fn prompt(&self) -> &[u32] {
            &self.prompt
        }
    }

    fn spell_after<'a>(target: &'a [u8], prompt: &[u8], sampling: Sampling) -> (Prediction, Spelling<'a>) {
        let token_bytes: Vec<Vec<u8>> = (0..=u8::MAX).map(|b| vec![b]).collect();
        let encode = |text: &str| Ok(text.bytes().map(u32::from).collect::<Vec<u32>>());
        let mut model = Spelling {
            target,
            at: 0,
            prompt: prompt.iter().map(|&b| u32::from(b)).collect(),
            reads: Vec::new(),
            forgotten: 0,
        };
        let first = model.logits(0);
        let prediction = decode_state_line(
            first,
            &mut model,
            Some(&encode),
            &token_bytes,
            &Guide::unbounded(None),
            &sampling,
            200,
            &mut |_| {},
        )
        .unwrap();
        (prediction, model)
    }

    fn spell(target: &[u8], jump_forward: bool) -> (Prediction, Vec<usize>) {
        let sampling = Sampling {
            jump_forward,
            ..Sampling::default()
        };
        let (prediction, model) = spell_after(target, b"", sampling);
        (prediction, model.reads)
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

    #[test]
    fn drafts_from_the_prompt_save_passes_and_never_change_the_line() {
        let line = b"<|line|>4 0 <module> <|vars|>{\"xs\":\"[10, 20, 30, 40]\",\"n\":\"4\"}\n";
        let plain = Sampling {
            speculate: false,
            ..Sampling::default()
        };
        let (alone, model) = spell_after(line, b"", Sampling::default());
        let alone_passes = model.reads.len();
        assert_eq!(model.forgotten, 0, "no prompt, no draft");
        for prompt in [
            // The same list earlier: the draft is right.
            &b"<|line|>3 0 <module> <|vars|>{\"xs\":\"[10, 20, 30, 40]\"}\n<|step_over|>\n"[..],
            // A list that parts from it: the draft is refused where it does.
            &b"<|line|>3 0 <module> <|vars|>{\"xs\":\"[10, 20, 31, 41]\"}\n<|step_over|>\n"[..],
        ] {
            let (drafted, model) = spell_after(line, prompt, Sampling::default());
            let (stepped, stepped_model) = spell_after(line, prompt, plain);
            // The model spells the byte after as many as it has read, so a refused draft
            // left unforgotten would shift every later byte.
            assert_eq!(drafted, stepped, "drafts only decide how the line is read");
            assert_eq!(drafted.text, String::from_utf8(line.to_vec()).unwrap());
            assert_eq!(
                stepped_model.reads.len(),
                alone_passes,
                "without drafts the prompt is only context"
            );
            assert!(
                model.reads.len() < alone_passes,
                "{:?} against {alone_passes} passes",
                model.reads
            );
        }
        let (_, refused) = spell_after(line, b"<|vars|>{\"xs\":\"[10, 20, 31, 41]\"}\n", Sampling::default());
        assert!(refused.forgotten > 0, "the parting draft was forgotten");
        assert_eq!(alone.text, String::from_utf8(line.to_vec()).unwrap());
    }

    #[test]
    fn a_draft_copies_what_followed_the_latest_earlier_occurrence_up_to_the_line_end() {
        let bytes: Vec<Vec<u8>> = (0..=u8::MAX).map(|b| vec![b]).collect();
        let ids = |text: &[u8]| text.iter().map(|&b| u32::from(b)).collect::<Vec<u32>>();
        // `ab` occurs twice before the end: the latest one wins.
        assert_eq!(line_draft(&ids(b"abX ab\nY ab"), 10, &bytes), ids(b"\n"));
        assert_eq!(line_draft(&ids(b"abXY abZ ab"), 10, &bytes), ids(b"Z ab"));
        assert_eq!(line_draft(&ids(b"abcdefgh ab"), 3, &bytes), ids(b"cde"));
        assert!(
            line_draft(&ids(b"abcd xy"), 10, &bytes).is_empty(),
            "no earlier occurrence"
        );
    }
}
