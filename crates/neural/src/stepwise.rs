//! Debugger actions that run many events, answered one event at a time.
//!
//! `step_over` across a call, `step_return`, `continue` and `breakpoint:N` can run a
//! whole function, a loop or the rest of the program before they stop. Asked directly,
//! a model must run all of that in its head and write only the last state. Here the
//! engine is asked for one `step_into` after another instead, each predicted state
//! feeding the next prompt, until the states it writes meet the action's stopping rule
//! — the rules of [`StateTree::step`] (pdb's), read off the predicted states: the
//! depth, the event and the line. The states in between are the model's working.
//!
//! A start that these rules cannot judge from states alone (a generator's frame, whose
//! suspensions the states do not mark; `step_return` at a return event) and a walk that
//! is still running after [`DEFAULT_MAX_STEPS`] are asked directly.
//!
//! A single step back (`reverse_step_into`, `reverse_step_over`) is checked the other
//! way: each candidate previous state is stepped forward from itself, and the first that
//! leads to the later state is the answer.
//!
//! On the realistic programs this engine scored the same as the direct one or one
//! answer lower, and took longer (README, "Step by step"): it is selectable, not the
//! default.
//!
//! [`StateTree::step`]: replayground_shared::StateTree::step

use std::collections::BTreeSet;

use replayground_shared::trace_lang::{self, Direction, Step, Trajectory, normalize_state};
use replayground_shared::{Action, State, StateTree, Stop, StopKind};
use tokenizers::Tokenizer;

use crate::bounds::{CodeFacts, Guide, breakpoints_set};
use crate::infer::{Engine, Prediction, PromptFrame, Sampling};

/// Candidates for a step back, the greedy one included, each checked by a step forward.
pub const BACK_CANDIDATES: usize = 4;
const BACK_TEMPERATURE: f64 = 0.8;
const BACK_TOP_P: f64 = 0.95;

/// What `--model` / `--neural-model` add to an engine's name to run it step by step.
pub const SUFFIX: &str = "+steps";

/// The most `step_into` predictions one action may take before it is asked directly.
pub const DEFAULT_MAX_STEPS: usize = 24;

/// What ends a multi-event action, judged on the states a model predicts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopRule {
    action: Action,
    /// The depth of the frame the action starts in.
    depth: u32,
    breakpoints: BTreeSet<u32>,
}

impl StopRule {
    /// The rule for `action` from `from` in a run of the program `facts` describe, with
    /// `breakpoints` set (the action's own included). `None` when the action moves one
    /// event (`step_into`, `step_over` at a return event), moves backwards or jumps, or
    /// starts where states alone cannot tell its stop (a frame that may be a
    /// generator's; `step_return` at a return event).
    pub fn new(facts: Option<&CodeFacts>, from: &State, action: Action, breakpoints: &BTreeSet<u32>) -> Option<Self> {
        let depth = from.depth?;
        let generator = || {
            let (Some(function), Some(line)) = (from.function.as_deref(), from.line) else {
                return true;
            };
            facts.is_none_or(|f| f.may_be_generator(function, line))
        };
        let multi_event = match action {
            // At a return event, `next` becomes `step` and `step_return` goes to the
            // caller's frame, which states do not name.
            Action::StepOver | Action::StepReturn => from.event != StopKind::Return,
            Action::Continue | Action::Breakpoint(_) => true,
            _ => false,
        };
        if !multi_event || from.event == StopKind::End {
            return None;
        }
        if matches!(action, Action::StepOver | Action::StepReturn) && depth > 0 && generator() {
            return None;
        }
        let mut breakpoints = breakpoints.clone();
        if let Action::Breakpoint(line) = action {
            breakpoints.insert(line);
        }
        Some(Self {
            action,
            depth,
            breakpoints,
        })
    }

    /// Whether the walk stops at `state`, the next event after the last one it passed.
    pub fn stops_at(&self, state: &State) -> bool {
        if state.event == StopKind::End {
            return true;
        }
        let at_breakpoint = state.event == StopKind::Line && state.line.is_some_and(|l| self.breakpoints.contains(&l));
        if at_breakpoint {
            return true;
        }
        let Some(depth) = state.depth else { return false };
        match self.action {
            // pdb's `next`: the next event of this frame (it has no second call event),
            // or of a caller once it has returned.
            Action::StepOver => depth < self.depth || depth == self.depth && state.event != StopKind::Call,
            // The frame's own return (an exception leaving it returns too), or a caller.
            Action::StepReturn => depth < self.depth || depth == self.depth && state.event == StopKind::Return,
            _ => false,
        }
    }

    /// Where the walk from `at` lands in the real run `tree` when every prediction is
    /// right: the check that these rules are pdb's.
    pub fn walk(&self, tree: &StateTree, at: Stop) -> Stop {
        let mut stop = at;
        loop {
            stop = tree.step(stop, Action::StepInto, &mut BTreeSet::new());
            if stop == Stop::End || self.stops_at(&tree.state(stop)) {
                return stop;
            }
        }
    }
}

/// An engine that answers multi-event actions by stepping into one event at a time and
/// checks single steps back forward (see the module's documentation); every other
/// question goes to `inner` as it is.
pub struct Stepwise {
    inner: Box<dyn Engine>,
    max_steps: usize,
}

impl Stepwise {
    pub fn new(inner: Box<dyn Engine>) -> Self {
        Self {
            inner,
            max_steps: DEFAULT_MAX_STEPS,
        }
    }

    /// Sets the most `step_into` predictions one action may take.
    #[must_use]
    pub fn with_max_steps(mut self, steps: usize) -> Self {
        self.max_steps = steps.max(1);
        self
    }

    /// A step back checked forward: each candidate previous state (the greedy one
    /// first, then up to [`BACK_CANDIDATES`] less one sampled) is stepped forward with
    /// the mirrored action from that state alone; the first that leads to the later
    /// state is the answer, else the greedy one. A wrong value in a candidate mostly
    /// survives the forward step and shows there.
    fn checked_back(
        &mut self,
        prefix: &Trajectory,
        action: Action,
        breakpoints: Option<&BTreeSet<u32>>,
        sampling: &Sampling,
        on_text: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Prediction> {
        // `continue` from a candidate needs the breakpoints, which a trajectory written
        // backwards does not record: only single steps are checked.
        let forward = crate::predict::mirrored(action).filter(|a| matches!(a, Action::StepInto | Action::StepOver));
        let (Some(forward), Some(later)) = (forward, prefix.steps.last()) else {
            return self.inner.answer(prefix, action, breakpoints, sampling, on_text);
        };
        let later = normalize_state(&later.state);
        let (mut tokens, mut first) = (0, None);
        for i in 0..BACK_CANDIDATES {
            let drawn = if i == 0 {
                *sampling
            } else {
                Sampling {
                    temperature: BACK_TEMPERATURE,
                    top_p: Some(BACK_TOP_P),
                    seed: sampling.seed.wrapping_add(i as u64),
                    ..*sampling
                }
            };
            let candidate = self.inner.answer(prefix, action, breakpoints, &drawn, &mut |_| {})?;
            tokens += candidate.tokens;
            if let Ok(state) = &candidate.state {
                let alone = Trajectory {
                    code: prefix.code.clone(),
                    direction: Direction::Forward,
                    steps: vec![Step {
                        action: None,
                        state: state.clone(),
                    }],
                };
                let check = self.inner.answer(&alone, forward, breakpoints, sampling, &mut |_| {})?;
                tokens += check.tokens;
                if check.state.is_ok_and(|s| normalize_state(&s) == later) {
                    on_text(&candidate.text);
                    return Ok(Prediction { tokens, ..candidate });
                }
            }
            first.get_or_insert(candidate);
        }
        let first = first.expect("at least one candidate");
        on_text(&first.text);
        Ok(Prediction { tokens, ..first })
    }
}

impl Engine for Stepwise {
    fn name(&self) -> String {
        format!("{} (step by step)", self.inner.name())
    }

    fn count_tokens(&self, text: &str) -> anyhow::Result<usize> {
        self.inner.count_tokens(text)
    }

    fn tokenizer(&self) -> &Tokenizer {
        self.inner.tokenizer()
    }

    fn frame(&self) -> PromptFrame {
        self.inner.frame()
    }

    fn context(&self) -> usize {
        self.inner.context()
    }

    fn warm_up(&mut self) -> anyhow::Result<()> {
        self.inner.warm_up()
    }

    fn read_ahead(&mut self, prompt: &str) -> anyhow::Result<()> {
        self.inner.read_ahead(prompt)
    }

    fn prompt(&self, prefix: &Trajectory, action: Action, sampling: &Sampling) -> anyhow::Result<String> {
        self.inner.prompt(prefix, action, sampling)
    }

    fn predict(
        &mut self,
        prompt: &str,
        guide: &Guide<'_>,
        sampling: &Sampling,
        on_text: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Prediction> {
        self.inner.predict(prompt, guide, sampling, on_text)
    }

    fn answers_stepwise(&self) -> bool {
        true
    }

    fn answer(
        &mut self,
        prefix: &Trajectory,
        action: Action,
        breakpoints: Option<&BTreeSet<u32>>,
        sampling: &Sampling,
        on_text: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Prediction> {
        let Some(from) = prefix.steps.last().map(|s| s.state.clone()) else {
            return self.inner.answer(prefix, action, breakpoints, sampling, on_text);
        };
        if prefix.direction == Direction::Inverse {
            return self.checked_back(prefix, action, breakpoints, sampling, on_text);
        }
        let facts = CodeFacts::new(&prefix.code);
        let set = breakpoints_set(prefix, breakpoints);
        let Some(rule) = StopRule::new(facts.as_ref(), &from, action, &set) else {
            return self.inner.answer(prefix, action, breakpoints, sampling, on_text);
        };
        let mut walk = prefix.clone();
        let (mut tokens, mut bounds_dropped) = (0, false);
        for _ in 0..self.max_steps {
            let step = self
                .inner
                .answer(&walk, Action::StepInto, None, sampling, &mut |_| {})?;
            tokens += step.tokens;
            bounds_dropped |= step.bounds_dropped;
            // No state to go on from: the unparsable answer is the answer.
            let Ok(state) = step.state else {
                return Ok(Prediction { tokens, ..step });
            };
            if rule.stops_at(&state) {
                let text = trace_lang::state_text(&state, Some(&from)).unwrap_or(step.text);
                on_text(&text);
                return Ok(Prediction {
                    text,
                    state: Ok(state),
                    tokens,
                    bounds_dropped,
                });
            }
            walk.steps.push(Step {
                action: Some(Action::StepInto),
                state,
            });
        }
        // Still running: ask the rest directly, from the last state where the action
        // means the same (any frame for a breakpoint; the starting depth otherwise).
        let last = &walk.steps.last().expect("the walk starts from the prefix").state;
        let same_meaning = matches!(action, Action::Continue | Action::Breakpoint(_))
            || last.depth == from.depth && last.function == from.function && last.event == StopKind::Line;
        let prefix = if same_meaning { &walk } else { prefix };
        let mut answer = self.inner.answer(prefix, action, breakpoints, sampling, on_text)?;
        answer.tokens += tokens;
        answer.bounds_dropped |= bounds_dropped;
        Ok(answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::route_trajectory;
    use replayground_shared::EventKind::{Call, Exception, Line};
    use replayground_shared::test_util::TraceBuilder;

    /// Every multi-event action from every stop of `tree` (with `breakpoints`) lands
    /// where the tree's own stepping does, for the starts the rule accepts.
    fn agrees_everywhere(tree: &StateTree, code: &str, breakpoints: &BTreeSet<u32>) -> usize {
        let facts = CodeFacts::new(code);
        let lines: Vec<u32> = tree.executed_lines().into_iter().collect();
        let mut actions = vec![Action::StepOver, Action::StepReturn, Action::Continue];
        actions.extend(lines.iter().map(|&l| Action::Breakpoint(l)));
        let mut judged = 0;
        for i in 0..tree.len() {
            let at = Stop::Event(i);
            let from = tree.state(at);
            for &action in &actions {
                let Some(rule) = StopRule::new(facts.as_ref(), &from, action, breakpoints) else {
                    continue;
                };
                let expected = tree.step(at, action, &mut breakpoints.clone());
                assert_eq!(rule.walk(tree, at), expected, "{action} from event {i}: {from:?}");
                judged += 1;
            }
        }
        judged
    }

    /// ```python
    /// def f(x):          # 1
    ///     y = g(x)       # 2
    ///     return y       # 3
    /// def g(x):          # 4
    ///     if x < 0:      # 5
    ///         raise ValueError(x)  # 6
    ///     return x + 1   # 7
    /// a = f(1)           # 8
    /// try:               # 9
    ///     b = f(-1)      # 10
    /// except ValueError: # 11
    ///     b = 0          # 12
    /// ```
    fn calls_and_a_raise() -> (StateTree, &'static str) {
        let code = "def f(x):\n    y = g(x)\n    return y\ndef g(x):\n    if x < 0:\n        raise ValueError(x)\n    return x + 1\na = f(1)\ntry:\n    b = f(-1)\nexcept ValueError:\n    b = 0\n";
        let mut b = TraceBuilder::new();
        let module = b.frame("<module>", None);
        let f1 = b.frame("f", Some(module));
        let g1 = b.frame("g", Some(f1));
        let f2 = b.frame("f", Some(module));
        let g2 = b.frame("g", Some(f2));
        let (one, two, minus) = (b.int(1), b.int(2), b.int(-1));
        let error = b.int(0);
        b.event(Call, module, 1, &[]);
        b.event(Line, module, 1, &[]);
        b.event(Line, module, 4, &[]);
        b.event(Line, module, 8, &[]);
        b.event(Call, f1, 1, &[("x", one)]);
        b.event(Line, f1, 2, &[("x", one)]);
        b.event(Call, g1, 4, &[("x", one)]);
        b.event(Line, g1, 5, &[("x", one)]);
        b.event(Line, g1, 7, &[("x", one)]);
        b.returning(g1, 7, &[("x", one)], Some(two));
        b.event(Line, f1, 3, &[("x", one), ("y", two)]);
        b.returning(f1, 3, &[("x", one), ("y", two)], Some(two));
        b.event(Line, module, 9, &[("a", two)]);
        b.event(Line, module, 10, &[("a", two)]);
        b.event(Call, f2, 1, &[("x", minus)]);
        b.event(Line, f2, 2, &[("x", minus)]);
        b.event(Call, g2, 4, &[("x", minus)]);
        b.event(Line, g2, 5, &[("x", minus)]);
        b.event(Line, g2, 6, &[("x", minus)]);
        b.event(Exception, g2, 6, &[("x", minus)]);
        b.returning(g2, 6, &[("x", minus)], None);
        b.event(Exception, f2, 2, &[("x", minus)]);
        b.returning(f2, 2, &[("x", minus)], None);
        b.event(Exception, module, 10, &[("a", two)]);
        b.event(Line, module, 11, &[("a", two)]);
        b.event(Line, module, 12, &[("a", two)]);
        b.returning(module, 12, &[("a", two), ("b", error)], None);
        (StateTree::new(b.build()).unwrap(), code)
    }

    #[test]
    fn the_rule_stops_where_pdb_does_across_calls_returns_and_a_raise() {
        let (tree, code) = calls_and_a_raise();
        assert!(agrees_everywhere(&tree, code, &BTreeSet::new()) > 40);
        assert!(agrees_everywhere(&tree, code, &BTreeSet::from([3, 6])) > 40);
    }

    /// Knows the real run: answers `step_into` with the true next state and any other
    /// action with an unparsable line, so that a right answer to a multi-event action
    /// can only come from the walk.
    struct Oracle {
        tree: StateTree,
        tokenizer: Tokenizer,
        /// Asked for a step back, draw i (0: greedy) is the state of this event.
        backwards: Vec<usize>,
    }

    impl Oracle {
        fn new(tree: StateTree) -> Self {
            // Every word one unknown token: enough for the playground's prompt fitting.
            let vocab = std::collections::HashMap::from([("[UNK]".to_owned(), 0)]);
            let words = tokenizers::models::wordlevel::WordLevel::builder()
                .vocab(vocab.into_iter().collect())
                .unk_token("[UNK]".to_owned())
                .build()
                .unwrap();
            let mut tokenizer = Tokenizer::new(words);
            tokenizer.with_pre_tokenizer(Some(tokenizers::pre_tokenizers::whitespace::Whitespace {}));
            Self {
                tree,
                tokenizer,
                backwards: Vec::new(),
            }
        }
    }

    impl Engine for Oracle {
        fn name(&self) -> String {
            "oracle".to_owned()
        }
        fn count_tokens(&self, text: &str) -> anyhow::Result<usize> {
            Ok(text.len())
        }
        fn tokenizer(&self) -> &Tokenizer {
            &self.tokenizer
        }
        fn frame(&self) -> PromptFrame {
            PromptFrame::default()
        }
        fn context(&self) -> usize {
            1 << 20
        }
        fn prompt(&self, _: &Trajectory, _: Action, _: &Sampling) -> anyhow::Result<String> {
            Ok(String::new())
        }
        fn predict(
            &mut self,
            _: &str,
            _: &Guide<'_>,
            _: &Sampling,
            _: &mut dyn FnMut(&str),
        ) -> anyhow::Result<Prediction> {
            anyhow::bail!("the oracle answers trajectories only")
        }
        fn answer(
            &mut self,
            prefix: &Trajectory,
            action: Action,
            breakpoints: Option<&BTreeSet<u32>>,
            sampling: &Sampling,
            _: &mut dyn FnMut(&str),
        ) -> anyhow::Result<Prediction> {
            let mut set = breakpoints.cloned().unwrap_or_default();
            let first = normalize_state(&prefix.steps[0].state);
            let mut at = (0..self.tree.len())
                .map(Stop::Event)
                .find(|&stop| normalize_state(&self.tree.state(stop)) == first)
                .expect("every state asked about is one of the run's");
            for step in &prefix.steps[1..] {
                at = self
                    .tree
                    .step(at, step.action.expect("every later step has its action"), &mut set);
            }
            let state = match prefix.direction {
                Direction::Forward if action == Action::StepInto => {
                    Ok(self.tree.state(self.tree.step(at, action, &mut set)))
                }
                Direction::Inverse => {
                    let draw = if sampling.temperature == 0.0 {
                        0
                    } else {
                        sampling.seed as usize
                    };
                    let event = self
                        .backwards
                        .get(draw)
                        .ok_or_else(|| anyhow::anyhow!("no more candidates"))?;
                    Ok(self.tree.state(Stop::Event(*event)))
                }
                Direction::Forward => Err("asked directly".to_owned()),
            };
            Ok(Prediction {
                text: String::new(),
                state,
                tokens: 1,
                bounds_dropped: false,
            })
        }
    }

    #[test]
    fn with_every_step_into_right_the_walk_answers_every_multi_event_action() {
        let (tree, code) = calls_and_a_raise();
        let facts = CodeFacts::new(code);
        let mut engine = Stepwise::new(Box::new(Oracle::new(tree.clone()))).with_max_steps(tree.len());
        let mut answered = 0;
        for i in 1..tree.len() {
            let at = Stop::Event(i);
            let prefix = route_trajectory(&tree, code, at, Action::StepOver);
            for action in [Action::StepOver, Action::StepReturn, Action::Breakpoint(12)] {
                if StopRule::new(facts.as_ref(), &tree.state(at), action, &BTreeSet::new()).is_none() {
                    continue;
                }
                let answer = engine
                    .answer(&prefix, action, None, &Sampling::default(), &mut |_| {})
                    .unwrap();
                let truth = tree.state(tree.step(at, action, &mut BTreeSet::new()));
                assert_eq!(answer.state, Ok(truth), "{action} from event {i}");
                answered += 1;
            }
        }
        assert!(answered > 30, "{answered}");

        // A walk cut short asks the rest directly (here: from the module's next line).
        let mut short = Stepwise::new(Box::new(Oracle::new(tree.clone()))).with_max_steps(2);
        let prefix = route_trajectory(&tree, code, Stop::Event(3), Action::StepOver);
        let answer = short
            .answer(&prefix, Action::StepOver, None, &Sampling::default(), &mut |_| {})
            .unwrap();
        assert_eq!(answer.state, Err("asked directly".to_owned()));
        assert_eq!(answer.tokens, 3, "two steps into, then the direct question");
    }

    /// The playground's path: a question prepared from the real run reaches a stepwise
    /// engine as the route to the stop, with the breakpoints the page has set.
    #[test]
    fn the_playgrounds_question_walks_the_route_with_the_pages_breakpoints() {
        let (tree, code) = calls_and_a_raise();
        let model = crate::service::LoadedModel::new(Box::new(Oracle::new(tree.clone())));
        // `a = f(1)` (event 3), step over, with a breakpoint on g's `return x + 1`.
        let question = crate::predict::Question {
            at_event: 3,
            action: Action::StepOver,
            samples: 1,
            breakpoints: BTreeSet::from([7]),
        };
        let prepared = crate::predict::prepare(&model, tree.trace().clone(), code, question).unwrap();
        assert_eq!(prepared.actual().line, Some(7), "the breakpoint stops the step");
        let (tokens, _rx) = tokio::sync::mpsc::channel(64);
        let never = tokio_util::sync::CancellationToken::new();
        let mut engine = Stepwise::new(Box::new(Oracle::new(tree)));
        let answers = crate::predict::generate(&mut engine, &prepared, &tokens, &never).unwrap();
        assert!(answers[0].matches, "{:?}", answers[0]);
        assert_eq!(answers[0].tokens, 5, "f's call, its line, g's call, its two lines");
    }

    #[test]
    fn a_step_back_is_the_first_candidate_whose_step_forward_leads_back() {
        let (tree, code) = calls_and_a_raise();
        // From g's `return x + 1` (event 8) back one step: g's `if` (event 7).
        let later = Trajectory {
            code: code.to_owned(),
            direction: Direction::Inverse,
            steps: vec![Step {
                action: None,
                state: tree.state(Stop::Event(8)),
            }],
        };
        let back = |candidates: Vec<usize>| {
            let mut oracle = Oracle::new(tree.clone());
            oracle.backwards = candidates;
            Stepwise::new(Box::new(oracle))
                .answer(&later, Action::ReverseStepInto, None, &Sampling::default(), &mut |_| {})
                .unwrap()
        };
        // Greedy: g's call, which steps forward to the `if`; then the module's `a = f(1)`;
        // then the right one.
        let answer = back(vec![6, 3, 7]);
        assert_eq!(answer.state, Ok(tree.state(Stop::Event(7))));
        assert_eq!(answer.tokens, 6, "three candidates, each stepped forward");
        // No candidate leads back: the greedy one stays.
        let answer = back(vec![6, 3, 2, 1, 7]);
        assert_eq!(answer.state, Ok(tree.state(Stop::Event(6))));
        assert_eq!(answer.tokens, 2 * BACK_CANDIDATES);
    }

    #[test]
    fn single_events_backward_steps_and_generator_frames_are_asked_directly() {
        let state = |event, depth, function: &str, line| State {
            event,
            line: Some(line),
            function: Some(function.to_owned()),
            depth: Some(depth),
            locals: None,
            globals: None,
            value: None,
        };
        let code = "def gen():\n    yield 1\n    yield 2\nfor v in gen():\n    print(v)\n";
        let facts = CodeFacts::new(code);
        let none = BTreeSet::new();
        let module = state(StopKind::Line, 0, "<module>", 4);
        assert!(StopRule::new(facts.as_ref(), &module, Action::StepInto, &none).is_none());
        assert!(StopRule::new(facts.as_ref(), &module, Action::ReverseStepOver, &none).is_none());
        assert!(StopRule::new(facts.as_ref(), &module, Action::Jump(3), &none).is_none());
        assert!(StopRule::new(facts.as_ref(), &module, Action::StepOver, &none).is_some());
        let in_generator = state(StopKind::Line, 1, "gen", 2);
        assert!(StopRule::new(facts.as_ref(), &in_generator, Action::StepOver, &none).is_none());
        assert!(StopRule::new(facts.as_ref(), &in_generator, Action::Continue, &none).is_some());
        let returning = state(StopKind::Return, 1, "gen", 2);
        assert!(StopRule::new(facts.as_ref(), &returning, Action::StepReturn, &none).is_none());
    }
}
