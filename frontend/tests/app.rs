//! Component tests: the app mounted into a real browser DOM (wasm-bindgen-test, headless
//! Chromium). Run with `cargo xtask test`, or see README.md for the single command.
#![cfg(target_arch = "wasm32")]

use std::collections::BTreeSet;
use std::sync::Arc;

use leptos::prelude::*;
use replayground_frontend::App;
use replayground_frontend::app::EXAMPLE_PROGRAM;
use replayground_frontend::debugger::{DebuggerPanel, Session};
use replayground_frontend::stop_view::describe_state;
use replayground_shared::{StateTree, Stop, Trace};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};
use web_sys::{HtmlButtonElement, HtmlElement, HtmlTextAreaElement, KeyboardEvent, KeyboardEventInit};

wasm_bindgen_test_configure!(run_in_browser);

/// A fresh element in the page for one test to mount into.
fn container() -> HtmlElement {
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
    Arc::new(Session {
        code: include_str!("fixtures/double.py").to_owned(),
        tree,
    })
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

    assert_eq!(text(&root, "outcome"), "The program finished.");
    assert_eq!(text(&root, "current-line"), "1");
    assert!(by_test_id::<HtmlButtonElement>(&root, "step-back").disabled());
    assert_eq!(root.query_selector_all(".code-line").unwrap().length(), 5);

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
    let current = root.query_selector(".code-line.current").unwrap().unwrap();
    assert!(current.text_content().unwrap().contains("return x * 2"));

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
async fn pdb_letters_step_and_breakpoints_stop_continue() {
    let root = container();
    let breakpoints = RwSignal::new(BTreeSet::new());
    let session = example_session();
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
    root.query_selector("[aria-label=\"Breakpoint on line 2\"]")
        .unwrap()
        .unwrap()
        .unchecked_into::<HtmlElement>()
        .click();
    settle().await;
    assert!(breakpoints.get_untracked().contains(&2));
    press("c");
    settle().await;
    assert_eq!(text(&root, "current-line"), "2");
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
