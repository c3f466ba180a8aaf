//! One traced run and the page-wide modes around it, which the page hands to its views
//! through Leptos's context. Every view may read these; this module reads no view.

use leptos::prelude::*;
use replayground_shared::{StateTree, Stop};

/// One traced run: the code as it was run (the editor may change since), its state tree
/// and where the debugger is in it.
#[derive(Debug)]
pub struct Session {
    pub code: String,
    pub tree: StateTree,
    /// The stop belongs to its run: a stop shared by every run let a new run's event index
    /// reach the still-mounted panel of the previous (shorter, or empty) trace and panic.
    pub stop: ArcRwSignal<Stop>,
}

impl Session {
    /// A run stopped where pdb first stops.
    pub fn new(code: String, tree: StateTree) -> Self {
        let stop = ArcRwSignal::new(tree.initial_stop());
        Self { code, tree, stop }
    }
}

/// Whether the page is in presentation mode (arrow keys step too).
#[derive(Debug, Clone, Copy)]
pub struct Presenting(pub RwSignal<bool>);

/// Whether the "Advanced" controls are shown: pdb's commands and neural mode. Beginners
/// get Prev and Next until they open it; the choice is remembered.
#[derive(Debug, Clone, Copy)]
pub struct Advanced(pub RwSignal<bool>);

/// Where the choice of simple or advanced controls is remembered.
pub const ADVANCED_KEY: &str = "replayground-advanced";
