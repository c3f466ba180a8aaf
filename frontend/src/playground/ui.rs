//! Small pieces every view of the playground uses: a conditional view, a message line,
//! and reading and refocusing the DOM behind an event.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// `view` while `condition` holds, as `<Show>` renders it (the condition memoised, so the
/// view is built when it turns true, not on every change) without `<Show>`'s type-erased
/// children, which cost the wasm bundle a copy of Leptos's `AnyView` code per use.
pub fn when<V: IntoView>(
    condition: impl Fn() -> bool + Send + Sync + 'static,
    view: impl Fn() -> V + Send + Sync + 'static,
) -> impl Fn() -> Option<V> + Send + Sync + 'static {
    let shown = Memo::new(move |_| condition());
    move || shown.get().then(&view)
}

/// A one-line message paragraph: every message of the page renders through this one view
/// type, so Leptos compiles it once.
pub fn message(class: &'static str, role: &'static str, test_id: Option<&'static str>, text: String) -> impl IntoView {
    view! { <p class=class role=role data-testid=test_id>{text}</p> }
}

/// The value of `attribute` on the nearest element at or above the event's target.
pub fn data_of(ev: &web_sys::Event, attribute: &str) -> Option<String> {
    let target = ev.target()?.dyn_into::<web_sys::Element>().ok()?;
    target
        .closest(&format!("[{attribute}]"))
        .ok()
        .flatten()?
        .get_attribute(attribute)
}

/// Letters typed into the editor or the input box are text, not debugger commands.
pub fn is_typing_target(target: Option<web_sys::EventTarget>) -> bool {
    target
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|element| {
            matches!(element.tag_name().as_str(), "TEXTAREA" | "INPUT" | "SELECT")
                || element.closest("[contenteditable]").ok().flatten().is_some()
        })
}

/// Rewriting a list drops the focus of the button just pressed: put it back on the button
/// matching `selector` in the clicked list once it is redrawn, so keyboard users stay there.
pub fn refocus(ev: &web_sys::Event, selector: String) {
    let Some(list) = ev.current_target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else {
        return;
    };
    request_animation_frame(move || {
        let button = list
            .query_selector(&selector)
            .ok()
            .flatten()
            .and_then(|b| b.dyn_into::<web_sys::HtmlElement>().ok());
        if let Some(button) = button {
            let _ = button.focus();
        }
    });
}
