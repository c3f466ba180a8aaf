//! Browser benchmarks (headless Chromium), each reported as a ratio against a baseline
//! measured in the same run. Built only with the `browser-bench` feature, which
//! `cargo xtask bench-frontend` turns on; `cargo xtask test` never runs them.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::print_stdout)]

use std::collections::BTreeSet;
use std::sync::Arc;

use leptos::prelude::*;
use replayground_frontend::playground::debugger::DebuggerPanel;
use replayground_frontend::playground::editor::{lines_html, patch_lines};
use replayground_frontend::playground::examples::EXAMPLES;
use replayground_frontend::playground::session::Session;
use replayground_frontend::playground::syntax::{SyntaxDocument, single_edit};
use replayground_shared::test_util::TraceBuilder;
use replayground_shared::{EventKind, StateTree, Stop, Trace};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};
use web_sys::HtmlElement;

wasm_bindgen_test_configure!(run_in_browser);

fn now() -> f64 {
    window().performance().expect("performance").now()
}

/// Milliseconds per call of `f`, over `n` calls.
fn time(n: usize, mut f: impl FnMut(usize)) -> f64 {
    let start = now();
    for i in 0..n {
        f(i);
    }
    (now() - start) / n as f64
}

fn two_thousand_lines() -> String {
    let mut text = String::new();
    while text.lines().count() < 2000 {
        for example in EXAMPLES {
            text.push_str(example.code);
            text.push('\n');
        }
    }
    text.lines().take(2000).collect::<Vec<_>>().join("\n")
}

#[wasm_bindgen_test]
fn parse_and_highlight_a_2000_line_file() {
    let text = two_thousand_lines();
    let _ = SyntaxDocument::new(&text); // first parse: allocations, page faults
    let full = time(10, |_| {
        let doc = SyntaxDocument::new(&text);
        std::hint::black_box(doc.highlight_html());
    });
    let parse_only = time(10, |_| {
        std::hint::black_box(SyntaxDocument::new(&text));
    });
    let mut doc = SyntaxDocument::new(&text);
    let middle = text.len() / 2 - (text.len() / 2 - text[..text.len() / 2].rfind('\n').unwrap());
    let typed = format!("{}x{}", &text[..middle], &text[middle..]);
    // What the editor does per keystroke: re-parse, re-highlight the lines whose syntax
    // changed, bring the outline/errors/statement lines up to date.
    let keystroke = time(40, |i| {
        let changes = doc.edit(if i % 2 == 0 { &typed } else { &text });
        std::hint::black_box((changes, doc.analysis()));
    });
    // The same, with the highlighted <pre> patched and laid out, against rewriting it.
    let pre = document().create_element("pre").unwrap();
    pre.set_class_name("highlight");
    document().body().unwrap().append_child(&pre).unwrap();
    let full_dom = time(10, |_| {
        pre.set_inner_html(&lines_html(doc.line_html()));
        std::hint::black_box(pre.unchecked_ref::<HtmlElement>().offset_height());
    });
    let keystroke_dom = time(40, |i| {
        let changes = doc.edit(if i % 2 == 0 { &typed } else { &text }).unwrap();
        patch_lines(&pre, &changes, doc.line_html());
        std::hint::black_box(pre.unchecked_ref::<HtmlElement>().offset_height());
    });
    pre.remove();
    // The parse alone, as `edit` does it (what `update` cost before the incremental view).
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&tree_sitter_python::LANGUAGE.into()).unwrap();
    let mut tree = parser.parse(&text, None).unwrap();
    let mut current = text.clone();
    let reparse_only = time(40, |i| {
        let new_text = if i % 2 == 0 { &typed } else { &text };
        tree.edit(&single_edit(&current, new_text).unwrap());
        tree = parser.parse(new_text, Some(&tree)).unwrap();
        current.clone_from(new_text);
    });
    console_log!(
        "bench: 2,000-line file: warm full parse {parse_only:.2} ms; full parse + highlight {full:.2} ms; \
         one keystroke: incremental re-parse {reparse_only:.2} ms, re-parse + re-highlight + outline/errors {keystroke:.2} ms \
         (target < 5 ms) = {:.2}x of a full parse + highlight; in the DOM: keystroke with the <pre> patched and laid out \
         {keystroke_dom:.2} ms = {:.2}x of rewriting and laying out the whole <pre> ({full_dom:.2} ms)",
        keystroke / full,
        keystroke_dom / full_dom,
    );
}

/// A run of `calls` calls of `f` from a module loop: 4 events per call.
fn synthetic_trace(calls: usize) -> Trace {
    let mut b = TraceBuilder::new();
    let module = b.frame("<module>", None);
    b.event(EventKind::Call, module, 1, &[]);
    for i in 0..calls {
        let v = b.int(i as i64);
        let f = b.frame("f", Some(module));
        b.event(EventKind::Line, module, 3, &[("i", v)]);
        b.event(EventKind::Call, f, 1, &[("x", v)]);
        b.event(EventKind::Line, f, 2, &[("x", v)]);
        b.returning(f, 2, &[("x", v)], Some(v));
    }
    b.build()
}

async fn settle() {
    leptos::task::tick().await;
    leptos::task::tick().await;
}

/// Milliseconds per click of `test_id` (step + re-render), over `n` clicks.
async fn ms_per_click(session: Arc<Session>, ids: &[&str], n: usize) -> f64 {
    let div = document().create_element("div").unwrap();
    document().body().unwrap().append_child(&div).unwrap();
    let root: HtmlElement = div.unchecked_into();
    let breakpoints = RwSignal::new(BTreeSet::new());
    let _panel = leptos::mount::mount_to(root.clone(), move || view! { <DebuggerPanel session breakpoints /> });
    settle().await;
    let buttons: Vec<HtmlElement> = ids
        .iter()
        .map(|id| {
            root.query_selector(&format!("[data-testid=\"{id}\"]"))
                .unwrap()
                .unwrap()
                .unchecked_into()
        })
        .collect();
    let start = now();
    for i in 0..n {
        buttons[i % buttons.len()].click();
        settle().await;
        // Force style and layout, as a frame would.
        let _ = root.offset_height();
    }
    (now() - start) / n as f64
}

#[wasm_bindgen_test]
async fn step_through_a_100000_event_trace() {
    let started = now();
    let big = StateTree::new(synthetic_trace(25_000)).unwrap();
    let index_ms = now() - started;
    assert_eq!(big.len(), 100_001);
    let mut breakpoints = BTreeSet::new();
    let navigation = time(1000, |i| {
        std::hint::black_box(big.step(
            Stop::Event(50_000 + i),
            replayground_shared::Action::StepOver,
            &mut breakpoints,
        ));
    });
    let big = Arc::new(Session::new(
        "def f(x):\n    return x\nfor i in range(25000):\n    f(i)\n".into(),
        big,
    ));
    let small_trace: Trace = serde_json::from_str(include_str!("fixtures/double.json")).unwrap();
    let small = Arc::new(Session::new(
        include_str!("fixtures/double.py").into(),
        StateTree::new(small_trace).unwrap(),
    ));
    let small_ms = ms_per_click(small, &["step-into", "step-back"], 100).await;
    let big_ms = ms_per_click(Arc::clone(&big), &["step-into"], 100).await;
    let big_over_ms = ms_per_click(big, &["step-over", "step-back-over"], 100).await;
    console_log!(
        "bench: 100,001-event trace: indexing {index_ms:.0} ms; StateTree::step alone {:.4} ms; \
         step + re-render {big_ms:.2} ms (step into), {big_over_ms:.2} ms (step over / back over) (target < 16 ms) \
         = {:.2}x of the same on an 8-event trace ({small_ms:.2} ms)",
        navigation,
        big_ms / small_ms
    );
}
