//! Real code for the corpus: functions of permissively licensed packages (`--pypi`,
//! see [`super::pypi`]) and of the standard library (`--stdlib`, see [`super::stdlib`]),
//! each copied into a program together with the helpers, constants, classes and imports
//! it needs, and called with arguments that make sense for its parameters
//! ([`arguments`]) or with the examples of its own docstring.
//!
//! Deterministic: modules and their functions are read in name order, and call `k` of a
//! function draws its arguments from a generator seeded by the corpus seed, the
//! function's qualified name and `k`.

pub mod arguments;
mod classes;
pub mod module;
mod nodes;
pub mod values;

use std::collections::{BTreeMap, HashSet};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

use self::arguments::Kind;
use self::module::{Def, DefKind, Module, Signature, doctest_calls};
use self::values::Value;
use super::generator::Program;

/// Bodies longer than this make traces too long for the model's context.
pub const MAX_FUNCTION_LINES: usize = 40;
/// The whole program (imports, helpers, the function and its call).
pub const MAX_PROGRAM_LINES: usize = 100;
/// Programs made per function: its docstring's examples first, then generated inputs.
pub const CALLS_PER_FUNCTION: usize = 3;
/// Marks real-function programs in `programs.jsonl` (generated ones are levels 0..=MAX).
pub const REAL_LEVEL: u8 = u8::MAX;

/// Modules whose import makes a run depend on the machine, the clock or chance.
const NONDETERMINISTIC_MODULES: &[&str] = &[
    "random",
    "time",
    "uuid",
    "secrets",
    "socket",
    "threading",
    "subprocess",
    "tempfile",
    "multiprocessing",
];

/// Builtins whose call (`open()`) or names whose attribute access (`os.environ`) makes a
/// run depend on the machine, the clock or the outside world.
const NONDETERMINISTIC: &[&str] = &[
    "open()",
    "input()",
    "id()",
    "exit()",
    "globals()",
    "locals()",
    "exec()",
    "eval()",
    "compile()",
    "__import__()",
    "breakpoint()",
    "random",
    "time",
    "now",
    "today",
    "environ",
    "getenv",
    "getcwd",
    "listdir",
    "scandir",
    "stat",
    "lstat",
    "walk",
    "stdin",
    "stdout",
    "stderr",
    "argv",
    "urandom",
    "getpid",
    "sleep",
    "setrecursionlimit",
    "gc",
    "weakref",
];

/// Where a real program's function comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    Pypi,
    Stdlib,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pypi => "pypi",
            Self::Stdlib => "stdlib",
        }
    }
}

/// One program made from a real function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealProgram {
    pub program: Program,
    pub origin: Origin,
    /// `module:function` (or `module:Class`): the programs of one function share it
    /// (and their split).
    pub function: String,
    /// Made from a class (construct, then call its methods) rather than a function.
    pub is_class: bool,
}

/// The programs made from one source, and how many functions it offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Harvest {
    pub origin: Origin,
    pub programs: Vec<RealProgram>,
    /// One line per skipped archive or module (license, format, unreadable).
    pub notes: Vec<String>,
    /// Archives (wheels) or modules read.
    pub archives_used: u64,
    /// Top-level functions seen, eligible or not.
    pub functions_seen: u64,
    /// Functions that became at least one program.
    pub functions_eligible: u64,
    /// Top-level classes seen, and those that became programs.
    pub classes_seen: u64,
    pub classes_eligible: u64,
}

impl Harvest {
    pub fn new(origin: Origin) -> Self {
        Self {
            origin,
            programs: Vec::new(),
            notes: Vec::new(),
            archives_used: 0,
            functions_seen: 0,
            functions_eligible: 0,
            classes_seen: 0,
            classes_eligible: 0,
        }
    }
}

/// How calls get their arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Arguments {
    /// From annotations, names, defaults and docstrings, plus the docstring's examples.
    #[default]
    Inferred,
    /// One call with arguments drawn at random, guided only by a few names (the first
    /// `--pypi`'s way, kept to measure against).
    Random,
}

/// How to harvest a set of modules.
pub struct Options<'a> {
    pub seed: u64,
    pub arguments: Arguments,
    /// Imports of these top-level packages are copied in from the set instead of kept
    /// (a wheel's own package is not installed in the sandbox).
    pub inline_packages: HashSet<String>,
    /// A per-module kind for a parameter (`module`, `function`, `param`).
    pub hint: &'a dyn Fn(&str, &str, &str) -> Option<Kind>,
    /// Functions left out by name (`module`, `function`).
    pub skip: &'a dyn Fn(&str, &str) -> bool,
}

impl Options<'static> {
    /// A package's options: its own `packages` are copied in, no hints, nothing skipped.
    pub fn package(seed: u64, arguments: Arguments, packages: HashSet<String>) -> Self {
        Self {
            seed,
            arguments,
            inline_packages: packages,
            hint: &|_, _, _| None,
            skip: &|_, _| false,
        }
    }
}

/// Adds the programs of every eligible top-level function of `modules` to `out`.
pub fn harvest(modules: &[Module], options: &Options<'_>, out: &mut Harvest) {
    let index: BTreeMap<&str, &Module> = modules.iter().map(|m| (m.name.as_str(), m)).collect();
    for module in index.values() {
        for def in &module.defs {
            // A name defined twice counts once, as Python keeps the last.
            if def.kind == DefKind::Assignment || !module.def(&def.name).is_some_and(|last| std::ptr::eq(last, def)) {
                continue;
            }
            let is_class = def.kind == DefKind::Class;
            if is_class {
                out.classes_seen += 1;
            } else {
                out.functions_seen += 1;
            }
            // The first version's random arguments had no classes.
            if (options.skip)(&module.name, &def.name) || (is_class && options.arguments == Arguments::Random) {
                continue;
            }
            let site = Site {
                index: &index,
                module,
                def,
            };
            let programs = if is_class {
                classes::class_programs(site, options, out.origin)
            } else {
                function_programs(site, options, out.origin)
            };
            if programs.is_empty() {
                continue;
            }
            if is_class {
                out.classes_eligible += 1;
            } else {
                out.functions_eligible += 1;
            }
            out.programs.extend(programs);
        }
    }
}

/// A definition to make programs from, with its module and the modules around it.
#[derive(Clone, Copy)]
struct Site<'a> {
    index: &'a BTreeMap<&'a str, &'a Module>,
    module: &'a Module,
    def: &'a Def,
}

fn function_programs(site: Site<'_>, options: &Options<'_>, origin: Origin) -> Vec<RealProgram> {
    let Site { index, module, def } = site;
    let Some(signature) = &def.signature else {
        return Vec::new();
    };
    let first_param = signature.params.first().map(|p| p.name.as_str());
    let entry_point = !signature.is_async
        && !def.name.starts_with("__")
        && !def.name.starts_with("test")
        && !def.name.starts_with("_test")
        && def.name != "main"
        && !matches!(first_param, None | Some("self" | "cls"))
        && def.text.lines().count() <= MAX_FUNCTION_LINES;
    if !entry_point {
        return Vec::new();
    }
    let mut kinds: Vec<Kind> = signature
        .params
        .iter()
        .map(|p| arguments::infer(p, &signature.doc, (options.hint)(&module.name, &def.name, &p.name)))
        .collect();
    // Trees and linked lists are built from a node class of the package, copied in too.
    let mut builders: Vec<(&Module, &Def)> = Vec::new();
    for kind in &mut kinds {
        if matches!(kind, Kind::Nodes { .. }) {
            match nodes::class_for(index, module, kind) {
                Some((resolved, class_module, class)) => {
                    *kind = resolved;
                    builders.push((class_module, class));
                }
                None => *kind = Kind::Unbuildable,
            }
        }
    }
    if options.arguments == Arguments::Random {
        builders.clear();
    }
    let Ok(body) = assemble(index, module, def, &builders, &options.inline_packages) else {
        return Vec::new();
    };
    let used: HashSet<&str> = body.bound.iter().map(String::as_str).collect();
    if NONDETERMINISTIC.iter().any(|word| body.reached.contains(*word)) {
        return Vec::new();
    }
    let qualified = format!("{}:{}", module.name, def.name);
    let calls = match options.arguments {
        Arguments::Inferred => inferred_calls(def, signature, &kinds, options.seed, &qualified, &used),
        Arguments::Random => random_call(def, signature, options.seed ^ name_hash(&qualified))
            .into_iter()
            .collect(),
    };
    calls
        .into_iter()
        .filter(|(_, call)| body.lines + call.lines().count() <= MAX_PROGRAM_LINES)
        .map(|(seed, call)| RealProgram {
            program: Program {
                source: format!("{}\n\n{call}\n", body.text),
                seed,
                level: REAL_LEVEL,
            },
            origin,
            function: qualified.clone(),
            is_class: false,
        })
        .collect()
}

/// Up to [`CALLS_PER_FUNCTION`] calls: the docstring's examples, then generated inputs.
fn inferred_calls(
    def: &Def,
    signature: &Signature,
    kinds: &[Kind],
    seed: u64,
    qualified: &str,
    bound: &HashSet<&str>,
) -> Vec<(u64, String)> {
    let required =
        |(p, k): (&module::Param, &Kind)| p.default.is_none() && matches!(k, Kind::Default | Kind::Unbuildable);
    if signature.params.iter().zip(kinds).any(required) {
        return Vec::new();
    }
    let wrap = |call: String| {
        let call = if signature.is_generator {
            format!("list({call})")
        } else {
            call
        };
        let result = if bound.contains("result") { "answer" } else { "result" };
        format!("{result} = {call}\nprint(repr({result}))")
    };
    let base = seed ^ name_hash(qualified);
    let mut calls: Vec<(u64, String)> = Vec::new();
    for (k, example) in doctest_calls(&signature.doc, &def.name).into_iter().enumerate() {
        if calls.len() + 1 < CALLS_PER_FUNCTION {
            calls.push((base ^ k as u64, wrap(example)));
        }
    }
    let mut attempt = 0u64;
    while calls.len() < CALLS_PER_FUNCTION && attempt < 2 * CALLS_PER_FUNCTION as u64 {
        let seed = base.wrapping_add(0x9e37_79b9 * (attempt + 1));
        attempt += 1;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut values = values::draw(kinds, &mut rng);
        // A default is sometimes replaced by a value of its own type, so that other
        // paths of the function get run too.
        for (value, (param, kind)) in values.iter_mut().zip(signature.params.iter().zip(kinds)) {
            if param.default.is_some() && !(arguments::default_agrees(param, kind) && rng.random_bool(0.3)) {
                *value = None;
            }
        }
        let call = render_call(&def.name, &signature.params, &values, bound);
        let Some(call) = call else { continue };
        let program = wrap(call.1);
        let text = format!("{}{program}", call.0);
        if !calls.iter().any(|(_, c)| *c == text) {
            calls.push((seed, text));
        }
    }
    calls
}

/// (setup lines, call expression): containers get a variable named after the parameter.
fn render_call(
    name: &str,
    params: &[module::Param],
    values: &[Option<Value>],
    bound: &HashSet<&str>,
) -> Option<(String, String)> {
    let mut setup = String::new();
    let mut args = Vec::new();
    for (param, value) in params.iter().zip(values) {
        let Some(value) = value else {
            // A required parameter must get a value; a default may stay.
            param.default.as_ref()?;
            continue;
        };
        let free = |name: &str| {
            !bound.contains(name) && !super::dedup::is_kept_name(name) && !matches!(name, "result" | "answer" | "tail")
        };
        // Containers get a variable; nodes need statements, under another name where
        // the parameter's is taken.
        let nodes = matches!(value, Value::Nodes { .. });
        let text = if value.is_container() && (nodes || free(&param.name)) {
            let name = if free(&param.name) {
                param.name.clone()
            } else {
                format!("my_{}", param.name)
            };
            setup.push_str(&value.build(&name));
            name
        } else {
            value.render()
        };
        args.push(keyword(params, param, args.len(), text));
    }
    Some((setup, format!("{name}({})", args.join(", "))))
}

/// `text`, or `name=text` after a skipped default (later arguments must then name their
/// parameter).
fn keyword(params: &[module::Param], param: &module::Param, passed: usize, text: String) -> String {
    let before = params.iter().take_while(|p| !std::ptr::eq(*p, param)).count();
    if !param.keyword_only && passed == before {
        text
    } else {
        format!("{}={text}", param.name)
    }
}

/// The old way: required positional parameters only, one call, arguments from a few names.
fn random_call(def: &Def, signature: &Signature, seed: u64) -> Option<(u64, String)> {
    let params: Vec<&str> = signature
        .params
        .iter()
        .filter(|p| p.default.is_none())
        .map(|p| p.name.as_str())
        .collect();
    if params.is_empty() || signature.params.iter().any(|p| p.keyword_only && p.default.is_none()) {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let args: Vec<String> = params.iter().map(|p| random_argument(p, &mut rng)).collect();
    Some((seed, format!("print(repr({}({})))", def.name, args.join(", "))))
}

const RANDOM_WORDS: [&str; 8] = ["ab", "cat", "xyz", "hello", "q", "level", "go", "a b"];

fn random_argument(param: &str, rng: &mut ChaCha8Rng) -> String {
    let word = |rng: &mut ChaCha8Rng| format!("{:?}", RANDOM_WORDS[rng.random_range(0..RANDOM_WORDS.len())]);
    let list = |rng: &mut ChaCha8Rng| {
        let len = rng.random_range(0..6);
        let items: Vec<String> = if rng.random_bool(0.7) {
            (0..len).map(|_| rng.random_range(-3..10).to_string()).collect()
        } else {
            (0..len).map(|_| word(rng)).collect()
        };
        format!("[{}]", items.join(", "))
    };
    let lower = param.to_ascii_lowercase();
    match lower.as_str() {
        "n" | "k" | "i" | "j" | "m" | "size" | "count" | "times" | "width" | "index" | "start" | "stop" | "step"
        | "num" | "number" | "length" => rng.random_range(0..6).to_string(),
        "s" | "text" | "string" | "word" | "name" | "sep" | "prefix" | "suffix" | "char" | "line" => word(rng),
        "func" | "function" | "key" | "pred" | "predicate" => ["bool", "str", "abs"][rng.random_range(0..3)].to_owned(),
        _ if lower.starts_with("it") || lower.starts_with("seq") || lower.ends_with('s') || lower == "data" => {
            list(rng)
        }
        _ => match rng.random_range(0..3) {
            0 => rng.random_range(-3..10).to_string(),
            1 => word(rng),
            _ => list(rng),
        },
    }
}

/// A function with everything it needs, ready to be called.
struct Body {
    text: String,
    lines: usize,
    /// Names the program binds at the top level.
    bound: Vec<String>,
    /// Every name the copied code calls or reaches through (see [`module::Def::reached`]).
    reached: HashSet<String>,
}

/// The function `def` of `module` with the imports, helpers, constants and classes it
/// uses, dependencies first. `Err` names what cannot be copied.
fn assemble<'a>(
    index: &'a BTreeMap<&'a str, &'a Module>,
    module: &'a Module,
    def: &'a Def,
    extra: &[(&'a Module, &'a Def)],
    inline: &'a HashSet<String>,
) -> Result<Body, String> {
    let mut assembly = Assembly {
        index,
        inline,
        visited: HashSet::new(),
        imports: Vec::new(),
        defs: Vec::new(),
        bound: Vec::new(),
        reached: HashSet::new(),
        futures: Vec::new(),
    };
    for &(extra_module, extra_def) in extra {
        assembly.visit(extra_module, extra_def)?;
    }
    assembly.visit(module, def)?;
    let mut text = String::new();
    for import in assembly.futures.iter().chain(&assembly.imports) {
        text.push_str(import);
        text.push('\n');
    }
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(&assembly.defs.join("\n\n\n"));
    Ok(Body {
        lines: text.lines().count() + 2,
        text,
        bound: assembly.bound,
        reached: assembly.reached,
    })
}

struct Assembly<'a> {
    index: &'a BTreeMap<&'a str, &'a Module>,
    inline: &'a HashSet<String>,
    visited: HashSet<(String, String)>,
    imports: Vec<String>,
    defs: Vec<String>,
    bound: Vec<String>,
    reached: HashSet<String>,
    /// `from __future__` imports of every module copied from (they change how its
    /// annotations are read).
    futures: Vec<String>,
}

impl<'a> Assembly<'a> {
    fn visit(&mut self, module: &'a Module, def: &'a Def) -> Result<(), String> {
        if !self.visited.insert((module.name.clone(), def.name.clone())) {
            return Ok(());
        }
        if self.visited.len() > 12 {
            return Err("too many helpers".into());
        }
        for name in &def.uses {
            if *name != def.name {
                self.resolve(module, name)?;
            }
        }
        for future in module.imports.iter().filter(|i| i.future) {
            if !self.futures.contains(&future.text) {
                self.futures.push(future.text.clone());
            }
        }
        self.bound.push(def.name.clone());
        self.reached.extend(def.reached.iter().cloned());
        if !self.defs.contains(&def.text) {
            self.defs.push(def.text.clone());
        }
        Ok(())
    }

    fn resolve(&mut self, module: &'a Module, name: &str) -> Result<(), String> {
        if let Some(def) = module.def(name) {
            return self.visit(module, def);
        }
        let Some((import, target, item)) = module.import_of(name) else {
            // A builtin, a local or a parameter.
            return Ok(());
        };
        let package = target.split('.').next().unwrap_or_default();
        if NONDETERMINISTIC_MODULES.contains(&package) {
            return Err(format!("{name} comes from {target}"));
        }
        if !self.inline.contains(package) {
            if !self.imports.contains(&import.text) {
                self.imports.push(import.text.clone());
                self.bound.push(name.to_owned());
            }
            return Ok(());
        }
        let (Some(item), Some(&source)) = (item, self.index.get(target)) else {
            return Err(format!("{name} is a module of the package"));
        };
        match source.def(item) {
            Some(def) => self.visit(source, def),
            // Re-exported by a package's `__init__`.
            None if source.import_of(item).is_some() => self.resolve(source, item),
            None => Err(format!("{target} has no {item}")),
        }
    }
}

pub(crate) fn name_hash(text: &str) -> u64 {
    let digest = Sha256::digest(text.as_bytes());
    u64::from_le_bytes(digest[..8].try_into().expect("a SHA-256 has 32 bytes"))
}

#[cfg(test)]
mod tests;
