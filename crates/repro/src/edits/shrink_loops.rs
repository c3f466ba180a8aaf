//! Edit action: epochs and iteration counts capped, so a run ends within the sandbox's
//! time limit.

use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::code::re;

/// Caps epochs and iteration counts so a run ends within the sandbox's time limit.
pub(crate) fn shrink_loops(code: &mut String, epochs_cap: u64, range_cap: u64) -> Option<String> {
    static EPOCHS: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?i)\b((?:n_|num_|max_)?(?:epochs?|iters?|iterations|steps|n_iter|max_iter)\s*=\s*)(\d+)\b")
    });
    static RANGE: LazyLock<Regex> = LazyLock::new(|| re(r"(\bfor\s+\w+\s+in\s+range\(\s*)(\d+)(\s*\))"));
    let mut shrunk = Vec::new();
    let new = EPOCHS.replace_all(code, |c: &Captures<'_>| {
        let n: u64 = c[2].parse().unwrap_or(0);
        if n > epochs_cap {
            shrunk.push(format!("{}{n} → {epochs_cap}", &c[1]));
            format!("{}{epochs_cap}", &c[1])
        } else {
            c[0].to_owned()
        }
    });
    let new = RANGE.replace_all(&new, |c: &Captures<'_>| {
        let n: u64 = c[2].parse().unwrap_or(0);
        if n > range_cap {
            shrunk.push(format!("range({n}) → range({range_cap})"));
            format!("{}{range_cap}{}", &c[1], &c[3])
        } else {
            c[0].to_owned()
        }
    });
    if shrunk.is_empty() {
        return None;
    }
    *code = new.into_owned();
    Some(format!("shrank loops: {}", shrunk.join(", ")))
}
