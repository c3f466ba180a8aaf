//! The runtime against llama.cpp on the real Qwen2.5-Coder-0.5B file: token ids, greedy
//! generation, the chat template, streaming, sampling and cancellation.
//!
//! The fixtures were written by `tools/llm_oracle.py` (llama-cpp-python reading the same
//! file). The model itself is installed by `cargo xtask setup`; without it these tests fail.

use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use replayground_llm::catalogue::{self, QWEN_CODER_0_5B};
use replayground_llm::stream::TokenStream;
use replayground_llm::{ChatMessage, GenerationParams, LocalLlm, Role, StopReason, chat_prompt};
use serde::Deserialize;

fn model() -> &'static LocalLlm {
    static MODEL: OnceLock<LocalLlm> = OnceLock::new();
    MODEL.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let path = catalogue::locate(&QWEN_CODER_0_5B, &root).unwrap_or_else(|| {
            panic!(
                "{} ({}) is not installed in {}/ or the cache {:?}: run `cargo xtask setup`",
                QWEN_CODER_0_5B.name,
                QWEN_CODER_0_5B.file_name,
                catalogue::TOOLS_MODELS_DIR,
                catalogue::cache_dir()
            )
        });
        LocalLlm::load(&path, &replayground_llm::default_device()).unwrap()
    })
}

fn fixture<T: for<'de> Deserialize<'de>>(name: &str) -> T {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// How far two readings of the same tokens may differ when they ran different kernels: a
/// pass over several tokens runs other matrix kernels than one over a single token, and the
/// 4-bit model quantizes each layer's activations to 8 bits, so a rounding difference can
/// flip one quantization step and move a logit by tenths (0.30 on an AMD EPYC without
/// AVX-512, 2026-12-05, where other machines stayed under 0.01). A wrong cache or position
/// moves them by units and picks other tokens.
const KERNEL_ROUNDING: f32 = 1.0;

/// Asserts that two rows of logits pick the same token and differ by less than `tolerance`.
fn assert_close(a: &[f32], b: &[f32], tolerance: f32, what: &str) {
    let argmax = |v: &[f32]| v.iter().enumerate().max_by(|x, y| x.1.total_cmp(y.1)).unwrap().0;
    let worst = a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
    assert!(worst < tolerance, "{what} differ by {worst}");
    assert_eq!(argmax(a), argmax(b), "{what} pick different tokens");
}

#[derive(Deserialize)]
struct TokenizerFixture {
    model_sha256: String,
    cases: Vec<TokenizerCase>,
}

#[derive(Deserialize)]
struct TokenizerCase {
    text: String,
    ids: Vec<u32>,
    /// llama.cpp's ids for the NFC form, when that differs: Qwen's tokenizer normalizes to
    /// NFC (its tokenizer.json; candle's GGUF tokenizer too), llama.cpp does not.
    nfc_ids: Option<Vec<u32>>,
}

#[derive(Deserialize)]
struct GenerationFixture {
    model_sha256: String,
    greedy: Vec<GreedyRun>,
}

#[derive(Deserialize)]
struct GreedyRun {
    prompt: String,
    prompt_ids: Vec<u32>,
    generated: Vec<u32>,
}

#[derive(Deserialize)]
struct ChatFixture {
    chats: Vec<RenderedChat>,
}

#[derive(Deserialize)]
struct RenderedChat {
    messages: Vec<FixtureMessage>,
    prompt: String,
}

#[derive(Deserialize)]
struct FixtureMessage {
    role: String,
    content: String,
}

#[test]
fn token_ids_equal_llama_cpps_on_every_fixture_string() {
    let fixture: TokenizerFixture = fixture("tokenizer.json");
    assert_eq!(
        fixture.model_sha256, QWEN_CODER_0_5B.sha256,
        "the fixture was made from another file"
    );
    assert!(fixture.cases.len() >= 50, "only {} strings", fixture.cases.len());
    let model = model();
    let wrong: Vec<String> = fixture
        .cases
        .iter()
        .filter_map(|case| {
            let ids = model.encode(&case.text).unwrap();
            let expected = case.nfc_ids.as_ref().unwrap_or(&case.ids);
            (&ids != expected).then(|| format!("{:?}: ours {ids:?}, llama.cpp {expected:?}", case.text))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} differ:\n{}",
        wrong.len(),
        fixture.cases.len(),
        wrong.join("\n")
    );
}

#[test]
fn special_tokens_are_single_ids_and_text_round_trips() {
    let model = model();
    for special in ["<|im_start|>", "<|im_end|>", "<|endoftext|>"] {
        assert_eq!(model.encode(special).unwrap().len(), 1, "{special}");
    }
    let text = "def f(x):\n\treturn x ** 2  # 平方 😀\n";
    let ids = model.encode(text).unwrap();
    assert_eq!(model.tokenizer().decode(&ids, false).unwrap(), text);
}

#[test]
fn greedy_generation_equals_llama_cpps_first_32_tokens() {
    let fixture: GenerationFixture = fixture("generation.json");
    assert_eq!(
        fixture.model_sha256, QWEN_CODER_0_5B.sha256,
        "the fixture was made from another file"
    );
    let model = model();
    for run in &fixture.greedy {
        assert_eq!(
            model.encode(&run.prompt).unwrap(),
            run.prompt_ids,
            "prompt {:?}",
            run.prompt
        );
        let params = GenerationParams::greedy(run.generated.len());
        let ours = model
            .generate_ids(&run.prompt_ids, &params, &AtomicBool::new(false), &mut |_| {})
            .unwrap();
        // llama.cpp's list ends with the stop token when the model stopped; ours does not.
        let expected: Vec<u32> = run.generated.iter().copied().take(ours.tokens.len().max(1)).collect();
        assert_eq!(
            ours.tokens,
            expected,
            "prompt {:?}: ours {:?}, llama.cpp {:?}",
            run.prompt,
            model.tokenizer().decode(&ours.tokens, false).unwrap(),
            model.tokenizer().decode(&run.generated, false).unwrap()
        );
        if ours.stop != StopReason::EndOfTurn {
            assert_eq!(ours.tokens.len(), run.generated.len());
        }
    }
}

#[test]
fn the_chat_template_renders_as_the_files_jinja_does() {
    let fixture: ChatFixture = fixture("chat_template.json");
    for chat in fixture.chats {
        let messages: Vec<ChatMessage> = chat
            .messages
            .iter()
            .map(|m| {
                let role = match m.role.as_str() {
                    "system" => Role::System,
                    "user" => Role::User,
                    _ => Role::Assistant,
                };
                ChatMessage::new(role, m.content.clone())
            })
            .collect();
        assert_eq!(chat_prompt(&messages), chat.prompt);
    }
}

#[test]
fn add_is_completed_with_a_plus() {
    let model = model();
    let chat = [ChatMessage::new(
        Role::User,
        "Complete this Python function. Reply with code only.\n\ndef add(a, b):",
    )];
    let mut streamed = String::new();
    let answer = model
        .chat(
            &chat,
            &GenerationParams::greedy(24),
            &AtomicBool::new(false),
            &mut |piece| {
                streamed.push_str(piece);
            },
        )
        .unwrap();
    assert!(answer.text.contains("return a + b"), "{:?}", answer.text);
    assert_eq!(streamed, answer.text);
}

#[test]
fn streamed_pieces_are_whole_characters() {
    let model = model();
    let text = "emoji 😀🎉👍🏽 日本語 naïve";
    let ids = model.encode(text).unwrap();
    assert!(ids.len() > 8, "{ids:?}");
    let mut stream = TokenStream::new(model.tokenizer());
    let mut pieces = Vec::new();
    for id in ids {
        pieces.extend(stream.push(id).unwrap());
    }
    pieces.extend(stream.finish().unwrap());
    assert!(pieces.iter().all(|p| !p.contains('\u{fffd}')), "{pieces:?}");
    assert_eq!(pieces.concat(), text);
}

#[test]
fn a_seed_fixes_a_sampled_answer() {
    let model = model();
    let params = GenerationParams {
        max_tokens: 8,
        temperature: 0.9,
        top_p: 0.9,
        seed: 7,
        ..GenerationParams::greedy(8)
    };
    let prompt = chat_prompt(&[ChatMessage::new(Role::User, "Name a Python web framework.")]);
    let never = AtomicBool::new(false);
    let first = model.generate(&prompt, &params, &never, &mut |_| {}).unwrap();
    let again = model.generate(&prompt, &params, &never, &mut |_| {}).unwrap();
    assert_eq!(first.tokens, again.tokens);
    assert!(!first.tokens.is_empty());
    assert!(first.tokens.len() <= 8);
}

#[test]
fn cancelling_stops_after_the_current_token() {
    let model = model();
    let cancel = AtomicBool::new(false);
    let mut pieces = 0;
    let prompt = chat_prompt(&[ChatMessage::new(
        Role::User,
        "Count from 1 to 100, one number per line.",
    )]);
    let generation = model
        .generate(&prompt, &GenerationParams::greedy(64), &cancel, &mut |_| {
            pieces += 1;
            if pieces == 2 {
                cancel.store(true, Ordering::Relaxed);
            }
        })
        .unwrap();
    assert_eq!(generation.stop, StopReason::Cancelled);
    assert!(generation.tokens.len() <= 3, "{:?}", generation.tokens);
}

#[test]
fn the_model_names_itself_from_its_metadata() {
    let model = model();
    assert!(model.name().contains("Qwen2.5 Coder 0.5B"), "{}", model.name());
    assert_eq!(model.model().hparams.block_count, 24);
    assert_eq!(model.model().hparams.head_count_kv, 2);
}

#[test]
fn a_cloned_cache_answers_as_if_the_prompt_were_read_again() {
    let llm = model();
    let model = llm.model();
    let ids = llm.encode("def area(w, h):\n    return").unwrap();
    let logits = |cache: &mut replayground_llm::model::KvCache, ids: &[u32]| {
        model
            .forward(ids, cache)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()
    };
    let mut cache = model.new_cache();
    logits(&mut cache, &ids[..ids.len() - 1]);
    let checkpoint = cache.clone();
    // The original goes on past the checkpoint with other text ...
    logits(&mut cache, &llm.encode(" a very different continuation").unwrap());
    // ... and the checkpoint still reads as a fresh cache that saw only the prompt.
    let mut resumed = checkpoint;
    let from_checkpoint = logits(&mut resumed, &ids[ids.len() - 1..]);
    let mut fresh = model.new_cache();
    logits(&mut fresh, &ids[..ids.len() - 1]);
    let from_scratch = logits(&mut fresh, &ids[ids.len() - 1..]);
    assert_eq!(resumed.len(), ids.len());
    assert_eq!(from_checkpoint, from_scratch);
}

#[test]
fn a_draft_read_in_one_pass_gives_each_position_its_logits_and_a_rewind_forgets_it() {
    let llm = model();
    let model = llm.model();
    let prompt = llm.encode("def area(w, h):\n").unwrap();
    let draft = llm.encode("    return w * h").unwrap();
    // One token at a time: the reference.
    let mut stepped = model.new_cache();
    model.forward(&prompt, &mut stepped).unwrap();
    let one_by_one: Vec<Vec<f32>> = draft
        .iter()
        .map(|&id| model.forward(&[id], &mut stepped).unwrap().to_vec1::<f32>().unwrap())
        .collect();
    // The last prompt token and the draft in one pass, one row per drafted position.
    let mut cache = model.new_cache();
    model.forward(&prompt[..prompt.len() - 1], &mut cache).unwrap();
    let mut read = vec![prompt[prompt.len() - 1]];
    read.extend(&draft);
    let rows = model
        .forward_tail(&read, draft.len(), &mut cache)
        .unwrap()
        .to_vec2::<f32>()
        .unwrap();
    assert_eq!(rows.len(), draft.len());
    // Row i holds the logits after the draft's token i, to the kernels' rounding.
    for (row, reference) in rows.iter().zip(&one_by_one) {
        assert_close(row, reference, KERNEL_ROUNDING, "batched and single-token logits");
    }
    // Forgetting all but the draft's first token answers as if only it had been read.
    cache.rewind(prompt.len() + 1);
    let after_rewind = model
        .forward(&[draft[1]], &mut cache)
        .unwrap()
        .to_vec1::<f32>()
        .unwrap();
    assert_eq!(cache.len(), prompt.len() + 2);
    assert_close(
        &after_rewind,
        &one_by_one[1],
        KERNEL_ROUNDING,
        "a rewound cache's logits",
    );
}

#[test]
fn a_repeat_penalty_breaks_a_loop_that_greedy_decoding_falls_into() {
    let model = model();
    // Asked to repeat a line, greedy decoding repeats it; a strong penalty on the last
    // tokens makes every one of the next tokens new within the window.
    let prompt = chat_prompt(&[ChatMessage::new(
        Role::User,
        "Write the line `x = x + 1` ten times, one per line, nothing else.",
    )]);
    let never = AtomicBool::new(false);
    let greedy = GenerationParams::greedy(24);
    let looped = model.generate(&prompt, &greedy, &never, &mut |_| {}).unwrap();
    let distinct = |ids: &[u32]| ids.iter().collect::<std::collections::HashSet<_>>().len();
    assert!(distinct(&looped.tokens) < looped.tokens.len() / 2, "{:?}", looped.text);
    let penalised = GenerationParams {
        repeat_penalty: 1e6,
        ..greedy
    };
    let fresh = model.generate(&prompt, &penalised, &never, &mut |_| {}).unwrap();
    assert_eq!(distinct(&fresh.tokens), fresh.tokens.len(), "{:?}", fresh.text);
}

#[test]
fn a_prompt_that_starts_like_a_kept_one_reads_only_the_rest_and_answers_the_same() {
    let llm = model();
    let model = llm.model();
    let never = AtomicBool::new(false);
    let logits_of = |p: &replayground_llm::Prefilled| p.logits.to_vec1::<f32>().unwrap();
    let fresh = |ids: &[u32]| {
        let mut cache = model.new_cache();
        model.forward(ids, &mut cache).unwrap().to_vec1::<f32>().unwrap()
    };
    // Reading only a prompt's new end runs other kernels than reading it whole.
    let close = |a: &[f32], b: &[f32]| assert_close(a, b, KERNEL_ROUNDING, "logits");
    let shared = "You are a Python debugger. The program below computes the area of rectangles.\n\
                  def area(w, h):\n    return w * h\n\nprint(area(2, 3))\n";
    let first = llm.encode(&format!("{shared}Question: what does it print?")).unwrap();
    let second = llm
        .encode(&format!("{shared}Question: which function does it call?"))
        .unwrap();
    let start = first.iter().zip(&second).take_while(|(a, b)| a == b).count();
    assert!(start >= 16, "the prompts share {start} tokens");

    let mut prompts = replayground_llm::PromptCache::new(2);
    let a = prompts.read(model, &first, &never).unwrap().unwrap();
    assert_eq!(a.reused, 0);
    let a_logits = logits_of(&a);
    close(&a_logits, &fresh(&first));

    let b = prompts.read(model, &second, &never).unwrap().unwrap();
    assert_eq!(b.reused, start, "only the differing end is read");
    assert_eq!(b.cache.len(), second.len());
    close(&logits_of(&b), &fresh(&second));

    // The first prompt is still kept, unchanged by the second's reading from a cut copy.
    let again = prompts.read(model, &first, &never).unwrap().unwrap();
    assert_eq!(again.reused, first.len());
    assert_eq!(logits_of(&again), a_logits);

    // A prompt that extends a kept one reads only its new tokens and takes its place.
    let longer = llm
        .encode(&format!("{shared}Question: what does it print? Answer in one word."))
        .unwrap();
    let c = prompts.read(model, &longer, &never).unwrap().unwrap();
    assert_eq!(c.reused, first.len());
    close(&logits_of(&c), &fresh(&longer));
    assert_eq!(prompts.len(), 2);
}

#[test]
fn a_chat_asked_again_with_another_question_reuses_the_shared_start() {
    let llm = model();
    let never = AtomicBool::new(false);
    let mut prompts = replayground_llm::PromptCache::new(4);
    let mut ask = |question: &str| {
        let prompt = chat_prompt(&[
            ChatMessage::system("You answer questions about Python code in one short sentence."),
            ChatMessage::user(format!("def add(a, b):\n    return a + b\n\n{question}")),
        ]);
        let ids = llm.encode(&prompt).unwrap();
        llm.generate_with(&mut prompts, &ids, &GenerationParams::greedy(12), &never, &mut |_| {})
            .unwrap()
    };
    let first = ask("What does `add` return?");
    assert_eq!(first.reused_prompt_tokens, 0);
    let again = ask("What does `add` return?");
    assert_eq!(again.reused_prompt_tokens, again.prompt_tokens);
    assert_eq!(
        again.tokens, first.tokens,
        "the same prompt gives the same greedy answer"
    );
    let other = ask("How many parameters does `add` take?");
    assert!(
        other.reused_prompt_tokens >= 20 && other.reused_prompt_tokens < other.prompt_tokens,
        "{} of {} prompt tokens reused",
        other.reused_prompt_tokens,
        other.prompt_tokens
    );
}
