use super::*;

const SEARCH: &str = r#"from __future__ import annotations

from pkg.common.util import midpoint
from .tree import TreeNode


def count_below(array: list[int], query: int) -> int:
    """Count the items below query in a sorted array.

    Args:
        array: sorted list of integers.
        query: the bound.

    Examples:
        >>> count_below([1, 3, 5], 4)
        2
    """
    total = 0
    for index in range(len(array)):
        if array[index] >= query:
            break
        total = midpoint(total, total + 2)
    return total


def height(root: TreeNode | None) -> int:
    return 0 if root is None else 1 + max(height(root.left), height(root.right))
"#;

const UTIL: &str = "SCALE = 2\n\n\ndef midpoint(a, b):\n    return (a + b) // SCALE\n";
const COMMON_INIT: &str = "from .util import midpoint\n";

fn modules() -> Vec<Module> {
    vec![
        Module::parse("pkg/search/binary.py", SEARCH).unwrap(),
        Module::parse("pkg/common/util.py", UTIL).unwrap(),
        Module::parse("pkg/common/__init__.py", COMMON_INIT).unwrap(),
    ]
}

fn run(seed: u64, arguments: Arguments) -> Harvest {
    let options = Options::package(seed, arguments, ["pkg".to_owned()].into());
    let mut out = Harvest::new(Origin::Pypi);
    harvest(&modules(), &options, &mut out);
    out
}

#[test]
fn helpers_from_other_modules_are_copied_in_and_examples_come_first() {
    let out = run(1, Arguments::Inferred);
    // count_below, height, midpoint.
    assert_eq!(out.functions_seen, 3);
    let counts: Vec<&RealProgram> = out
        .programs
        .iter()
        .filter(|p| p.function == "pkg.search.binary:count_below")
        .collect();
    assert_eq!(counts.len(), CALLS_PER_FUNCTION, "{:?}", out.programs);
    let first = &counts[0].program.source;
    assert!(
        first.starts_with("from __future__ import annotations\n\n\nSCALE = 2\n"),
        "{first}"
    );
    assert!(first.contains("def midpoint(a, b):"), "{first}");
    assert!(
        !first.contains("import midpoint") && !first.contains("TreeNode"),
        "{first}"
    );
    assert!(
        first.ends_with("result = count_below([1, 3, 5], 4)\nprint(repr(result))\n"),
        "{first}"
    );
    assert!(
        first.contains("\"\"\"Count the items below query in a sorted array.\"\"\"\n"),
        "{first}"
    );
    for program in &counts[1..] {
        let source = &program.program.source;
        let array: Vec<i64> = source
            .lines()
            .find_map(|l| l.strip_prefix("array = ["))
            .unwrap_or_else(|| panic!("{source}"))
            .trim_end_matches(']')
            .split(", ")
            .map(|n| n.parse().unwrap())
            .collect();
        assert!(array.is_sorted(), "the docstring says sorted: {source}");
        assert!(source.contains("result = count_below(array, "), "{source}");
        assert_eq!(program.program.level, REAL_LEVEL);
    }
    // A tree node cannot be built from its annotation.
    assert!(out.programs.iter().all(|p| !p.function.ends_with(":height")));
    assert_eq!(out.functions_eligible, 2, "count_below and midpoint");
}

#[test]
fn the_same_seed_gives_the_same_programs() {
    assert_eq!(run(5, Arguments::Inferred), run(5, Arguments::Inferred));
    let differs = (6..20).any(|seed| run(seed, Arguments::Inferred) != run(5, Arguments::Inferred));
    assert!(differs, "other seeds should draw other arguments");
}

#[test]
fn random_arguments_make_one_call_per_function() {
    let out = run(1, Arguments::Random);
    // `height` too: random arguments do not read annotations.
    assert_eq!(out.programs.len(), 3, "{:?}", out.programs);
    assert!(out.programs.iter().all(|p| p.program.source.contains("print(repr(")));
}

#[test]
fn unresolvable_package_names_make_a_function_ineligible() {
    let broken = "from pkg.missing import helper\n\n\ndef use(n):\n    return helper(n)\n";
    let options = Options::package(1, Arguments::Inferred, ["pkg".to_owned()].into());
    let mut out = Harvest::new(Origin::Pypi);
    harvest(&[Module::parse("pkg/a.py", broken).unwrap()], &options, &mut out);
    assert_eq!((out.functions_seen, out.functions_eligible), (1, 0));
}

#[test]
fn skipped_defaults_make_later_arguments_keywords() {
    let params: Vec<module::Param> = ["xs", "step", "flag"]
        .iter()
        .map(|name| module::Param {
            name: (*name).to_owned(),
            annotation: None,
            default: (*name != "xs").then(|| "1".to_owned()),
            keyword_only: false,
        })
        .collect();
    let values = [Some(Value::List(vec![Value::Int(2)])), None, Some(Value::Bool(true))];
    let (setup, call) = render_call("f", &params, &values, &HashSet::new()).unwrap();
    assert_eq!(setup, "xs = [2]\n");
    assert_eq!(call, "f(xs, flag=True)");
    let missing = [None, None, None];
    assert_eq!(render_call("f", &params, &missing, &HashSet::new()), None);
}
