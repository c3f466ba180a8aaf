//! Programs that use a class the way its reader would: construct one, fill it through
//! its adding methods (`push`, `insert`, `add`…), then ask it things with its other
//! public methods, each call's arguments inferred like a function's. Values looked up
//! later (`search(key)`, `remove(item)`) are mostly ones added before.

use std::collections::HashSet;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::arguments::{self, Kind};
use super::module::{Param, Signature};
use super::values::{self, Value};
use super::{CALLS_PER_FUNCTION, MAX_PROGRAM_LINES, NONDETERMINISTIC, Options, Origin, REAL_LEVEL, RealProgram};
use super::{Site, assemble, name_hash, render_call};
use crate::generator::Program;

/// Longer classes make traces too long for the model's context.
const MAX_CLASS_LINES: usize = 80;
/// Method calls after the constructor.
const MAX_METHOD_CALLS: usize = 7;
/// Method names that put something in (called first, and more than once).
const ADDING: &[&str] = &[
    "push",
    "add",
    "insert",
    "put",
    "append",
    "enqueue",
    "offer",
    "set",
    "update",
    "deposit",
    "increment",
    "add_word",
    "add_edge",
    "add_node",
    "add_vertex",
    "next",
    "union",
    "heappush",
];

/// A method an instance can call, with the kinds of its parameters (after `self`).
struct Callable<'a> {
    name: &'a str,
    params: &'a [Param],
    kinds: Vec<Kind>,
    adding: bool,
}

/// The programs made from class `def` of `module` (none when it is not a plain class
/// with public methods whose arguments can be built).
pub(super) fn class_programs(site: Site<'_>, options: &Options<'_>, origin: Origin) -> Vec<RealProgram> {
    let Site { index, module, def } = site;
    let plain = !def.text.starts_with('@')
        && !def.name.starts_with('_')
        && !def.name.starts_with("Test")
        && !def.name.ends_with("Error")
        && !def.name.ends_with("Exception")
        // Abstract classes cannot be constructed.
        && !def.text.contains("abstractmethod")
        && def.text.lines().count() <= MAX_CLASS_LINES;
    if !plain {
        return Vec::new();
    }
    let hint = |param: &str| (options.hint)(&module.name, &def.name, param);
    let constructor = match def.methods.iter().find(|(name, _)| name == "__init__") {
        Some((name, signature)) => match callable(name, signature, &hint) {
            Some(init) => init,
            None => return Vec::new(),
        },
        None => Callable {
            name: "__init__",
            params: &[],
            kinds: Vec::new(),
            adding: false,
        },
    };
    let methods: Vec<Callable<'_>> = def
        .methods
        .iter()
        .filter(|(name, signature)| !name.starts_with('_') && !signature.is_async)
        .filter_map(|(name, signature)| callable(name, signature, &hint))
        .collect();
    if methods.is_empty() {
        return Vec::new();
    }
    let Ok(body) = assemble(index, module, def, &[], &options.inline_packages) else {
        return Vec::new();
    };
    if NONDETERMINISTIC.iter().any(|word| body.reached.contains(*word)) {
        return Vec::new();
    }
    let bound: HashSet<&str> = body.bound.iter().map(String::as_str).collect();
    let instance = snake_case(&def.name);
    let instance = if bound.contains(instance.as_str()) || instance == "tail" {
        "instance".to_owned()
    } else {
        instance
    };
    let qualified = format!("{}:{}", module.name, def.name);
    let base = options.seed ^ name_hash(&qualified);
    let mut programs: Vec<RealProgram> = Vec::new();
    for k in 0..CALLS_PER_FUNCTION as u64 {
        let seed = base.wrapping_add(0x51_7cc1_b727 * (k + 1));
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let Some(script) = script(&def.name, &instance, &constructor, &methods, &bound, &mut rng) else {
            continue;
        };
        if body.lines + script.lines().count() > MAX_PROGRAM_LINES
            || programs
                .iter()
                .any(|p| p.program.source.ends_with(&format!("{script}\n")))
        {
            continue;
        }
        programs.push(RealProgram {
            program: Program {
                source: format!("{}\n\n{script}\n", body.text),
                seed,
                level: REAL_LEVEL,
            },
            origin,
            function: qualified.clone(),
            is_class: true,
        });
    }
    programs
}

/// A method whose required parameters can all be given values.
fn callable<'a>(name: &'a str, signature: &'a Signature, hint: &dyn Fn(&str) -> Option<Kind>) -> Option<Callable<'a>> {
    let params = signature.params.get(1..)?;
    let kinds: Vec<Kind> = params
        .iter()
        .map(|p| arguments::infer(p, &signature.doc, hint(&p.name)))
        .collect();
    let buildable = params
        .iter()
        .zip(&kinds)
        .all(|(p, k)| p.default.is_some() || !matches!(k, Kind::Default | Kind::Unbuildable | Kind::Nodes { .. }));
    (buildable && signature.params.first().is_some_and(|p| p.name == "self")).then(|| Callable {
        name,
        params,
        kinds,
        adding: ADDING.contains(&name),
    })
}

/// Construct, fill, then ask: the calls of one program.
fn script(
    class: &str,
    instance: &str,
    constructor: &Callable<'_>,
    methods: &[Callable<'_>],
    bound: &HashSet<&str>,
    rng: &mut ChaCha8Rng,
) -> Option<String> {
    let mut pool: Vec<Value> = Vec::new();
    let (setup, call) = render_call(class, constructor.params, &values(constructor, &pool, rng), bound)?;
    let mut out = format!("{setup}{instance} = {call}\n");
    let mut order: Vec<&Callable<'_>> = Vec::new();
    for method in methods.iter().filter(|m| m.adding) {
        for _ in 0..rng.random_range(2..=3) {
            order.push(method);
        }
    }
    let mut asking: Vec<&Callable<'_>> = methods.iter().filter(|m| !m.adding).collect();
    asking.shuffle(rng);
    order.extend(asking);
    order.truncate(MAX_METHOD_CALLS);
    for method in order {
        let drawn = values(method, &pool, rng);
        if method.adding {
            pool.extend(drawn.iter().flatten().filter(|v| !v.is_container()).cloned());
        }
        let target = format!("{instance}.{}", method.name);
        let (setup, call) = render_call(&target, method.params, &drawn, bound)?;
        out.push_str(&setup);
        if method.adding {
            out.push_str(&call);
        } else {
            out.push_str("print(repr(");
            out.push_str(&call);
            out.push_str("))");
        }
        out.push('\n');
    }
    Some(out.trim_end().to_owned())
}

/// A call's arguments; a value to look up is mostly one added before.
fn values(method: &Callable<'_>, pool: &[Value], rng: &mut ChaCha8Rng) -> Vec<Option<Value>> {
    let mut drawn = values::draw(&method.kinds, rng);
    for ((value, kind), param) in drawn.iter_mut().zip(&method.kinds).zip(method.params) {
        if param.default.is_some() {
            *value = None;
        } else if matches!(kind, Kind::Element) && !pool.is_empty() && rng.random_bool(0.7) {
            *value = Some(pool[rng.random_range(0..pool.len())].clone());
        } else if matches!(kind, Kind::Element | Kind::Index { .. } | Kind::Endpoint { .. }) && method.adding {
            *value = Some(Value::Int(rng.random_range(1..=30)));
        }
    }
    drawn
}

/// `ArrayStack` → `array_stack`.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::module::Module;
    use super::*;

    const STACK: &str = r#"class ArrayStack:
    """A stack on a list.

    Longer description.
    """

    def __init__(self, size: int = 10) -> None:
        self._items = []

    def push(self, value: int) -> None:
        self._items.append(value)

    def pop(self) -> int:
        return self._items.pop()

    def contains(self, value: int) -> bool:
        return value in self._items

    def _grow(self):
        pass

    @staticmethod
    def make():
        return ArrayStack()


class TestStack:
    def test_push(self):
        pass
"#;

    #[test]
    fn a_class_is_constructed_filled_then_asked() {
        let module = Module::parse("pkg/stack.py", STACK).unwrap();
        let index: BTreeMap<&str, &Module> = [(module.name.as_str(), &module)].into_iter().collect();
        let options = Options::package(3, arguments_mode(), ["pkg".to_owned()].into());
        let stack = module.def("ArrayStack").unwrap();
        let site = |def| Site {
            index: &index,
            module: &module,
            def,
        };
        let programs = class_programs(site(stack), &options, Origin::Pypi);
        assert_eq!(programs.len(), CALLS_PER_FUNCTION, "{programs:?}");
        for program in &programs {
            let source = &program.program.source;
            let script = &source[source.find("array_stack = ArrayStack()").expect(source)..];
            let pushes = script.matches("array_stack.push(").count();
            assert!(pushes >= 2, "adding methods come first and more than once: {script}");
            assert!(script.find("array_stack.push(") < script.find("print(repr(array_stack.pop()))"));
            assert!(!script.contains("_grow") && !script.contains("make("), "{script}");
            assert!(program.is_class && program.function == "pkg.stack:ArrayStack");
        }
        let test_class = module.def("TestStack").unwrap();
        assert!(class_programs(site(test_class), &options, Origin::Pypi).is_empty());
        assert_eq!(snake_case("BinaryHeap"), "binary_heap");
    }

    fn arguments_mode() -> super::super::Arguments {
        super::super::Arguments::Inferred
    }
}
