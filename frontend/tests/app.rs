//! Component tests: the app mounted into a real browser DOM (wasm-bindgen-test, headless
//! Chromium). Run with `cargo xtask test`, or see README.md for the single command.
#![cfg(target_arch = "wasm32")]

use std::collections::BTreeSet;
use std::sync::Arc;

use leptos::prelude::*;
use replayground_frontend::App;
use replayground_frontend::playground::app::EXAMPLE_PROGRAM;
use replayground_frontend::playground::debugger::DebuggerPanel;
use replayground_frontend::playground::session::Session;
use replayground_frontend::playground::stop_view::describe_state;
use replayground_frontend::playground::syntax::SyntaxDocument;
use replayground_shared::{StateTree, Stop, Trace};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};
use web_sys::{HtmlButtonElement, HtmlElement, HtmlTextAreaElement, KeyboardEvent, KeyboardEventInit};

wasm_bindgen_test_configure!(run_in_browser);

/// A fresh element in the page for one test to mount into (and no code saved by another).
fn container() -> HtmlElement {
    window().local_storage().unwrap().unwrap().clear().unwrap();
    let document = document();
    let div = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&div).unwrap();
    div.unchecked_into()
}

fn by_test_id<T: JsCast>(root: &HtmlElement, id: &str) -> T {
    root.query_selector(&format!("[data-testid=\"{id}\"]"))
        .unwrap()
        .unwrap_or_else(|| panic!("no element with data-testid={id}"))
        .unchecked_into()
}

fn text(root: &HtmlElement, id: &str) -> String {
    by_test_id::<HtmlElement>(root, id).text_content().unwrap_or_default()
}

/// Lets the reactive system apply pending updates to the DOM.
async fn settle() {
    leptos::task::tick().await;
    leptos::task::tick().await;
}

fn example_session() -> Arc<Session> {
    let trace: Trace = serde_json::from_str(include_str!("fixtures/double.json")).unwrap();
    let tree = StateTree::new(trace).unwrap();
    Arc::new(Session::new(include_str!("fixtures/double.py").to_owned(), tree))
}

#[wasm_bindgen_test]
async fn the_page_has_an_editor_with_an_example_and_a_run_button() {
    let root = container();
    let _app = leptos::mount::mount_to(root.clone(), App);
    settle().await;

    assert_eq!(
        root.query_selector("h1").unwrap().unwrap().text_content().unwrap(),
        "Replayground"
    );
    let editor: HtmlTextAreaElement = by_test_id(&root, "editor");
    assert_eq!(editor.value(), EXAMPLE_PROGRAM);
    let run: HtmlButtonElement = by_test_id(&root, "run");
    assert_eq!(run.text_content().unwrap().trim(), "Run");
    assert!(!run.disabled());
    // No run yet: nothing to step through.
    assert!(root.query_selector("[data-testid=\"step-into\"]").unwrap().is_none());
}

#[wasm_bindgen_test]
async fn the_stepping_buttons_move_through_the_trace() {
    let root = container();
    let breakpoints = RwSignal::new(BTreeSet::new());
    let session = example_session();
    let _panel = leptos::mount::mount_to(root.clone(), move || view! { <DebuggerPanel session breakpoints /> });

    assert_eq!(
        text(&root, "outcome"),
        "Run result: the program finished after 8 steps."
    );
    assert_eq!(text(&root, "current-line"), "1");
    assert!(by_test_id::<HtmlButtonElement>(&root, "step-back").disabled());
    assert_eq!(root.query_selector_all(".tree-row").unwrap().length(), 2);

    by_test_id::<HtmlElement>(&root, "step-over").click();
    settle().await;
    assert_eq!(text(&root, "current-line"), "4");
    assert!(text(&root, "variables").contains("double"));

    by_test_id::<HtmlElement>(&root, "step-into").click();
    by_test_id::<HtmlElement>(&root, "step-into").click();
    settle().await;
    assert_eq!(text(&root, "current-line"), "2");
    assert_eq!(text(&root, "headline"), "About to run line 2 in double().");
    let stack = text(&root, "call-stack");
    assert!(
        stack.contains("<module> line 4") && stack.contains("double() line 2"),
        "call stack: {stack}"
    );
    let current = root.query_selector(".tree-row.current").unwrap().unwrap();
    assert!(current.text_content().unwrap().contains("double(x=2) → 4"));

    by_test_id::<HtmlElement>(&root, "step-return").click();
    settle().await;
    assert_eq!(text(&root, "stop-value"), "Return value: 4");

    by_test_id::<HtmlElement>(&root, "continue").click();
    settle().await;
    assert_eq!(text(&root, "current-line"), "end");
    assert_eq!(text(&root, "stdout"), "4\n");
    assert!(by_test_id::<HtmlButtonElement>(&root, "step-over").disabled());

    by_test_id::<HtmlElement>(&root, "step-back").click();
    settle().await;
    assert_eq!(text(&root, "current-line"), "5");
}

#[wasm_bindgen_test]
async fn a_new_run_never_shows_its_stop_in_the_previous_runs_panel() {
    // Issue 14: a syntax error (an empty trace) then a valid run panicked in the wasm.
    let root = container();
    let breakpoints = RwSignal::new(BTreeSet::new());
    let empty = Trace::empty(replayground_shared::Outcome::Finished);
    let session = RwSignal::new(Some(Arc::new(Session::new(
        String::new(),
        StateTree::new(empty).unwrap(),
    ))));
    let _page = leptos::mount::mount_to(root.clone(), move || {
        move || {
            session
                .get()
                .map(|session| view! { <DebuggerPanel session breakpoints /> })
        }
    });
    settle().await;
    assert_eq!(text(&root, "current-line"), "end");
    let next = example_session();
    // The new run moves on before the page swaps the panels, as `Playground::run` may.
    next.stop.set(Stop::Event(4));
    session.set(Some(next));
    settle().await;
    assert_eq!(text(&root, "current-line"), "2");
    by_test_id::<HtmlElement>(&root, "step-back").click();
    settle().await;
    // Back to the call of double(), on its `def` line.
    assert_eq!(text(&root, "headline"), "Calling double() (line 1).");
}

#[wasm_bindgen_test]
async fn pdb_letters_step_and_breakpoints_stop_continue() {
    let root = container();
    let breakpoints = RwSignal::new(BTreeSet::new());
    let session = example_session();
    let stop = session.stop.clone();
    let _panel = leptos::mount::mount_to(root.clone(), move || view! { <DebuggerPanel session breakpoints /> });

    let press = |key: &str| {
        let init = KeyboardEventInit::new();
        init.set_key(key);
        init.set_bubbles(true);
        init.set_cancelable(true);
        let event = KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init).unwrap();
        window().dispatch_event(&event).unwrap();
    };
    press("n");
    settle().await;
    assert_eq!(text(&root, "current-line"), "4");

    // A breakpoint inside double(): continue stops there, not at the end.
    breakpoints.set(BTreeSet::from([2]));
    press("c");
    settle().await;
    assert_eq!(text(&root, "current-line"), "2");
    // Shift+C goes back to the start; the timeline jumps anywhere.
    press("C");
    settle().await;
    assert_eq!(text(&root, "current-line"), "1");
    assert_eq!(stop.get_untracked(), Stop::Event(1));
}

#[wasm_bindgen_test]
async fn the_editor_highlights_outlines_and_offers_breakpoints() {
    let root = container();
    let _app = leptos::mount::mount_to(root.clone(), App);
    settle().await;
    let highlight = root.query_selector(".highlight").unwrap().unwrap();
    assert!(
        highlight
            .inner_html()
            .contains(r#"<span class="tok-function">fib</span>"#)
    );
    assert!(text(&root, "outline").contains("def fib"));
    assert_eq!(
        root.query_selector_all("[data-testid=\"errors\"] li").unwrap().length(),
        0
    );

    // Typing an error: it is listed and underlined; its line loses nothing else.
    let editor: HtmlTextAreaElement = by_test_id(&root, "editor");
    editor.set_value("def f(:\n    return 1\n");
    editor.dispatch_event(&web_sys::Event::new("input").unwrap()).unwrap();
    settle().await;
    assert!(text(&root, "errors").contains("Line 1"));
    assert!(highlight.inner_html().contains("missing"));
    // The <pre> was patched line by line: one <div> per line, the last one empty.
    let lines = highlight.children();
    assert_eq!(lines.length(), 3);
    assert_eq!(lines.item(1).unwrap().text_content().as_deref(), Some("    return 1"));
    assert_eq!(lines.item(2).unwrap().inner_html(), "");
    // Only lines that start a statement get a breakpoint button.
    let gutter = root.query_selector(".gutter").unwrap().unwrap();
    assert!(gutter.inner_html().contains(r#"aria-label="Breakpoint on line 2""#));
    root.query_selector("[aria-label=\"Breakpoint on line 2\"]")
        .unwrap()
        .unwrap()
        .unchecked_into::<HtmlElement>()
        .click();
    settle().await;
    assert!(
        root.query_selector("[aria-label=\"Breakpoint on line 2\"]")
            .unwrap()
            .unwrap()
            .get_attribute("aria-pressed")
            .as_deref()
            == Some("true")
    );
}

#[wasm_bindgen_test]
fn parsing_in_the_browser_is_incremental_and_exact() {
    let mut doc = SyntaxDocument::new(EXAMPLE_PROGRAM);
    let edited = EXAMPLE_PROGRAM.replace("total = 0", "total = 10");
    assert!(doc.update(&edited));
    assert_eq!(doc.highlight_html(), SyntaxDocument::new(&edited).highlight_html());
    assert_eq!(doc.analyse().outline.len(), 1);
}

#[wasm_bindgen_test]
fn states_read_as_sentences() {
    let tree = &example_session().tree;
    assert_eq!(
        describe_state(&tree.state(Stop::Event(1))),
        "About to run line 1 at module level."
    );
    assert_eq!(
        describe_state(&tree.state(Stop::Event(3))),
        "Calling double() (line 1)."
    );
    assert_eq!(
        describe_state(&tree.state(Stop::Event(5))),
        "Returning 4 from line 2 in double()."
    );
    assert_eq!(describe_state(&tree.state(Stop::End)), "The program has ended.");
}

#[wasm_bindgen_test]
async fn share_links_use_the_browsers_deflate_in_shared_shares_format() {
    use replayground_frontend::playground::sharing::{decode_fragment, encode_fragment};
    use replayground_shared::share::{self, PlaygroundView};
    let view = PlaygroundView {
        code: "def f(x):\n    return x * 2\n\nprint(f(21))\n".repeat(10),
        stdin: "in\n".into(),
        breakpoints: vec![2, 4],
        step: Some(5),
    };
    // Made here, opened by shared::share (the server, the CLI, older pages), and back.
    let fragment = encode_fragment(&view).await.unwrap();
    assert!(fragment.len() < view.code.len() / 2, "{fragment}");
    assert_eq!(share::decode(&fragment).unwrap(), view);
    assert_eq!(decode_fragment(&share::encode(&view)).await.unwrap(), view);
    let damaged = decode_fragment("v1.AAAA").await.unwrap_err();
    assert!(damaged.contains("its contents do not decompress"), "{damaged}");
}

#[wasm_bindgen_test]
async fn the_variables_switch_to_a_heap_diagram_and_back_and_the_choice_is_kept() {
    let root = container();
    let trace: Trace = serde_json::from_str(include_str!("fixtures/heap.json")).unwrap();
    let session = Arc::new(Session::new(
        include_str!("fixtures/heap.py").to_owned(),
        StateTree::new(trace).unwrap(),
    ));
    let stop = session.stop.clone();
    let breakpoints = RwSignal::new(BTreeSet::new());
    let panel_session = Arc::clone(&session);
    let panel = leptos::mount::mount_to(root.clone(), move || {
        view! { <DebuggerPanel session=Arc::clone(&panel_session) breakpoints /> }
    });
    stop.set(Stop::End);
    settle().await;
    assert!(root.query_selector("[data-testid=\"heap\"]").unwrap().is_none());

    by_test_id::<HtmlElement>(&root, "view-diagram").click();
    settle().await;
    let svg: web_sys::Element = by_test_id(&root, "heap");
    let titles: Vec<String> = (0..svg.query_selector_all("g.object > text.title").unwrap().length())
        .filter_map(|i| svg.query_selector_all("g.object > text.title").unwrap().item(i))
        .filter_map(|n| n.text_content())
        .collect();
    assert!(titles.contains(&"function average(xs)".to_owned()), "{titles:?}");
    assert!(titles.contains(&"class Node".to_owned()), "{titles:?}");
    assert_eq!(svg.query_selector_all("path.ref").unwrap().length(), 9);
    assert!(root.query_selector("[data-testid=\"variables\"]").unwrap().is_none());

    // A new panel (the next run) opens in the diagram again.
    drop(panel);
    let again = container_keeping_storage();
    let _panel = leptos::mount::mount_to(again.clone(), move || view! { <DebuggerPanel session breakpoints /> });
    settle().await;
    assert!(again.query_selector("[data-testid=\"heap\"]").unwrap().is_some());
    by_test_id::<HtmlElement>(&again, "view-table").click();
    settle().await;
    assert!(again.query_selector("[data-testid=\"heap\"]").unwrap().is_none());
    assert!(again.query_selector("[data-testid=\"variables\"]").unwrap().is_some());
}

/// A fresh element that keeps what earlier mounts saved in localStorage.
fn container_keeping_storage() -> HtmlElement {
    let div = document().create_element("div").unwrap();
    document().body().unwrap().append_child(&div).unwrap();
    div.unchecked_into()
}
