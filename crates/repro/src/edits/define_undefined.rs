//! Refinement edit: each name the checks report undefined gets its usual import, the
//! project's own definition, or synthetic data of the inferred shape.

use std::sync::LazyLock;

use regex::Regex;

use super::code::{
    UNSTATED_SHAPE, add_imports, bound_before_use, defines_at_module_level, inferred_shape, insert_before_use, re,
    shape_literal, value_reads, word,
};
use super::complete_imports::{framework_import, import_for};
use super::hoist_main_blocks::split_entry_point;
use super::stand_ins::{INDEX_LOSS, attribute_bag, dataset_stand_in, names_a_loader, torch_loader};
use super::stated_data::{FEATURE_NAMES, LABEL_NAMES, Stated, stated};
use crate::project::Project;

/// Names that usually hold data, defined synthetically when a report's snippet uses them undefined.
/// `code` is read for what the data must be: features shaped as the code reshapes them or as
/// its model's first layer takes them; labels as class indices below `k` where the code
/// one-hot encodes them (`np.eye(k)[y]`, `to_categorical(y, k)`) or its model ends in a
/// k-unit softmax, one-hot rows where a non-sparse categorical cross-entropy takes them,
/// else 0/1 (which a log-loss also needs). Settings (`learn_rate`, `ngpu`, `input_shape`,
/// `num_classes`) get a usual value; a `PyTorch` data loader yields batches the code's model
/// and loss take; an object the code only reads attributes of (`tokenizer.count`) holds
/// their usual values.
pub(crate) fn synthetic_definition(name: &str, shape: &[usize], stated: &Stated, code: &str) -> Option<String> {
    let lower = name.to_lowercase();
    let shape = stated.shape.as_deref().unwrap_or(shape);
    let rows = shape.first().copied().unwrap_or(100);
    if FEATURE_NAMES.contains(&lower.as_str()) {
        let shape = shape_literal(&feature_shape(code, name, shape));
        let values = match stated.range {
            Some((low, high)) => format!("np.random.default_rng(0).uniform({low}, {high}, {shape})"),
            None => format!("np.random.default_rng(0).standard_normal({shape})"),
        };
        Some(format!("{name} = {}", as_torch(code, name, stated, values, true)))
    } else if LABEL_NAMES.contains(&lower.as_str()) {
        // Labels the code one-hot encodes itself stay indices; else a categorical loss
        // takes them one-hot.
        let encoded = class_count(code, name);
        let classes = encoded.or_else(|| softmax_units(code)).unwrap_or(2);
        // A stated shape with a trailing axis (`y_train is (800, 1)`) is kept whole.
        let size = match &stated.shape {
            Some(stated) if stated.len() > 1 => shape_literal(stated),
            _ => rows.to_string(),
        };
        let indices = format!("np.random.default_rng(1).integers(0, {classes}, size={size})");
        if encoded.is_none() && CATEGORICAL_LOSS.is_match(code) {
            Some(format!("{name} = np.eye({classes})[{indices}]"))
        } else {
            let float = !INDEX_LOSS.is_match(code);
            Some(format!("{name} = {}", as_torch(code, name, stated, indices, float)))
        }
    } else if [
        "files",
        "filenames",
        "file_names",
        "file_list",
        "filelist",
        "paths",
        "file_paths",
        "filepaths",
        "image_paths",
        "image_files",
        "img_paths",
        "image_list",
    ]
    .contains(&lower.as_str())
    {
        // A folder of images the report does not include: names for the image reads,
        // which `synthesize_images` turns into synthetic pixels.
        Some(format!("{name} = [f\"image_{{i}}.png\" for i in range(8)]"))
    } else if lower == "device" {
        // The sandbox runs on the CPU.
        Some(format!("{name} = torch.device(\"cpu\")")).filter(|_| code.contains("torch"))
    } else if names_a_loader(&lower) {
        torch_loader(name, code)
    } else if let Some(value) = setting_value(&lower, shape, code) {
        Some(format!("{name} = {value}"))
    } else {
        // `tokenizer.count`, `config.hidden`: attributes with their usual values.
        attribute_bag(name, code, |attribute| {
            setting_value(attribute, shape, code).unwrap_or_else(|| "16".to_owned())
        })
    }
}

/// `values` as the tensor a `PyTorch` script feeds its model (`float32`, or `int64` where
/// `float` is false), in a script that uses `torch` alone and does not convert `name`
/// itself, and that the report does not call an array; else `values` unchanged.
fn as_torch(code: &str, name: &str, stated: &Stated, values: String, float: bool) -> String {
    static TORCH: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*(?:import|from)\s+torch\b"));
    static OTHER: LazyLock<Regex> = LazyLock::new(|| re(r"\b(?:keras|tensorflow|sklearn)\b"));
    let converts = Regex::new(&format!(
        r"\b(?:tensor|from_numpy|as_tensor|Tensor|FloatTensor|LongTensor|DoubleTensor)\(\s*{}\b",
        regex::escape(name)
    ))
    .is_ok_and(|r| r.is_match(code));
    if !TORCH.is_match(code) || OTHER.is_match(code) || converts || stated.array {
        return values;
    }
    if float {
        format!("torch.as_tensor({values}, dtype=torch.float32)")
    } else {
        format!("torch.as_tensor({values})")
    }
}

/// A loss that takes one-hot targets (not the sparse one, which takes indices: no word
/// boundary inside `sparse_categorical_crossentropy` or `SparseCategoricalCrossentropy`).
static CATEGORICAL_LOSS: LazyLock<Regex> =
    LazyLock::new(|| re(r"\bcategorical_crossentropy\b|\bCategoricalCrossentropy\("));

/// The usual value of a setting a snippet leaves undefined, by its (lower-case) name: an
/// epoch or step count (10), a batch size (the data's rows), a learning rate, a GPU count
/// (none in the sandbox), a dropout rate, an input shape (the data's, without its batch
/// axis), a class count, or a size (16).
fn setting_value(lower: &str, shape: &[usize], code: &str) -> Option<String> {
    static LEARNING_RATE: LazyLock<Regex> =
        LazyLock::new(|| re(r"^(?:lr|lrate|eta|alpha|learn_?rate)$|_lr$|^lr_|learning_?rate"));
    static COUNT: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"^(?:n|num|number|max|total)_\w+$|^(?:hidden|units|dim|maxlen|vocab|latent_dim)$|_(?:size|dim|dims|units|len|length|tokens|features|layers|channels|hidden|heads|filters|words)$|^n(?:gf|df|z|c|h)$",
        )
    });
    if ["epochs", "n_epochs", "num_epochs", "steps", "n_steps"].contains(&lower) {
        Some("10".to_owned())
    } else if ["batch_size", "n", "n_samples", "num_samples"].contains(&lower) {
        Some(shape.first().copied().unwrap_or(100).to_string())
    } else if LEARNING_RATE.is_match(lower) {
        Some("0.01".to_owned())
    } else if lower.contains("gpu") {
        // The sandbox has no GPU: a count of zero makes the code take its CPU path.
        Some("0".to_owned())
    } else if lower.contains("dropout") || lower == "keep_prob" {
        Some("0.5".to_owned())
    } else if lower == "momentum" {
        Some("0.9".to_owned())
    } else if lower == "shape" || lower.ends_with("_shape") {
        let sample = if shape.len() > 1 { &shape[1..] } else { shape };
        Some(shape_literal(sample))
    } else if lower.contains("classes") {
        Some(softmax_units(code).unwrap_or(2).to_string())
    } else if COUNT.is_match(lower) {
        Some("16".to_owned())
    } else {
        None
    }
}

/// The shape of synthetic features named `name`: the one the code reshapes them to (its
/// `-1` is the rows), else the report's, else one batch of what the model's first layer
/// takes (`input_shape=(28, 28, 1)`, `input_dim=20`, `nn.Linear(13, …)`).
fn feature_shape(code: &str, name: &str, shape: &[usize]) -> Vec<usize> {
    static INPUT: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\b(?:input_shape\s*=\s*|Input\(\s*(?:shape\s*=\s*)?)\(\s*(\d+(?:\s*,\s*\d+)*)\s*,?\s*\)|\binput_dim\s*=\s*(\d+)|\bnn\.Linear\(\s*(\d+)\s*,",
        )
    });
    let rows = shape.first().copied().unwrap_or(100);
    let dims = |list: &str| -> Option<Vec<usize>> { list.split(',').map(|d| d.trim().parse().ok()).collect() };
    let reshape = re(&format!(
        r"\b{}\s*\.reshape\(\s*\(?\s*(-?\d+(?:\s*,\s*-?\d+)+)\s*\)?\s*\)",
        regex::escape(name)
    ));
    if let Some(c) = reshape.captures(code) {
        let target: Option<Vec<usize>> = c[1]
            .split(',')
            .map(|d| match d.trim() {
                "-1" => Some(rows),
                d => d.parse().ok().filter(|&d: &usize| d > 0),
            })
            .collect();
        if let Some(target) = target.filter(|t| t.iter().product::<usize>() <= 10_000_000) {
            return target;
        }
    }
    if shape != UNSTATED_SHAPE {
        return shape.to_vec();
    }
    INPUT
        .captures(code)
        .and_then(|c| {
            let sample = c.get(1).or(c.get(2)).or(c.get(3))?;
            dims(sample.as_str())
        })
        .map_or_else(|| shape.to_vec(), |sample| [vec![rows], sample].concat())
}

/// The units of the last softmax layer the code builds (`Dense(10, activation='softmax')`).
fn softmax_units(code: &str) -> Option<u64> {
    static SOFTMAX: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r#"\bDense\(\s*(?:units\s*=\s*)?(\d+)\s*,[^()\n]*activation\s*=\s*(?:['"]softmax['"]|(?:tf\.)?(?:keras\.activations|nn)\.softmax)"#,
        )
    });
    SOFTMAX.captures_iter(code).last().and_then(|c| c[1].parse().ok())
}

/// The number of classes `code` one-hot encodes `name` into, when it says.
fn class_count(code: &str, name: &str) -> Option<u64> {
    let n = regex::escape(name);
    let patterns = [
        format!(r"\beye\(\s*(\d+)\s*\)\s*\[\s*{n}\b"),
        format!(r"\b(?:to_categorical|one_hot)\(\s*{n}\s*,\s*(?:num_classes\s*=\s*)?(\d+)"),
    ];
    patterns
        .iter()
        .filter_map(|p| Regex::new(p).ok())
        .find_map(|r| r.captures(code).and_then(|c| c[1].parse().ok()))
}

/// A top-level definition of `name` in the project: a one-line assignment, or a whole
/// `def` / `class` block, with the file it came from.
fn project_definition(project: &Project, name: &str) -> Option<String> {
    let n = regex::escape(name);
    let assignment = Regex::new(&format!(r"(?m)^{n}\s*(?::[^=\n]*)?=[^=\n][^\n]*$")).ok()?;
    let block = Regex::new(&format!(r"(?m)^(?:def|class)\s+{n}\b")).ok()?;
    let word = word(name);
    // `x = x.reshape(…)` defines nothing: it needs `x` itself.
    let reads_itself = |line: &str| value_reads(line, &word);
    for file in project.python_files() {
        if let Some(m) = assignment.find_iter(&file.text).find(|m| !reads_itself(m.as_str())) {
            let line = m.as_str().trim_end();
            // Only a complete one-line value: an open bracket would need the lines after it.
            let opens = line.matches(['(', '[', '{']).count();
            let closes = line.matches([')', ']', '}']).count();
            if opens == closes {
                return Some(format!("{line}  # from {}", file.path));
            }
        }
        if let Some(m) = block.find(&file.text) {
            let rest = &file.text[m.start()..];
            let mut lines = rest.lines();
            let mut text = lines.next().unwrap_or("").to_owned();
            for line in lines {
                if !line.trim().is_empty() && !line.starts_with([' ', '\t']) {
                    break;
                }
                text.push('\n');
                text.push_str(line);
            }
            return Some(format!("# from {}\n{}", file.path, text.trim_end()));
        }
    }
    // Else how the project's own entry point builds it: `model = Net().fit(X, y)` in an
    // `if __name__ == "__main__":` block (its names are resolved in the next round).
    let target = Regex::new(&format!(
        r"(?m)^(?:{n}|[\w\s,]*,\s*{n}|{n}\s*,[\w\s,]*)\s*(?::[^=\n]*)?=[^=\n][^\n]*$"
    ))
    .ok()?;
    project.python_files().find_map(|file| {
        let (_, body) = split_entry_point(&file.text);
        let line = target
            .find_iter(&body)
            .find(|m| !reads_itself(m.as_str()))?
            .as_str()
            .trim_end();
        let balanced = line.matches(['(', '[', '{']).count() == line.matches([')', ']', '}']).count();
        balanced.then(|| format!("{line}  # from {} (its entry point)", file.path))
    })
}

/// Defines the `undefined` names that are still unbound at module level: imports for the
/// well-known ones, else the project's definitions, else synthetic data as the `report`'s
/// text describes it (none without one). Returns the edits made (definitions, then imports).
pub(crate) fn define_undefined(
    code: &mut String,
    undefined: &[String],
    project: Option<&Project>,
    report: Option<&str>,
) -> Vec<String> {
    let shape = report.map(inferred_shape);
    let mut edits = Vec::new();
    let mut imports = Vec::new();
    let mut definitions = Vec::new();
    let mut defined = Vec::new();
    for name in undefined {
        // Reported undefined at module level: a parameter of the same name elsewhere does
        // not define it (only an edit of this round may have).
        if bound_before_use(code, name) {
            continue;
        }
        if let Some(line) = import_for(name) {
            imports.push(line.to_owned());
        } else if let Some(line) = framework_import(name, code) {
            imports.push(line);
        } else if let Some(definition) = project.and_then(|p| project_definition(p, name)) {
            definitions.push(definition);
            defined.push(name.as_str());
        } else if let Some(definition) = dataset_stand_in(name, report.unwrap_or(""), code) {
            definitions.push(definition);
            defined.push(name.as_str());
        } else if let Some(definition) = report
            .zip(shape.as_deref())
            .and_then(|(report, shape)| synthetic_definition(name, shape, &stated(report, name), code))
        {
            definitions.push(definition);
            defined.push(name.as_str());
        }
    }
    if !definitions.is_empty() {
        // Functions and classes first: the assignments of this round may call them.
        definitions.sort_by_key(|d| !d.starts_with("# from "));
        insert_before_use(code, &format!("{}\n", definitions.join("\n")), &defined);
        edits.push(format!("defined undefined data: {}", definitions.join("; ")));
        if !defines_at_module_level(code, "np") {
            imports.push("import numpy as np".to_owned());
        }
        for module in ["torch", "types"] {
            let prefix = format!("{module}.");
            if definitions.iter().any(|d| d.contains(&prefix)) && !defines_at_module_level(code, module) {
                imports.push(format!("import {module}"));
            }
        }
    }
    if !imports.is_empty() {
        imports.dedup();
        let imports: Vec<&str> = imports.iter().map(String::as_str).collect();
        add_imports(code, &imports);
        edits.push(format!("added imports for undefined names: {}", imports.join("; ")));
    }
    edits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::SourceFile;

    #[test]
    fn synthetic_labels_follow_how_the_code_uses_them() {
        let one_hot = "Y = np.eye(10)[y]\nloss = -np.mean(np.log(p) * Y)\n";
        assert_eq!(
            synthetic_definition("y", &[64, 3], &Stated::default(), one_hot).unwrap(),
            "y = np.random.default_rng(1).integers(0, 10, size=64)"
        );
        let keras = "labels = to_categorical(y_train, num_classes=7)\n";
        assert!(
            synthetic_definition("y_train", &[8], &Stated::default(), keras)
                .unwrap()
                .contains("integers(0, 7,")
        );
        // A log-loss needs 0/1 labels; with nothing said, labels are binary.
        let log_loss = "loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))\n";
        assert!(
            synthetic_definition("y", &[8], &Stated::default(), log_loss)
                .unwrap()
                .contains("integers(0, 2,")
        );
        assert_eq!(class_count("Y = np.eye(10)[labels]", "y"), None);
    }

    #[test]
    fn synthetic_features_take_the_shape_the_code_gives_them() {
        let reshaped = "x = x.reshape(-1, 28, 28, 1)\nmodel.fit(x, y)\n";
        assert_eq!(
            synthetic_definition("x", &UNSTATED_SHAPE, &Stated::default(), reshaped).unwrap(),
            "x = np.random.default_rng(0).standard_normal((100, 28, 28, 1))"
        );
        let keras = "inputs = keras.Input(shape=(64,64,1))\nmodel.fit(x_train, y_train)\n";
        assert!(
            synthetic_definition("x_train", &UNSTATED_SHAPE, &Stated::default(), keras)
                .unwrap()
                .ends_with("standard_normal((100, 64, 64, 1))")
        );
        let torch = "self.fc = nn.Linear(13, 1)\nout = net(inputs)\n";
        assert!(
            synthetic_definition("inputs", &UNSTATED_SHAPE, &Stated::default(), torch)
                .unwrap()
                .ends_with("standard_normal((100, 13))")
        );
        // A shape the report states wins over the model's.
        assert!(
            synthetic_definition("x_train", &[8, 3], &Stated::default(), keras)
                .unwrap()
                .ends_with("standard_normal((8, 3))")
        );
    }

    #[test]
    fn synthetic_labels_match_the_models_output_and_loss() {
        let sparse = "Dense(10, activation='softmax')\nmodel.compile(loss='sparse_categorical_crossentropy')\n";
        assert!(
            synthetic_definition("y", &[32, 4], &Stated::default(), sparse)
                .unwrap()
                .ends_with("integers(0, 10, size=32)")
        );
        let categorical = "Dense(3, activation=\"softmax\")\nmodel.compile(loss='categorical_crossentropy')\n";
        assert_eq!(
            synthetic_definition("y_train", &[32, 4], &Stated::default(), categorical).unwrap(),
            "y_train = np.eye(3)[np.random.default_rng(1).integers(0, 3, size=32)]"
        );
        let sparse_class =
            "Dense(3, activation='softmax')\nmodel.compile(loss=keras.losses.SparseCategoricalCrossentropy())\n";
        assert!(
            synthetic_definition("y", &[32, 4], &Stated::default(), sparse_class)
                .unwrap()
                .starts_with("y = np.random")
        );
        // Labels the code one-hot encodes itself stay class indices under a categorical loss.
        let encoded = "Y = to_categorical(y, 4)\nmodel.compile(loss='categorical_crossentropy')\n";
        assert_eq!(
            synthetic_definition("y", &[32, 4], &Stated::default(), encoded).unwrap(),
            "y = np.random.default_rng(1).integers(0, 4, size=32)"
        );
    }

    #[test]
    fn data_follows_what_the_report_says_and_the_framework_the_script_feeds() {
        let report = "X_train is a float32 tensor of shape (800, 10) (values between about -10 and 220) and y_train is (800, 1) with 0.0/1.0.";
        let torch = "import torch\nimport torch.nn as nn\np = model(X_train)\nloss = bce(p, y_train)\n";
        let mut code = torch.to_owned();
        define_undefined(
            &mut code,
            &["X_train".to_owned(), "y_train".to_owned()],
            None,
            Some(report),
        );
        assert!(
            code.contains(
                "X_train = torch.as_tensor(np.random.default_rng(0).uniform(-10, 220, (800, 10)), dtype=torch.float32)"
            ),
            "{code}"
        );
        assert!(
            code.contains(
                "y_train = torch.as_tensor(np.random.default_rng(1).integers(0, 2, size=(800, 1)), dtype=torch.float32)"
            ),
            "{code}"
        );
        assert!(code.starts_with("import numpy as np\n"), "{code}");
        // Class indices stay int64 for a loss that takes them.
        let indices = "import torch\nloss = nn.CrossEntropyLoss()(model(x), y)\n";
        let y = synthetic_definition("y", &[32], &Stated::default(), indices).unwrap();
        assert_eq!(
            y,
            "y = torch.as_tensor(np.random.default_rng(1).integers(0, 2, size=32))"
        );
        // A script that converts the data itself, or uses another framework, gets arrays.
        for code in [
            "import torch\nX = torch.from_numpy(x)\n",
            "import torch\nfrom sklearn.model_selection import train_test_split\nmodel(x)\n",
            "from tensorflow import keras\nmodel.fit(x, y)\n",
        ] {
            let x = synthetic_definition("x", &[8, 3], &Stated::default(), code).unwrap();
            assert!(x.starts_with("x = np.random"), "{code}: {x}");
        }
    }

    #[test]
    fn undefined_settings_get_usual_values() {
        let value = |name: &str| {
            synthetic_definition(
                name,
                &[100, 286, 384, 1],
                &Stated::default(),
                "Dense(5, activation='softmax')",
            )
        };
        assert_eq!(value("learn_rate").unwrap(), "learn_rate = 0.01");
        assert_eq!(value("ngpu").unwrap(), "ngpu = 0");
        assert_eq!(value("input_shape").unwrap(), "input_shape = (286, 384, 1)");
        assert_eq!(value("num_classes").unwrap(), "num_classes = 5");
        assert_eq!(value("num_encoder_tokens").unwrap(), "num_encoder_tokens = 16");
        assert_eq!(value("hidden_size").unwrap(), "hidden_size = 16");
        assert_eq!(value("model"), None, "a model cannot be made up");
        assert_eq!(value("tokenizer"), None);
        assert_eq!(
            synthetic_definition("device", &[8], &Stated::default(), "import torch\n").unwrap(),
            "device = torch.device(\"cpu\")"
        );
    }

    #[test]
    fn a_name_read_before_its_first_assignment_is_defined_before_that_read() {
        let mut code = "import tensorflow as tf\nx = x.reshape(-1, 4, 4, 1)\nprint(x.shape)\n".to_owned();
        let edits = define_undefined(&mut code, &["x".to_owned()], None, Some(""));
        assert_eq!(edits.len(), 2, "{edits:?}");
        assert!(
            code.contains("x = np.random.default_rng(0).standard_normal((100, 4, 4, 1))\nx = x.reshape"),
            "{code}"
        );
        // Before the first use, even when an import comes later.
        let mut code =
            "dataset = df.values\nfrom sklearn import preprocessing\nX = preprocessing.scale(dataset)\n".to_owned();
        let project = Project {
            files: vec![SourceFile {
                path: "load.py".into(),
                text: "df = make_frame()\n".into(),
            }],
            notes: vec![],
        };
        define_undefined(&mut code, &["df".to_owned()], Some(&project), Some(""));
        assert!(
            code.find("df = make_frame()").unwrap() < code.find("dataset = df.values").unwrap(),
            "{code}"
        );
        // A name bound before it is read stays as it is.
        let mut code = "x = 1\nprint(x)\n".to_owned();
        assert!(define_undefined(&mut code, &["x".to_owned()], None, Some("")).is_empty());
        // A framework's public name gets its import.
        let mut code = "from tensorflow import keras\nm = Multiply()([a, b])\n".to_owned();
        define_undefined(&mut code, &["Multiply".to_owned()], None, None);
        assert!(
            code.starts_with("from tensorflow.keras.layers import Multiply\n"),
            "{code}"
        );
    }

    #[test]
    fn an_undefined_list_of_files_gets_image_names() {
        let definition = synthetic_definition(
            "files",
            &[8],
            &Stated::default(),
            "for f in files:\n    Image.open(f)\n",
        )
        .unwrap();
        assert_eq!(definition, "files = [f\"image_{i}.png\" for i in range(8)]");
        assert_eq!(synthetic_definition("file_handle", &[8], &Stated::default(), ""), None);
    }

    #[test]
    fn undefined_names_are_found_in_the_project() {
        let project = Project {
            files: vec![SourceFile {
                path: "featurize/helpers.py".into(),
                text:
                    "import numpy as np\nN_FEATURES = 4\nBIG = [\n  1,\n]\n\ndef scale(x):\n    return x * 2\n\nY = 1\n"
                        .into(),
            }],
            notes: vec![],
        };
        assert_eq!(
            project_definition(&project, "N_FEATURES").unwrap(),
            "N_FEATURES = 4  # from featurize/helpers.py"
        );
        assert_eq!(
            project_definition(&project, "scale").unwrap(),
            "# from featurize/helpers.py\ndef scale(x):\n    return x * 2"
        );
        assert!(project_definition(&project, "BIG").is_none());
        let reshaping = Project {
            files: vec![SourceFile {
                path: "train.py".into(),
                text: "x = x.reshape(-1, 28, 28, 1)\n".into(),
            }],
            notes: vec![],
        };
        assert!(
            project_definition(&reshaping, "x").is_none(),
            "a line that reads the name does not define it"
        );
        assert!(project_definition(&project, "missing").is_none());

        // Objects the entry point builds: taken from its `__main__` block, dedented.
        let project = Project {
            files: vec![SourceFile {
                path: "report.py".into(),
                text: "from fit import Net\n\nif __name__ == \"__main__\":\n    X, y = load(), labels()\n    model = Net().fit(X, y)\n    print(model)\n"
                    .into(),
            }],
            notes: vec![],
        };
        assert_eq!(
            project_definition(&project, "model").unwrap(),
            "model = Net().fit(X, y)  # from report.py (its entry point)"
        );
        assert_eq!(
            project_definition(&project, "y").unwrap(),
            "X, y = load(), labels()  # from report.py (its entry point)"
        );
        assert!(
            project_definition(&project, "Net").is_none(),
            "an import is not a definition"
        );
    }
}
