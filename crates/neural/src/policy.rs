//! The stochastic debugger policy that turns one execution into training trajectories.
//!
//! As in the neural-debugger paper, a trajectory is a walk through the state tree by
//! randomly chosen debugger actions (mostly small steps, sometimes a breakpoint and a
//! continue), written forward or — to teach inverse execution — backward with the
//! reverse actions. Every choice comes from the caller's seeded generator, so the same
//! seed gives the same trajectories.

use std::collections::BTreeSet;

use rand::Rng;
use replayground_shared::trace_lang::{self, Direction, Trajectory};
use replayground_shared::{Action, StateTree, Stop};

/// Weights of the forward actions and the share of inverse trajectories.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    pub step_into: u32,
    pub step_over: u32,
    pub step_return: u32,
    pub breakpoint: u32,
    pub continue_: u32,
    /// Probability that a trajectory is written backwards.
    pub inverse: f64,
    /// Actions per trajectory, at most.
    pub max_actions: usize,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            step_into: 5,
            step_over: 4,
            step_return: 2,
            breakpoint: 1,
            continue_: 1,
            inverse: 0.25,
            max_actions: 24,
        }
    }
}

impl Policy {
    /// Samples one trajectory of `tree` (whose program is `code`).
    pub fn sample(&self, tree: &StateTree, code: &str, rng: &mut impl Rng) -> Trajectory {
        self.walk(tree, code, rng).0
    }

    /// [`Self::sample`], with the breakpoints the walk left set (an inverse trajectory,
    /// written with the reverse actions, does not record them).
    pub fn walk(&self, tree: &StateTree, code: &str, rng: &mut impl Rng) -> (Trajectory, BTreeSet<u32>) {
        let lines: Vec<u32> = tree.executed_lines().into_iter().collect();
        let mut breakpoints = BTreeSet::new();
        let mut at = tree.initial_stop();
        let mut actions = Vec::new();
        let length = rng.random_range(1..=self.max_actions.max(1));
        while actions.len() < length && at != Stop::End {
            let action = self.choose(rng, &lines, &breakpoints);
            at = tree.step(at, action, &mut breakpoints);
            actions.push(action);
        }
        let direction = if rng.random_bool(self.inverse.clamp(0.0, 1.0)) {
            Direction::Inverse
        } else {
            Direction::Forward
        };
        (trace_lang::record(tree, code, &actions, direction), breakpoints)
    }

    fn choose(&self, rng: &mut impl Rng, lines: &[u32], breakpoints: &BTreeSet<u32>) -> Action {
        // `continue` without a breakpoint just ends the program: rarely informative.
        let continue_weight = if breakpoints.is_empty() { 0 } else { self.continue_ };
        let breakpoint_weight = if lines.is_empty() { 0 } else { self.breakpoint };
        let weights = [
            self.step_into,
            self.step_over,
            self.step_return,
            breakpoint_weight,
            continue_weight,
        ];
        let total: u32 = weights.iter().sum();
        let mut roll = rng.random_range(0..total.max(1));
        let mut choice = 0;
        for (i, w) in weights.iter().enumerate() {
            if roll < *w {
                choice = i;
                break;
            }
            roll -= w;
        }
        match choice {
            0 => Action::StepInto,
            1 => Action::StepOver,
            2 => Action::StepReturn,
            3 => Action::Breakpoint(lines[rng.random_range(0..lines.len())]),
            _ => Action::Continue,
        }
    }
}
