//! The debugger's buttons and their keyboard shortcuts: pdb's letters, Shift for the
//! reverse, and arrow keys for presentation remotes.

use replayground_shared::Action;

/// A debugger button: the action it applies and its keyboard shortcut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Control {
    pub action: Action,
    pub label: &'static str,
    /// What it does, for the tooltip and screen readers.
    pub help: &'static str,
    /// pdb's letter for forward actions, the capital letter (Shift) for their reverse.
    pub key: &'static str,
    pub test_id: &'static str,
    /// `simple` (Prev and Next, shown until "Advanced" is opened) or `pdb` (shown after).
    pub class: &'static str,
}

/// Simple mode's Prev and Next (one event back or forward, into calls), then pdb's
/// commands: reverse actions first (left of the forward ones, like a media player).
pub const CONTROLS: [Control; 10] = [
    Control {
        action: Action::ReverseStepInto,
        label: "◀ Prev",
        help: "Back one step",
        key: "ArrowLeft",
        test_id: "prev",
        class: "simple",
    },
    Control {
        action: Action::StepInto,
        label: "Next ▶",
        help: "Forward one step",
        key: "ArrowRight",
        test_id: "next",
        class: "simple",
    },
    Control {
        action: Action::ReverseContinue,
        label: "Reverse continue",
        help: "Back to the previous breakpoint hit, or the start",
        key: "C",
        test_id: "reverse-continue",
        class: "pdb reverse",
    },
    Control {
        action: Action::ReverseStepReturn,
        label: "Back out",
        help: "Back to the call of this function",
        key: "R",
        test_id: "step-back-return",
        class: "pdb reverse",
    },
    Control {
        action: Action::ReverseStepOver,
        label: "Back over",
        help: "Back to the previous line of this function",
        key: "N",
        test_id: "step-back-over",
        class: "pdb reverse",
    },
    Control {
        action: Action::ReverseStepInto,
        label: "Step back",
        help: "Back one event",
        key: "b",
        test_id: "step-back",
        class: "pdb reverse",
    },
    Control {
        action: Action::StepInto,
        label: "Step into",
        help: "pdb step: the very next event",
        key: "s",
        test_id: "step-into",
        class: "pdb forward",
    },
    Control {
        action: Action::StepOver,
        label: "Step over",
        help: "pdb next: the next line of this function",
        key: "n",
        test_id: "step-over",
        class: "pdb forward",
    },
    Control {
        action: Action::StepReturn,
        label: "Step out",
        help: "pdb return: run until this function returns",
        key: "r",
        test_id: "step-return",
        class: "pdb forward",
    },
    Control {
        action: Action::Continue,
        label: "Continue",
        help: "pdb continue: run to the next breakpoint or the end",
        key: "c",
        test_id: "continue",
        class: "pdb forward",
    },
];

/// The action bound to a key press (Shift gives the capital letter), if any.
pub fn action_for_key(key: &str) -> Option<Action> {
    if key == "S" {
        return Some(Action::ReverseStepInto);
    }
    CONTROLS.iter().find(|c| c.key == key).map(|c| c.action)
}

/// Arrow and page keys, for presentation remotes: right/down forward, left/up back.
pub fn action_for_presenter_key(key: &str) -> Option<Action> {
    match key {
        "ArrowRight" | "PageDown" => Some(Action::StepInto),
        "ArrowDown" => Some(Action::StepOver),
        "ArrowLeft" | "PageUp" => Some(Action::ReverseStepInto),
        "ArrowUp" => Some(Action::ReverseStepOver),
        _ => None,
    }
}

/// The key a control shows: arrows as arrows.
pub fn key_cap(shortcut: &str) -> String {
    match shortcut {
        "ArrowLeft" => "←".to_owned(),
        "ArrowRight" => "→".to_owned(),
        other => other.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn shortcuts_are_pdbs_letters_and_shift_reverses() {
        assert_eq!(action_for_key("s"), Some(Action::StepInto));
        assert_eq!(action_for_key("n"), Some(Action::StepOver));
        assert_eq!(action_for_key("r"), Some(Action::StepReturn));
        assert_eq!(action_for_key("c"), Some(Action::Continue));
        assert_eq!(action_for_key("b"), Some(Action::ReverseStepInto));
        assert_eq!(action_for_key("S"), Some(Action::ReverseStepInto));
        assert_eq!(action_for_key("N"), Some(Action::ReverseStepOver));
        assert_eq!(action_for_key("R"), Some(Action::ReverseStepReturn));
        assert_eq!(action_for_key("C"), Some(Action::ReverseContinue));
        assert_eq!(action_for_key("x"), None);
        assert_eq!(action_for_key("ArrowRight"), Some(Action::StepInto));
        assert_eq!(action_for_presenter_key("ArrowRight"), Some(Action::StepInto));
    }

    #[test]
    fn every_action_has_one_control() {
        let keys: HashSet<&str> = CONTROLS.iter().map(|c| c.key).collect();
        assert_eq!(keys.len(), CONTROLS.len());
    }
}
