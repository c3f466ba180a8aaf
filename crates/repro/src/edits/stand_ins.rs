//! Stand-ins for the objects a report's snippet uses but never builds: a `PyTorch` data
//! loader that yields batches the snippet's model takes, and an object whose attributes the
//! snippet only reads (`tokenizer.count`). Reports leave these out more than anything else:
//! they come from the reporter's files.

use std::sync::LazyLock;

use regex::Regex;

use super::code::re;
use super::stated_data::stated_samples;

/// Samples and batch size of a stand-in loader: four batches, enough for a loop to show
/// what happens from one step to the next, small enough to run in seconds.
const LOADER_SAMPLES: usize = 64;
const LOADER_BATCH: usize = 16;

/// Token ids a stand-in loader draws when the embedding's vocabulary is not a number the
/// code states: below any vocabulary a real model has.
const UNSTATED_VOCABULARY: usize = 10;

/// Whether `lower` (a lower-case name) names a data loader: `train_loader`, `dataloader`,
/// `author_dataloader`, `val_dl`.
pub(crate) fn names_a_loader(lower: &str) -> bool {
    lower.contains("loader") || lower == "dl" || lower.ends_with("_dl") || lower.starts_with("dl_")
}

/// A `PyTorch` loader named `name` whose batches are `(inputs, targets)` that the code's
/// model and loss take: inputs for its first layer (token ids for an `nn.Embedding`,
/// features for an `nn.Linear`, channels first for a convolution, sequences for a
/// recurrent layer), targets for its loss (class indices below the last `nn.Linear`'s
/// outputs for a cross-entropy, 0/1 for a binary one, real values otherwise). `None` when
/// the code shows no `PyTorch` (neither `torch` nor an `nn.Module`).
pub(crate) fn torch_loader(name: &str, code: &str) -> Option<String> {
    // A snippet often starts at its model, its imports left out (`class Net(nn.Module)`).
    if !shows_torch(code) {
        return None;
    }
    let (inputs, targets) = model_samples(code, LOADER_SAMPLES);
    Some(format!(
        "{name} = torch.utils.data.DataLoader(torch.utils.data.TensorDataset({inputs}, {targets}), batch_size={LOADER_BATCH})"
    ))
}

/// Samples of a stand-in dataset: a few batches.
const DATASET_SAMPLES: usize = 16;

/// A stand-in for a dataset class the snippet uses but the report does not include
/// (`SegDataset(…)`, from the reporter's own `data.py`): a function that takes any
/// arguments and returns a `TensorDataset` of random samples, of the shapes the report
/// states for it (`3x100x100` inputs, `100x100` targets of class indices), else of what the
/// code's model and loss take. `None` for another name, or where the code shows no `PyTorch`.
pub(crate) fn dataset_stand_in(name: &str, report: &str, code: &str) -> Option<String> {
    static CLASSES: LazyLock<Regex> = LazyLock::new(|| re(r"\b(?:n_classes|num_classes)\s*=\s*(\d+)"));
    if !name.ends_with("Dataset") || name == "Dataset" || !shows_torch(code) {
        return None;
    }
    let n = DATASET_SAMPLES;
    let (inputs, targets) = match stated_samples(report, name) {
        Some((inputs, targets, indices)) => {
            let dims = |shape: &[usize]| shape.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
            let classes = CLASSES
                .captures(code)
                .map_or("2", |c| c.get(1).map_or("2", |m| m.as_str()));
            let targets = if indices {
                format!("torch.randint(0, {classes}, ({n}, {}))", dims(&targets))
            } else {
                format!("torch.randn({n}, {})", dims(&targets))
            };
            (format!("torch.randn({n}, {})", dims(&inputs)), targets)
        }
        None => model_samples(code, n),
    };
    Some(format!(
        "def {name}(*args, **kwargs):\n    \"\"\"Stands in for `{name}`, which the report does not include: random samples.\"\"\"\n    return torch.utils.data.TensorDataset({inputs}, {targets})"
    ))
}

/// A `PyTorch` loss that takes class indices (`int64`), not float targets.
pub(crate) static INDEX_LOSS: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(?:CrossEntropyLoss|NLLLoss|cross_entropy|nll_loss)\b"));

fn shows_torch(code: &str) -> bool {
    code.contains("torch") || code.contains("nn.Module")
}

/// `n` random `(inputs, targets)` for the code's model and loss: inputs for its first layer
/// (token ids for an `nn.Embedding`, features for an `nn.Linear`, channels first for a
/// convolution, sequences for a recurrent layer), targets for its loss (class indices below
/// the last `nn.Linear`'s outputs for a cross-entropy, 0/1 for a binary one, real values
/// otherwise).
fn model_samples(code: &str, n: usize) -> (String, String) {
    static FIRST_LAYER: LazyLock<Regex> = LazyLock::new(|| {
        re(r"\bnn\.(Embedding|Linear|Conv1d|Conv2d|Conv3d|LSTM|GRU|RNN)\(\s*(?:\w+\s*=\s*)?([^,()]*)")
    });
    static OUTPUTS: LazyLock<Regex> = LazyLock::new(|| re(r"\bnn\.Linear\([^,()]*,\s*(?:out_features\s*=\s*)?(\d+)"));
    static BINARY_LOSS: LazyLock<Regex> =
        LazyLock::new(|| re(r"\b(?:BCELoss|BCEWithLogitsLoss|binary_cross_entropy(?:_with_logits)?)\b"));
    let first = FIRST_LAYER.captures(code);
    let size = first.as_ref().and_then(|c| c[2].trim().parse::<usize>().ok());
    let inputs = match first.as_ref().map(|c| &c[1]) {
        Some("Embedding") => format!("torch.randint(0, {}, ({n}, 20))", size.unwrap_or(UNSTATED_VOCABULARY)),
        Some("Conv1d") => format!("torch.randn({n}, {}, 32)", size.unwrap_or(1)),
        Some("Conv2d") => format!("torch.randn({n}, {}, 32, 32)", size.unwrap_or(3)),
        Some("Conv3d") => format!("torch.randn({n}, {}, 8, 16, 16)", size.unwrap_or(1)),
        Some("LSTM" | "GRU" | "RNN") => format!("torch.randn({n}, 20, {})", size.unwrap_or(10)),
        _ => format!("torch.randn({n}, {})", size.unwrap_or(10)),
    };
    let outputs = OUTPUTS
        .captures_iter(code)
        .last()
        .and_then(|c| c[1].parse::<usize>().ok())
        .unwrap_or(2);
    let targets = if INDEX_LOSS.is_match(code) {
        format!("torch.randint(0, {outputs}, ({n},))")
    } else if BINARY_LOSS.is_match(code) {
        format!("torch.randint(0, 2, ({n}, {outputs})).float()")
    } else {
        format!("torch.randn({n}, {outputs})")
    };
    (inputs, targets)
}

/// An object standing for `name` when the code only reads its attributes
/// (`tokenizer_obj.count + 1`): a namespace holding each attribute read, with the value
/// `value_of` gives its (lower-case) name. `None` when the code uses `name` any other way
/// (calls it, calls its methods, passes it along).
pub(crate) fn attribute_bag(name: &str, code: &str, value_of: impl Fn(&str) -> String) -> Option<String> {
    let n = regex::escape(name);
    let uses = re(&format!(r"(?:^|[^.\w]){n}\b")).find_iter(code).count();
    let reads: Vec<(String, bool)> = re(&format!(r"(?:^|[^.\w]){n}\.(\w+)(\s*\()?"))
        .captures_iter(code)
        .map(|c| (c[1].to_owned(), c.get(2).is_some()))
        .collect();
    if uses == 0 || reads.len() != uses || reads.iter().any(|(_, called)| *called) {
        return None;
    }
    let mut attributes: Vec<String> = reads.into_iter().map(|(attribute, _)| attribute).collect();
    attributes.sort();
    attributes.dedup();
    let fields: Vec<String> = attributes
        .iter()
        .map(|a| format!("{a}={}", value_of(&a.to_lowercase())))
        .collect();
    Some(format!("{name} = types.SimpleNamespace({})", fields.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loader_yields_what_the_model_and_its_loss_take() {
        let lstm = "class Model(nn.Module):\nself.embd = nn.Embedding(vocab + 1, 300)\nself.lin3 = nn.Linear(512, 3)\nloss_fn = nn.CrossEntropyLoss()\nfor x, y in loader:\n";
        assert_eq!(
            torch_loader("loader", lstm).unwrap(),
            "loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randint(0, 10, (64, 20)), torch.randint(0, 3, (64,))), batch_size=16)"
        );
        let regression = "import torch\nself.fc = nn.Linear(13, 1)\ncriterion = nn.MSELoss()\n";
        let loader = torch_loader("train_loader", regression).unwrap();
        assert!(loader.contains("torch.randn(64, 13), torch.randn(64, 1)"), "{loader}");
        let images = "import torch\nnn.Conv2d(1, 8, 3)\nnn.Linear(8, 10)\nF.nll_loss(out, y)\n";
        let loader = torch_loader("dl", images).unwrap();
        assert!(
            loader.contains("torch.randn(64, 1, 32, 32), torch.randint(0, 10, (64,))"),
            "{loader}"
        );
        let binary = "import torch\nnn.Linear(4, 1)\nnn.BCEWithLogitsLoss()\n";
        assert!(
            torch_loader("dl", binary)
                .unwrap()
                .contains("torch.randint(0, 2, (64, 1)).float()")
        );
        assert_eq!(
            torch_loader("loader", "import numpy as np\n"),
            None,
            "no torch, no torch loader"
        );
        assert!(names_a_loader("author_dataloader") && names_a_loader("val_dl") && !names_a_loader("download"));
    }

    #[test]
    fn a_dataset_the_report_leaves_out_yields_the_samples_it_states() {
        let report = "SegDataset (in data.py, not shown) loads the tiles as 3x100x100 float tensors and the masks as 100x100 long tensors with 0/1.";
        let code = "import torch\nmodel = UNet(n_classes=2)\ntrain_ds = SegDataset(\"data/tiles\", \"data/masks\")\n";
        let stand_in = dataset_stand_in("SegDataset", report, code).unwrap();
        assert!(stand_in.starts_with("def SegDataset(*args, **kwargs):\n"), "{stand_in}");
        assert!(
            stand_in.ends_with("TensorDataset(torch.randn(16, 3, 100, 100), torch.randint(0, 2, (16, 100, 100)))"),
            "{stand_in}"
        );
        // Unstated: what the model takes.
        let linear = "import torch\nself.fc = nn.Linear(13, 1)\ncriterion = nn.MSELoss()\nds = MyDataset()\n";
        assert!(
            dataset_stand_in("MyDataset", "", linear)
                .unwrap()
                .ends_with("TensorDataset(torch.randn(16, 13), torch.randn(16, 1))")
        );
        assert_eq!(dataset_stand_in("Dataset", report, code), None);
        assert_eq!(dataset_stand_in("SegDataset", report, "import numpy as np\n"), None);
    }

    #[test]
    fn an_object_read_only_for_its_attributes_becomes_a_namespace() {
        let value = |a: &str| if a == "lr" { "0.01".to_owned() } else { "16".to_owned() };
        let code = "model = Model(tokenizer_obj.count + 1)\nopt = SGD(lr=cfg.lr)\nn = cfg.hidden\n";
        assert_eq!(
            attribute_bag("tokenizer_obj", code, value).unwrap(),
            "tokenizer_obj = types.SimpleNamespace(count=16)"
        );
        assert_eq!(
            attribute_bag("cfg", code, value).unwrap(),
            "cfg = types.SimpleNamespace(hidden=16, lr=0.01)"
        );
        // Called, its methods called, or passed along: not a bag of values.
        assert_eq!(attribute_bag("tok", "ids = tok.encode(text)\n", value), None);
        assert_eq!(attribute_bag("cfg", "n = cfg.size\nrun(cfg)\n", value), None);
        assert_eq!(attribute_bag("cfg", "x = other.cfg\n", value), None);
    }
}
