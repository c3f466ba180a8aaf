//! Random valid, terminating Python programs for the neural debugger's training corpus.
//!
//! Programs are built from typed templates, so every generated program parses, every
//! name is bound before it is read, and every loop terminates by construction:
//! `for` loops run over bounded ranges or over lists that only grow inside other
//! bounded loops, `while` loops count a dedicated variable down, and recursion
//! descends on a small non-negative argument. A [`Curriculum`] level scales the number
//! of statements, the nesting depth and which features appear (level 0: straight-line
//! arithmetic; higher levels add loops, calls, recursion, exceptions, classes).
//!
//! The same seed always gives the same program ([`ChaCha8Rng`] is stable across
//! platforms and releases).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How big and how feature-rich programs are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Curriculum {
    /// 0 (smallest) to [`Curriculum::MAX_LEVEL`].
    pub level: u8,
}

impl Curriculum {
    pub const MAX_LEVEL: u8 = 4;

    fn statements(self) -> usize {
        3 + 2 * usize::from(self.level)
    }

    fn max_nesting(self) -> usize {
        1 + usize::from(self.level.min(3))
    }

    fn has(self, feature: Feature) -> bool {
        self.level >= feature.min_level()
    }
}

#[derive(Debug, Clone, Copy)]
enum Feature {
    Loops,
    Lists,
    Helpers,
    Strings,
    Dicts,
    While,
    Recursion,
    Exceptions,
    Classes,
}

impl Feature {
    fn min_level(self) -> u8 {
        match self {
            Self::Loops | Self::Lists => 1,
            Self::Helpers | Self::Strings => 2,
            Self::Dicts | Self::While | Self::Recursion => 3,
            Self::Exceptions | Self::Classes => 4,
        }
    }
}

/// The types the generator keeps track of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Int,
    Str,
    List,
    Dict,
}

#[derive(Debug, Clone)]
struct Var {
    name: String,
    ty: Ty,
    /// Loop counters and parameters a loop depends on: never reassigned.
    frozen: bool,
}

/// A generated program: the source and the function a harness could call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub source: String,
    pub seed: u64,
    pub level: u8,
}

/// Generates the program for `seed` at `curriculum` level.
pub fn generate(seed: u64, curriculum: Curriculum) -> Program {
    let mut g = Gen {
        rng: ChaCha8Rng::seed_from_u64(seed),
        out: String::new(),
        counter: 0,
        curriculum,
    };
    g.program();
    Program {
        source: g.out,
        seed,
        level: curriculum.level,
    }
}

struct Gen {
    rng: ChaCha8Rng,
    out: String,
    counter: usize,
    curriculum: Curriculum,
}

const INT_NAMES: [&str; 8] = ["a", "b", "n", "k", "total", "count", "acc", "value"];
const STR_NAMES: [&str; 4] = ["s", "text", "word", "label"];
const LIST_NAMES: [&str; 4] = ["xs", "items", "nums", "out"];
const DICT_NAMES: [&str; 3] = ["seen", "counts", "table"];
const WORDS: [&str; 8] = ["ab", "cat", "xyz", "hello", "q", "level", "go", "tree"];

impl Gen {
    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.rng.random_range(0..items.len())]
    }

    fn fresh(&mut self, ty: Ty) -> String {
        self.counter += 1;
        let base = match ty {
            Ty::Int => *self.pick(&INT_NAMES),
            Ty::Str => *self.pick(&STR_NAMES),
            Ty::List => *self.pick(&LIST_NAMES),
            Ty::Dict => *self.pick(&DICT_NAMES),
        };
        format!("{base}{}", self.counter)
    }

    fn line(&mut self, indent: usize, text: &str) {
        for _ in 0..indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn program(&mut self) {
        let c = self.curriculum;
        let mut helpers: Vec<(String, usize)> = Vec::new();
        if c.has(Feature::Classes) && self.chance(0.4) {
            self.class_def();
        }
        if c.has(Feature::Recursion) && self.chance(0.5) {
            helpers.push((self.recursive_def(), 1));
        }
        if c.has(Feature::Helpers) {
            let n = self.rng.random_range(0..=2);
            for _ in 0..n {
                let h = self.helper_def();
                helpers.push(h);
            }
        }
        // The main function, CruxEval style: `def f(...)`, called at module level.
        let params = self.params();
        let sig: Vec<&str> = params.iter().map(|v| v.name.as_str()).collect();
        self.line(0, &format!("def f({}):", sig.join(", ")));
        let mut scope = params.clone();
        let statements = c.statements();
        self.block(1, &mut scope, statements, 0, &helpers);
        let ret = self.expr_any(&scope, 2);
        self.line(1, &format!("return {ret}"));
        self.out.push_str("\n\n");
        let args: Vec<String> = params.iter().map(|p| self.literal(p.ty)).collect();
        self.line(0, &format!("result = f({})", args.join(", ")));
        if self.chance(0.5) {
            self.line(0, "print(result)");
        }
    }

    fn params(&mut self) -> Vec<Var> {
        let n = self.rng.random_range(1..=3);
        (0..n)
            .map(|_| {
                let ty = self.param_ty();
                Var {
                    name: self.fresh(ty),
                    ty,
                    frozen: false,
                }
            })
            .collect()
    }

    fn param_ty(&mut self) -> Ty {
        let c = self.curriculum;
        let mut tys = vec![Ty::Int, Ty::Int];
        if c.has(Feature::Lists) {
            tys.push(Ty::List);
        }
        if c.has(Feature::Strings) {
            tys.push(Ty::Str);
        }
        *self.pick(&tys)
    }

    fn literal(&mut self, ty: Ty) -> String {
        match ty {
            Ty::Int => self.rng.random_range(-5..=12).to_string(),
            Ty::Str => format!("{:?}", self.pick(&WORDS)),
            Ty::List => {
                let n = self.rng.random_range(0..=5);
                let items: Vec<String> = (0..n).map(|_| self.rng.random_range(-3..=9).to_string()).collect();
                format!("[{}]", items.join(", "))
            }
            Ty::Dict => "{}".to_owned(),
        }
    }

    fn helper_def(&mut self) -> (String, usize) {
        self.counter += 1;
        let name = format!(
            "{}{}",
            self.pick(&["step", "mix", "scale", "clip", "combine"]),
            self.counter
        );
        let arity = self.rng.random_range(1..=2);
        let params: Vec<Var> = (0..arity)
            .map(|_| Var {
                name: self.fresh(Ty::Int),
                ty: Ty::Int,
                frozen: false,
            })
            .collect();
        let sig: Vec<&str> = params.iter().map(|v| v.name.as_str()).collect();
        self.line(0, &format!("def {name}({}):", sig.join(", ")));
        let mut scope = params.clone();
        let n = 1 + usize::from(self.curriculum.level / 2);
        self.block(1, &mut scope, n, 1, &[]);
        if self.curriculum.has(Feature::Exceptions) && self.chance(0.3) {
            let v = &params[0].name;
            let limit = self.rng.random_range(5..=20);
            self.line(1, &format!("if {v} > {limit}:"));
            self.line(2, &format!("raise ValueError(\"too big: \" + str({v}))"));
        }
        let ret = self.expr(Ty::Int, &scope, 2);
        self.line(1, &format!("return {ret}"));
        self.out.push_str("\n\n");
        (name, arity)
    }

    fn recursive_def(&mut self) -> String {
        self.counter += 1;
        let name = format!("rec{}", self.counter);
        let (op, base) = self.pick(&[("+", "0"), ("*", "1"), ("+", "1"), ("-", "0")]).to_owned();
        self.line(0, &format!("def {name}(n):"));
        self.line(1, "if n <= 0:");
        self.line(2, &format!("return {base}"));
        let term = self.pick(&["n", "n % 3", "2 * n", "n - 1"]).to_owned();
        self.line(1, &format!("return {term} {op} {name}(n - 1)"));
        self.out.push_str("\n\n");
        name
    }

    fn class_def(&mut self) {
        self.line(0, "class Counter:");
        self.line(1, "def __init__(self, start):");
        self.line(2, "self.value = start");
        self.line(2, "self.history = []");
        self.line(0, "");
        self.line(1, "def add(self, k):");
        self.line(2, "self.history.append(k)");
        let update = self
            .pick(&["self.value + k", "self.value * 2 - k", "max(self.value, k)"])
            .to_owned();
        self.line(2, &format!("self.value = {update}"));
        self.line(2, "return self.value");
        self.out.push_str("\n\n");
    }

    fn vars_of(scope: &[Var], ty: Ty) -> Vec<&Var> {
        scope.iter().filter(|v| v.ty == ty).collect()
    }

    fn block(&mut self, indent: usize, scope: &mut Vec<Var>, n: usize, depth: usize, helpers: &[(String, usize)]) {
        let mut emitted = 0;
        while emitted < n.max(1) {
            self.statement(indent, scope, depth, helpers);
            emitted += 1;
        }
    }

    fn statement(&mut self, indent: usize, scope: &mut Vec<Var>, depth: usize, helpers: &[(String, usize)]) {
        let c = self.curriculum;
        let nest_ok = depth + 1 < c.max_nesting();
        let roll = self.rng.random_range(0..100);
        match roll {
            0..=14 if c.has(Feature::Loops) && nest_ok => self.for_loop(indent, scope, depth, helpers),
            15..=22 if c.has(Feature::While) && nest_ok => self.while_loop(indent, scope, depth, helpers),
            23..=34 if nest_ok => self.if_stmt(indent, scope, depth, helpers),
            35..=42 if c.has(Feature::Exceptions) && nest_ok => self.try_stmt(indent, scope, depth, helpers),
            43..=50 if !helpers.is_empty() => {
                let call = self.helper_call(scope, helpers);
                self.assign_new(indent, scope, Ty::Int, &call);
            }
            51..=56 if c.has(Feature::Classes) && self.out.contains("class Counter") => {
                let obj = format!("c{}", self.counter + 1);
                self.counter += 1;
                let start = self.expr(Ty::Int, scope, 1);
                self.line(indent, &format!("{obj} = Counter({start})"));
                let k = self.expr(Ty::Int, scope, 1);
                let target = self.fresh(Ty::Int);
                self.line(indent, &format!("{target} = {obj}.add({k})"));
                scope.push(Var {
                    name: target,
                    ty: Ty::Int,
                    frozen: false,
                });
            }
            57..=64 if c.has(Feature::Lists) => {
                let lists: Vec<Var> = Self::vars_of(scope, Ty::List).into_iter().cloned().collect();
                if lists.is_empty() {
                    let lit = self.literal(Ty::List);
                    self.assign_new(indent, scope, Ty::List, &lit);
                } else {
                    let l = self.pick(&lists).name.clone();
                    let e = self.expr(Ty::Int, scope, 1);
                    self.line(indent, &format!("{l}.append({e})"));
                }
            }
            65..=69 if c.has(Feature::Dicts) => {
                let dicts: Vec<Var> = Self::vars_of(scope, Ty::Dict).into_iter().cloned().collect();
                if dicts.is_empty() {
                    self.assign_new(indent, scope, Ty::Dict, "{}");
                } else {
                    let d = self.pick(&dicts).name.clone();
                    let key = self.expr(Ty::Str, scope, 1);
                    let e = self.expr(Ty::Int, scope, 1);
                    self.line(indent, &format!("{d}[{key}] = {d}.get({key}, 0) + {e}"));
                }
            }
            _ => {
                let mutable: Vec<Var> = scope.iter().filter(|v| !v.frozen && v.ty == Ty::Int).cloned().collect();
                if !mutable.is_empty() && self.chance(0.5) {
                    let v = self.pick(&mutable).name.clone();
                    let e = self.expr(Ty::Int, scope, 2);
                    let op = self.pick(&["=", "+=", "-="]).to_owned();
                    self.line(indent, &format!("{v} {op} {e}"));
                } else {
                    let ty = if self.curriculum.has(Feature::Strings) && self.chance(0.25) {
                        Ty::Str
                    } else {
                        Ty::Int
                    };
                    let e = self.expr(ty, scope, 2);
                    self.assign_new(indent, scope, ty, &e);
                }
            }
        }
    }

    /// A call of a helper; recursive helpers get a small non-negative argument so that
    /// the recursion stays shallow.
    fn helper_call(&mut self, scope: &[Var], helpers: &[(String, usize)]) -> String {
        let (name, arity) = self.pick(helpers).clone();
        let args: Vec<String> = (0..arity)
            .map(|_| {
                let e = self.expr(Ty::Int, scope, 1);
                if name.starts_with("rec") {
                    format!("min(abs({e}), 6)")
                } else {
                    e
                }
            })
            .collect();
        format!("{name}({})", args.join(", "))
    }

    fn assign_new(&mut self, indent: usize, scope: &mut Vec<Var>, ty: Ty, value: &str) {
        let name = self.fresh(ty);
        self.line(indent, &format!("{name} = {value}"));
        scope.push(Var {
            name,
            ty,
            frozen: false,
        });
    }

    fn for_loop(&mut self, indent: usize, scope: &[Var], depth: usize, helpers: &[(String, usize)]) {
        let var = format!("i{}", self.counter + 1);
        self.counter += 1;
        let lists: Vec<Var> = Self::vars_of(scope, Ty::List).into_iter().cloned().collect();
        let header = if !lists.is_empty() && self.chance(0.5) {
            // Iterate over a snapshot so that appends in the body cannot extend the loop.
            format!("for {var} in list({}):", self.pick(&lists).name)
        } else {
            format!("for {var} in range({}):", self.rng.random_range(1..=5))
        };
        self.line(indent, &header);
        let mut inner = scope.to_vec();
        inner.push(Var {
            name: var,
            ty: Ty::Int,
            frozen: true,
        });
        let n = self.rng.random_range(1..=2);
        self.block(indent + 1, &mut inner, n, depth + 1, helpers);
        // Names bound inside the body may not exist after it (zero iterations).
        drop(inner);
    }

    fn while_loop(&mut self, indent: usize, scope: &mut Vec<Var>, depth: usize, helpers: &[(String, usize)]) {
        let counter = self.fresh(Ty::Int);
        let start = self.rng.random_range(1..=5);
        self.line(indent, &format!("{counter} = {start}"));
        self.line(indent, &format!("while {counter} > 0:"));
        let mut inner = scope.clone();
        inner.push(Var {
            name: counter.clone(),
            ty: Ty::Int,
            frozen: true,
        });
        let n = self.rng.random_range(1..=2);
        self.block(indent + 1, &mut inner, n, depth + 1, helpers);
        self.line(indent + 1, &format!("{counter} -= 1"));
        // Names bound inside the body may not exist after it (zero iterations).
        drop(inner);
        scope.push(Var {
            name: counter,
            ty: Ty::Int,
            frozen: false,
        });
    }

    fn if_stmt(&mut self, indent: usize, scope: &[Var], depth: usize, helpers: &[(String, usize)]) {
        let cond = self.condition(scope);
        self.line(indent, &format!("if {cond}:"));
        let mut then_scope = scope.to_vec();
        self.block(indent + 1, &mut then_scope, 1, depth + 1, helpers);
        if self.chance(0.5) {
            self.line(indent, "else:");
            let mut else_scope = scope.to_vec();
            self.block(indent + 1, &mut else_scope, 1, depth + 1, helpers);
        }
        // Names bound in only one branch are not safe to read afterwards.
    }

    fn try_stmt(&mut self, indent: usize, scope: &mut Vec<Var>, depth: usize, helpers: &[(String, usize)]) {
        let target = self.fresh(Ty::Int);
        self.line(indent, "try:");
        let a = self.expr(Ty::Int, scope, 1);
        let risky = match self.rng.random_range(0..3) {
            0 => {
                let b = self.expr(Ty::Int, scope, 1);
                format!("{a} // ({b})")
            }
            1 if !helpers.is_empty() => self.helper_call(scope, helpers),
            _ => {
                let s = self.expr(Ty::Str, scope, 1);
                format!("int({s})")
            }
        };
        self.line(indent + 1, &format!("{target} = {risky}"));
        let mut body = scope.clone();
        body.push(Var {
            name: target.clone(),
            ty: Ty::Int,
            frozen: false,
        });
        if depth + 2 < self.curriculum.max_nesting() + 1 && self.chance(0.3) {
            self.block(indent + 1, &mut body, 1, depth + 1, helpers);
        }
        self.line(indent, "except (ZeroDivisionError, ValueError) as err:");
        self.line(indent + 1, &format!("{target} = len(str(err))"));
        if self.chance(0.3) {
            self.line(indent, "finally:");
            let e = self.expr(Ty::Int, scope, 1);
            let marker = self.fresh(Ty::Int);
            self.line(indent + 1, &format!("{marker} = {e}"));
            scope.push(Var {
                name: marker,
                ty: Ty::Int,
                frozen: false,
            });
        }
        scope.push(Var {
            name: target,
            ty: Ty::Int,
            frozen: false,
        });
    }

    fn condition(&mut self, scope: &[Var]) -> String {
        let a = self.expr(Ty::Int, scope, 1);
        let b = self.expr(Ty::Int, scope, 1);
        let op = self.pick(&["<", ">", "==", "!=", "<=", ">="]).to_owned();
        let lists = Self::vars_of(scope, Ty::List);
        if !lists.is_empty() && self.chance(0.25) {
            let l = self.pick(&lists).name.clone();
            return format!("{a} in {l}");
        }
        format!("{a} {op} {b}")
    }

    fn expr_any(&mut self, scope: &[Var], depth: usize) -> String {
        let tys: Vec<Ty> = scope.iter().map(|v| v.ty).filter(|t| *t != Ty::Dict).collect();
        let ty = if tys.is_empty() { Ty::Int } else { *self.pick(&tys) };
        self.expr(ty, scope, depth)
    }

    fn expr(&mut self, ty: Ty, scope: &[Var], depth: usize) -> String {
        let vars: Vec<Var> = Self::vars_of(scope, ty).into_iter().cloned().collect();
        if depth == 0 || self.chance(0.35) {
            if !vars.is_empty() && self.chance(0.75) {
                return self.pick(&vars).name.clone();
            }
            return self.literal(ty);
        }
        let d = depth - 1;
        match ty {
            Ty::Int => match self.rng.random_range(0..7) {
                0..=2 => {
                    let a = self.expr(Ty::Int, scope, d);
                    let b = self.expr(Ty::Int, scope, d);
                    let op = self.pick(&["+", "-", "*", "%", "//"]).to_owned();
                    if op == "%" || op == "//" {
                        // A non-zero divisor by construction.
                        format!("({a}) {op} {}", self.rng.random_range(2..=7))
                    } else {
                        format!("({a}) {op} ({b})")
                    }
                }
                3 if !Self::vars_of(scope, Ty::List).is_empty() => {
                    let l = self.pick(&Self::vars_of(scope, Ty::List)).name.clone();
                    match self.rng.random_range(0..3) {
                        0 => format!("len({l})"),
                        1 => format!("sum({l})"),
                        _ => format!("({l}[-1] if {l} else 0)"),
                    }
                }
                4 if !Self::vars_of(scope, Ty::Str).is_empty() => {
                    let s = self.pick(&Self::vars_of(scope, Ty::Str)).name.clone();
                    format!("len({s})")
                }
                5 => {
                    let a = self.expr(Ty::Int, scope, d);
                    let b = self.expr(Ty::Int, scope, d);
                    format!("{}({a}, {b})", self.pick(&["max", "min"]))
                }
                _ => {
                    let a = self.expr(Ty::Int, scope, d);
                    format!("abs({a})")
                }
            },
            Ty::Str => match self.rng.random_range(0..4) {
                0 => {
                    let a = self.expr(Ty::Str, scope, d);
                    let b = self.expr(Ty::Str, scope, d);
                    format!("{a} + {b}")
                }
                1 => {
                    let a = self.expr(Ty::Int, scope, d);
                    format!("str({a})")
                }
                2 => {
                    let a = self.expr(Ty::Str, scope, d);
                    format!("{a}.upper()")
                }
                _ => {
                    let a = self.expr(Ty::Str, scope, d);
                    format!("{a}[::-1]")
                }
            },
            Ty::List => {
                let a = self.expr(Ty::List, scope, d);
                format!("sorted({a})")
            }
            Ty::Dict => "{}".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_program() {
        for level in 0..=Curriculum::MAX_LEVEL {
            let a = generate(42, Curriculum { level });
            let b = generate(42, Curriculum { level });
            assert_eq!(a, b);
            assert_ne!(a.source, generate(43, Curriculum { level }).source);
        }
    }

    #[test]
    fn higher_levels_make_bigger_programs_with_more_features() {
        let lines = |level| {
            (0..40)
                .map(|s| generate(s, Curriculum { level }).source.lines().count())
                .sum::<usize>()
        };
        assert!(
            lines(0) < lines(2) && lines(2) < lines(4),
            "{} {} {}",
            lines(0),
            lines(2),
            lines(4)
        );
        let all: String = (0..60).map(|s| generate(s, Curriculum { level: 4 }).source).collect();
        for feature in ["for ", "while ", "try:", "def rec", "class Counter", "if "] {
            assert!(all.contains(feature), "level 4 never uses `{feature}`");
        }
        let simple: String = (0..60).map(|s| generate(s, Curriculum { level: 0 }).source).collect();
        assert!(!simple.contains("for ") && !simple.contains("while "));
    }
}
