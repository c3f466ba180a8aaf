//! Edit action: obvious deprecated APIs migrated (`np.float`, `.as_matrix()`,
//! `sklearn.cross_validation`), except the one whose removal is the reported bug.

use std::sync::LazyLock;

use super::code::{Rewrite, re, rewrite};

/// Obvious deprecated APIs and their replacements, except an API whose removal is the
/// reported error itself (`module 'numpy' has no attribute 'float'`): that is the bug.
pub(crate) fn migrate_deprecated(code: &mut String, report: &str) -> Option<String> {
    static RULES: LazyLock<Vec<Rewrite>> = LazyLock::new(|| {
        vec![
            (re(r"\bnp\.float\b"), "float", "np.float → float"),
            (re(r"\bnp\.int\b"), "int", "np.int → int"),
            (re(r"\bnp\.bool\b"), "bool", "np.bool → bool"),
            (re(r"\bnp\.object\b"), "object", "np.object → object"),
            (re(r"\bnp\.str\b"), "str", "np.str → str"),
            (re(r"\bnp\.long\b"), "int", "np.long → int"),
            (re(r"\.as_matrix\(\)"), ".to_numpy()", ".as_matrix() → .to_numpy()"),
            (re(r"\.ix\["), ".loc[", ".ix[ → .loc["),
            (
                re(r"\bsklearn\.cross_validation\b"),
                "sklearn.model_selection",
                "sklearn.cross_validation → sklearn.model_selection",
            ),
            (re(r"\btorch\.autograd\.Variable\(([^()]*)\)"), "$1", "Variable(x) → x"),
        ]
    });
    static KERAS_LR: LazyLock<Vec<Rewrite>> = LazyLock::new(|| {
        vec![(
            re(r"\b((?:SGD|Adam|AdamW|RMSprop|Adagrad|Adadelta|Adamax|Nadam|Ftrl)\([^()]*?)\blr\s*="),
            "${1}learning_rate=",
            "Keras optimizer lr= → learning_rate=",
        )]
    });
    // The API whose removal is the reported error stays.
    let removed_is_the_bug = |what: &str| {
        let name = what
            .split(' ')
            .next()
            .unwrap_or("")
            .trim_start_matches("np.")
            .trim_start_matches('.');
        let name = name.split(['(', '[']).next().unwrap_or(name);
        report.contains(&format!("attribute '{name}'"))
    };
    let mut done = rewrite(code, RULES.iter().filter(|(_, _, what)| !removed_is_the_bug(what)));
    // Keras's optimizers renamed `lr`; the old name warns (TensorFlow 2.x) or fails (Keras
    // 3), which a run then shows instead of the bug. torch's optimizers keep `lr`. A
    // snippet may import nothing yet (the imports are completed later): the report then
    // names its framework.
    let keras = |text: &str| text.contains("keras") || text.contains("Keras");
    let keras_only = (keras(code) || keras(report)) && !code.contains("torch") && !report.contains("torch");
    if keras_only && !report.contains("'lr'") && !report.contains("`lr`") {
        done.extend(rewrite(code, KERAS_LR.iter()));
    }
    (!done.is_empty()).then(|| format!("migrated deprecated APIs: {}", done.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_api_that_is_the_bug_is_kept() {
        let mut code = "x = np.float(1)\ny = np.int(2)\n".to_owned();
        let edit = migrate_deprecated(&mut code, "AttributeError: module 'numpy' has no attribute 'float'").unwrap();
        assert_eq!(code, "x = np.float(1)\ny = int(2)\n");
        assert!(edit.contains("np.int") && !edit.contains("np.float"), "{edit}");
    }

    #[test]
    fn keras_optimizers_take_learning_rate_torch_ones_keep_lr() {
        // Development case 45: `SGD(lr=0.01)` made Keras warn, and the run showed the
        // warning instead of the regression that does not learn.
        let mut code = "from tensorflow.keras.optimizers import SGD\nopt = SGD(momentum=0.9, lr=0.01)\n".to_owned();
        let edit = migrate_deprecated(&mut code, "the model does not learn").unwrap();
        assert_eq!(
            code,
            "from tensorflow.keras.optimizers import SGD\nopt = SGD(momentum=0.9, learning_rate=0.01)\n"
        );
        assert!(edit.contains("learning_rate"), "{edit}");
        // A snippet without imports yet, from a report about Keras.
        let mut code = "model.compile(optimizer=SGD(lr=0.01), loss='mse')\n".to_owned();
        assert!(migrate_deprecated(&mut code, "I just started learning keras").is_some());
        assert!(code.contains("SGD(learning_rate=0.01)"), "{code}");
        let torch = "import torch\nfrom tensorflow import keras\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n";
        assert!(migrate_deprecated(&mut torch.to_owned(), "").is_none());
        // A report about the keyword itself keeps it.
        let mut code = "import keras\nopt = keras.optimizers.Adam(lr=1e-3)\n".to_owned();
        assert!(migrate_deprecated(&mut code, "TypeError: unexpected keyword argument 'lr'").is_none());
    }
}
