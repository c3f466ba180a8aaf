//! The versions a pasted issue names (Python, frameworks, the GPU and CUDA), for the
//! form's Environment fields. Issue templates and the `collect_env` of torch say them in a
//! few common ways: `Python version: 3.10.12`, `torch==2.1.0`, `[pip3] numpy==1.26.0`,
//! `TensorFlow version: 2.15`, `GPU 0: NVIDIA A100-SXM4-80GB`, `CUDA used to build
//! PyTorch: 12.1`.

/// What an issue says about where it ran; empty where it says nothing.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Found {
    pub python: String,
    /// `name version`, each once, in the order the issue names them.
    pub frameworks: Vec<String>,
    pub hardware: String,
}

/// Frameworks by the names issues use (lower case), and the name the form shows.
const FRAMEWORKS: [(&str, &str); 15] = [
    ("torch", "torch"),
    ("pytorch", "torch"),
    ("torchvision", "torchvision"),
    ("tensorflow", "tensorflow"),
    ("tensorflow-gpu", "tensorflow"),
    ("keras", "keras"),
    ("jax", "jax"),
    ("numpy", "numpy"),
    ("scipy", "scipy"),
    ("pandas", "pandas"),
    ("scikit-learn", "scikit-learn"),
    ("sklearn", "scikit-learn"),
    ("transformers", "transformers"),
    ("lightning", "lightning"),
    ("pytorch-lightning", "lightning"),
];

/// GPU answers that mean there is none.
const NO_GPU: [&str; 6] = ["none", "n/a", "na", "no", "cpu", "-"];

/// The leading `1.2.3` of a word (`v2.1`, `2.1.0+cu121`, `11.8/8.6`), if it is a version.
fn version(word: &str) -> Option<&str> {
    let word = word.strip_prefix(['v', 'V']).unwrap_or(word);
    let end = word
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(word.len());
    let version = word[..end].trim_end_matches('.');
    let mut parts = version.split('.');
    let numbers = parts.next().is_some_and(|p| !p.is_empty()) && parts.next().is_some_and(|p| !p.is_empty());
    numbers.then_some(version)
}

/// The words of a line, split at spaces and at the punctuation around versions.
fn words(line: &str) -> Vec<&str> {
    line.split(|c: char| c.is_whitespace() || ":,;()[]=<>'\"`|*".contains(c))
        .filter(|w| !w.is_empty())
        .collect()
}

/// The version right after `words[at]`, past a `version` or `v` in between.
fn version_after<'a>(words: &[&'a str], at: usize, reach: usize) -> Option<&'a str> {
    words.iter().skip(at + 1).take(reach).find_map(|w| version(w))
}

/// The GPU a line names after a `GPU …:` label (`GPU 0: NVIDIA A100`, `GPU model and
/// memory: RTX 3090 24GB`), if it names one.
fn gpu_in(line: &str) -> Option<String> {
    let lower = line.to_ascii_lowercase();
    let at = lower.find("gpu")?;
    let value = line[at..].rsplit(':').next()?.trim().trim_end_matches(['.', ',']);
    let plain = value.to_ascii_lowercase();
    let named = !value.is_empty()
        && value.len() <= 60
        && line[at..].contains(':')
        && !NO_GPU.contains(&plain.as_str())
        && !plain.starts_with("true")
        && !plain.starts_with("false");
    named.then(|| value.to_owned())
}

/// Everything `text` says about the environment.
pub fn found_in(text: &str) -> Found {
    let mut found = Found::default();
    let mut cuda = None;
    for line in text.lines() {
        let words = words(line);
        for (i, word) in words.iter().enumerate() {
            let lower = word.to_ascii_lowercase();
            if matches!(lower.as_str(), "python" | "python3") && found.python.is_empty() {
                if let Some(v) = version_after(&words, i, 2) {
                    v.clone_into(&mut found.python);
                }
            } else if lower == "cuda" || lower.starts_with("cuda/") {
                // `CUDA used to build PyTorch: 12.1`, `CUDA runtime version: 12.1.105`.
                cuda = cuda.or_else(|| version_after(&words, i, 5));
            } else if let Some((_, name)) = FRAMEWORKS.iter().find(|(alias, _)| *alias == lower)
                && !found.frameworks.iter().any(|f| f.split(' ').next() == Some(name))
                && let Some(v) = version_after(&words, i, 2)
            {
                found.frameworks.push(format!("{name} {v}"));
            }
        }
        if found.hardware.is_empty()
            && let Some(gpu) = gpu_in(line)
        {
            found.hardware = gpu;
        }
    }
    if let Some(cuda) = cuda {
        if !found.hardware.is_empty() {
            found.hardware.push_str(", ");
        }
        found.hardware.push_str("CUDA ");
        found.hardware.push_str(cuda);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pytorch_collect_env_report_fills_every_field() {
        let issue = "Loss is nan after the first epoch\n\n\
            PyTorch version: 2.1.0+cu121\nIs debug build: False\nCUDA used to build PyTorch: 12.1\n\
            OS: Ubuntu 22.04.3 LTS (x86_64)\n\
            Python version: 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0] (64-bit runtime)\n\
            Is CUDA available: True\nGPU models and configuration: GPU 0: NVIDIA GeForce RTX 4090\n\
            Versions of relevant libraries:\n[pip3] numpy==1.26.0\n[pip3] torch==2.1.0\n";
        let found = found_in(issue);
        assert_eq!(found.python, "3.10.12");
        assert_eq!(found.frameworks, vec!["torch 2.1.0", "numpy 1.26.0"]);
        assert_eq!(found.hardware, "NVIDIA GeForce RTX 4090, CUDA 12.1");
    }

    #[test]
    fn tensorflow_templates_and_prose_are_read_too() {
        let issue = "### TensorFlow version\ntf 2.15\n- TensorFlow version: 2.15.0\n- Python version: 3.11\n\
            - GPU model and memory: RTX 3090 24GB\n- CUDA/cuDNN version: 11.8/8.6\n\
            I also use keras==3.0.1 and import torch.nn here, scikit-learn v1.3.";
        let found = found_in(issue);
        assert_eq!(found.python, "3.11");
        assert_eq!(
            found.frameworks,
            vec!["tensorflow 2.15.0", "keras 3.0.1", "scikit-learn 1.3"]
        );
        assert_eq!(found.hardware, "RTX 3090 24GB, CUDA 11.8");
    }

    #[test]
    fn nothing_named_is_nothing_found() {
        assert_eq!(
            found_in("import torch\nx = torch.zeros(3)\nGPU: none\nPython is great"),
            Found::default()
        );
        assert_eq!(version("3"), None);
        assert_eq!(version("v2.1"), Some("2.1"));
        assert_eq!(version("11.8/8.6"), Some("11.8"));
    }
}
