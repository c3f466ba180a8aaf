//! A training checkpoint turned into a model folder to ship: the weights alone (no
//! optimiser moments), in a chosen precision, split into shards no larger than a limit.
//!
//! The GPU machine returns at most a few files of bounded size, and `models/` holds
//! checkpoints of at most 50 MB: bf16 halves the bytes of the f32 training weights, and
//! shards keep each file under the limit. `Qwen2Checkpoint::load` reads every
//! `*.safetensors` of a folder and converts to f32, so an exported folder loads as is.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};

/// Files a model folder carries besides its weights, copied when present.
const COMPANIONS: [&str; 5] = ["config.json", "tokenizer.json", "loss.csv", "loss.png", "summary.json"];

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{path} cannot be read: {message}")]
    Read { path: String, message: String },
    #[error("{name} takes {bytes} bytes, more than one shard may hold ({limit}); raise --shard-mib")]
    TensorTooLarge { name: String, bytes: usize, limit: usize },
    #[error("cannot write {path}: {message}")]
    Write { path: String, message: String },
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    pub shards: Vec<PathBuf>,
    pub tensors: usize,
    pub parameters: usize,
    pub bytes: usize,
}

/// Writes the weights of the checkpoint folder `from` to `to` as `dtype`, in shards of at
/// most `shard_bytes` each (tensors in name order, a shard closed when the next tensor
/// would overflow it), plus the companion files.
pub fn export(from: &Path, to: &Path, dtype: DType, shard_bytes: usize) -> Result<Exported, ExportError> {
    let weights = from.join("model.safetensors");
    let read_error = |message: String| ExportError::Read {
        path: weights.display().to_string(),
        message,
    };
    let tensors: BTreeMap<String, Tensor> = candle_core::safetensors::load(&weights, &Device::Cpu)
        .map_err(|e| read_error(e.to_string()))?
        .into_iter()
        .collect();
    let mut shards: Vec<Vec<(String, Tensor)>> = vec![Vec::new()];
    let mut filled = 0usize;
    let mut parameters = 0usize;
    let mut total = 0usize;
    for (name, tensor) in tensors {
        let tensor = tensor.to_dtype(dtype).map_err(|e| read_error(e.to_string()))?;
        let bytes = tensor.elem_count() * dtype.size_in_bytes();
        if bytes > shard_bytes {
            return Err(ExportError::TensorTooLarge {
                name,
                bytes,
                limit: shard_bytes,
            });
        }
        if filled + bytes > shard_bytes && filled > 0 {
            shards.push(Vec::new());
            filled = 0;
        }
        filled += bytes;
        total += bytes;
        parameters += tensor.elem_count();
        shards.last_mut().expect("one shard at least").push((name, tensor));
    }
    std::fs::create_dir_all(to).map_err(|e| write_error(to, &e))?;
    let count = shards.len();
    let mut written = Vec::with_capacity(count);
    let mut tensor_count = 0;
    for (i, shard) in shards.into_iter().enumerate() {
        let path = to.join(shard_name(i + 1, count));
        tensor_count += shard.len();
        let map: std::collections::HashMap<String, Tensor> = shard.into_iter().collect();
        candle_core::safetensors::save(&map, &path).map_err(|e| write_error(&path, &e))?;
        written.push(path);
    }
    for name in COMPANIONS {
        let source = from.join(name);
        if source.is_file() {
            let target = to.join(name);
            std::fs::copy(&source, &target).map_err(|e| write_error(&target, &e))?;
        }
    }
    Ok(Exported {
        shards: written,
        tensors: tensor_count,
        parameters,
        bytes: total,
    })
}

/// `model.safetensors` alone, `model-00001-of-00003.safetensors` when sharded (the
/// Hugging Face naming).
fn shard_name(index: usize, count: usize) -> String {
    if count == 1 {
        "model.safetensors".to_owned()
    } else {
        format!("model-{index:05}-of-{count:05}.safetensors")
    }
}

fn write_error(path: &Path, error: &dyn std::fmt::Display) -> ExportError {
    ExportError::Write {
        path: path.display().to_string(),
        message: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use candle_nn::{VarBuilder, VarMap};

    use super::*;
    use crate::model::{Qwen2Checkpoint, Qwen2Config, TrainableQwen2};

    /// A checkpoint folder as training writes it, with a random small model.
    fn checkpoint(dir: &Path) -> Qwen2Config {
        let config = Qwen2Config::small(300, 64, 2, 4, 32);
        let varmap = VarMap::new();
        let vb = VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu);
        TrainableQwen2::new(&config, &vb).unwrap();
        crate::train::initialize(&varmap, 3, 2).unwrap();
        varmap.save(dir.join("model.safetensors")).unwrap();
        std::fs::write(dir.join("config.json"), serde_json::to_string(&config).unwrap()).unwrap();
        std::fs::write(dir.join("loss.csv"), "step,tokens\n1,32\n").unwrap();
        let texts = ["def f(x):\n    return x + 1\n"; 8];
        let tokenizer = crate::tokenizer::train(texts.iter(), 300).unwrap();
        tokenizer.save(dir.join("tokenizer.json"), false).unwrap();
        config
    }

    fn logits(dir: &Path) -> Vec<f32> {
        let mut loaded = Qwen2Checkpoint::load(dir, &Device::Cpu).unwrap();
        let input = Tensor::new(&[[5u32, 9, 14, 2]], &Device::Cpu).unwrap();
        loaded
            .model
            .forward(&input, 0)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap()
    }

    #[test]
    fn bf16_shards_stay_under_the_limit_and_load_as_the_same_model() {
        let from = tempfile::tempdir().unwrap();
        let to = tempfile::tempdir().unwrap();
        checkpoint(from.path());
        let limit = 40_000;
        let exported = export(from.path(), to.path(), DType::BF16, limit).unwrap();
        assert!(exported.shards.len() > 1, "{exported:?}");
        for shard in &exported.shards {
            let size = std::fs::metadata(shard).unwrap().len() as usize;
            // The safetensors header adds a little to the tensor bytes.
            assert!(size <= limit + 4_096, "{} is {size} bytes", shard.display());
        }
        assert_eq!(exported.bytes, exported.parameters * 2);
        assert!(to.path().join("loss.csv").is_file() && to.path().join("config.json").is_file());
        // bf16 rounds the weights: the logits move a little, not a lot.
        let before = logits(from.path());
        let after = logits(to.path());
        let worst = before
            .iter()
            .zip(&after)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(worst > 0.0 && worst < 0.05, "largest logit change {worst}");
    }

    #[test]
    fn a_tensor_larger_than_a_shard_is_refused_with_its_name() {
        let from = tempfile::tempdir().unwrap();
        let to = tempfile::tempdir().unwrap();
        checkpoint(from.path());
        let error = export(from.path(), to.path(), DType::F32, 1_000).unwrap_err();
        assert!(matches!(error, ExportError::TensorTooLarge { .. }), "{error}");
        assert!(error.to_string().contains("--shard-mib"));
    }
}
