//! Edit action: the random generators a script uses seeded, so its runs repeat.

use super::code::{defines, insert_after_imports};

/// Seeds the random generators the script uses, unless it already does.
pub(crate) fn fix_seeds(code: &mut String) -> Option<String> {
    let mut seeds = Vec::new();
    if defines(code, "np") && !code.contains("np.random.seed") {
        seeds.push("np.random.seed(0)");
    }
    if defines(code, "torch") && !code.contains("manual_seed") {
        seeds.push("torch.manual_seed(0)");
    }
    if defines(code, "tf") && !code.contains("set_seed") {
        seeds.push("tf.random.set_seed(0)");
    }
    if defines(code, "random") && !code.contains("random.seed") {
        seeds.push("random.seed(0)");
    }
    if seeds.is_empty() {
        return None;
    }
    insert_after_imports(code, &format!("{}\n", seeds.join("\n")));
    Some(format!("fixed the seeds ({})", seeds.join(", ")))
}
