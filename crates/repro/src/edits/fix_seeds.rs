//! Edit action: the random generators a script uses seeded, so its runs repeat.

use super::code::{defines_at_module_level, insert_after_imports};

/// Seeds the random generators the script imports at module level, unless it already does:
/// a module imported only inside a function (a helper's `import numpy as np`) is not a name
/// the module can call.
pub(crate) fn fix_seeds(code: &mut String) -> Option<String> {
    let mut seeds = Vec::new();
    if defines_at_module_level(code, "np") && !code.contains("np.random.seed") {
        seeds.push("np.random.seed(0)");
    }
    if defines_at_module_level(code, "torch") && !code.contains("manual_seed") {
        seeds.push("torch.manual_seed(0)");
    }
    if defines_at_module_level(code, "tf") && !code.contains("set_seed") {
        seeds.push("tf.random.set_seed(0)");
    }
    if defines_at_module_level(code, "random") && !code.contains("random.seed") {
        seeds.push("random.seed(0)");
    }
    if seeds.is_empty() {
        return None;
    }
    insert_after_imports(code, &format!("{}\n", seeds.join("\n")));
    Some(format!("fixed the seeds ({})", seeds.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_generators_the_module_imports_are_seeded() {
        let mut code = "import torch\n\ndef frame():\n    import numpy as np\n    return np.zeros(3)\n".to_owned();
        assert_eq!(
            fix_seeds(&mut code).as_deref(),
            Some("fixed the seeds (torch.manual_seed(0))")
        );
        assert!(!code.contains("np.random.seed"), "{code}");
        let mut code = "import numpy as np\nx = np.ones(2)\n".to_owned();
        assert!(
            fix_seeds(&mut code).is_some() && code.contains("np.random.seed(0)"),
            "{code}"
        );
        assert!(fix_seeds(&mut code).is_none(), "seeded twice: {code}");
    }
}
