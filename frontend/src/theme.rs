//! The light / dark theme both pages share: remembered in localStorage (one choice for
//! the playground and the reproduction page), applied as `data-theme` on the root element.

use leptos::prelude::*;

/// Where the chosen theme is remembered.
const THEME_KEY: &str = "replayground-theme";

pub fn local_storage() -> Option<web_sys::Storage> {
    window().local_storage().ok().flatten()
}

/// An on/off setting remembered in localStorage under `key` (off until chosen).
pub fn stored_flag(key: &str) -> bool {
    local_storage()
        .and_then(|s| s.get_item(key).ok().flatten())
        .is_some_and(|v| v == "1")
}

/// Remembers an on/off setting (see [`stored_flag`]).
pub fn store_flag(key: &str, on: bool) {
    if let Some(storage) = local_storage() {
        let _ = storage.set_item(key, if on { "1" } else { "0" });
    }
}

/// Applies the remembered theme and returns the switch for the page's Theme button.
pub fn use_theme() -> impl Fn() + Copy + 'static {
    let theme = RwSignal::new(
        local_storage()
            .and_then(|s| s.get_item(THEME_KEY).ok().flatten())
            .unwrap_or_default(),
    );
    Effect::new(move |_| {
        let theme = theme.get();
        if let Some(root) = document().document_element() {
            let _ = if theme.is_empty() {
                root.remove_attribute("data-theme")
            } else {
                root.set_attribute("data-theme", &theme)
            };
        }
    });
    move || {
        // No choice yet: the switch goes to the opposite of what the system shows.
        let dark_now = match theme.get_untracked().as_str() {
            "dark" => true,
            "light" => false,
            _ => window()
                .match_media("(prefers-color-scheme: dark)")
                .ok()
                .flatten()
                .is_some_and(|m| m.matches()),
        };
        let next = if dark_now { "light" } else { "dark" };
        if let Some(storage) = local_storage() {
            let _ = storage.set_item(THEME_KEY, next);
        }
        theme.set(next.to_owned());
    }
}
