//! A Qwen2 decoder over the quantized tensors of a GGUF file, weight names as in the file
//! (`blk.N.attn_q.weight`, `ffn_gate`, `output`, ...). Written here rather than taken from
//! candle-transformers' `quantized_qwen2` for three things that file cannot do:
//! `Q5_0` weights are widened to `Q8_0` at load (exact, and candle has SIMD kernels only for
//! the latter), the weights are shared immutably while each generation owns its
//! [`KvCache`], and the key/value cache is preallocated instead of concatenated per token.

use std::io::{Read, Seek};
use std::path::Path;
use std::sync::Arc;

use candle_core::quantized::{GgmlDType, QMatMul, QStorage, QTensor, gguf_file};
use candle_core::{D, DType, Device, Module, Tensor};

use crate::error::{LlmError, Result};

/// The shape of a Qwen2 model, from the GGUF metadata (`qwen2.*`).
#[derive(Debug, Clone, PartialEq)]
pub struct Hparams {
    pub block_count: usize,
    pub embedding_length: usize,
    pub head_count: usize,
    pub head_count_kv: usize,
    pub context_length: usize,
    pub rms_norm_eps: f32,
    pub rope_freq_base: f32,
}

impl Hparams {
    pub fn head_dim(&self) -> usize {
        self.embedding_length / self.head_count
    }

    pub(crate) fn from_gguf(content: &gguf_file::Content) -> std::result::Result<Self, String> {
        let arch = content
            .metadata
            .get("general.architecture")
            .and_then(|v| v.to_string().ok())
            .ok_or("there is no general.architecture")?;
        if arch != "qwen2" {
            return Err(format!("its architecture is `{arch}`, this runtime reads `qwen2`"));
        }
        let get = |key: &str| {
            content
                .metadata
                .get(&format!("qwen2.{key}"))
                .ok_or_else(|| format!("the metadata has no qwen2.{key}"))
        };
        let usize_of = |key: &str| -> std::result::Result<usize, String> {
            get(key)?
                .to_u32()
                .map(|v| v as usize)
                .map_err(|e| format!("qwen2.{key}: {e}"))
        };
        let hparams = Self {
            block_count: usize_of("block_count")?,
            embedding_length: usize_of("embedding_length")?,
            head_count: usize_of("attention.head_count")?,
            head_count_kv: usize_of("attention.head_count_kv")?,
            context_length: usize_of("context_length")?,
            rms_norm_eps: get("attention.layer_norm_rms_epsilon")?
                .to_f32()
                .map_err(|e| e.to_string())?,
            rope_freq_base: get("rope.freq_base")
                .and_then(|v| v.to_f32().map_err(|e| e.to_string()))
                .unwrap_or(10_000.0),
        };
        if hparams.head_count == 0
            || hparams.head_count_kv == 0
            || !hparams.embedding_length.is_multiple_of(hparams.head_count)
            || !hparams.head_count.is_multiple_of(hparams.head_count_kv)
        {
            return Err(format!("its head counts do not divide: {hparams:?}"));
        }
        Ok(hparams)
    }
}

/// One transformer block's weights.
struct Block {
    attn_norm: Tensor,
    attn_q: Weight,
    attn_k: Weight,
    attn_v: Weight,
    attn_q_bias: Tensor,
    attn_k_bias: Tensor,
    attn_v_bias: Tensor,
    attn_output: Weight,
    ffn_norm: Tensor,
    ffn_gate: Weight,
    ffn_up: Weight,
    ffn_down: Weight,
}

/// Rows (prompt tokens) from which a `Q8_0` weight that candle has no tiled kernel for is
/// multiplied as dequantized f32. Its generic `Q8_0` kernel reaches about 9 GFLOP/s on a
/// prompt, against about 60 for f32 gemm (`examples/prefill_kernels.rs`); one token (decode)
/// stays on the quantized kernel, which is the faster one there.
pub const DENSE_PROMPT_ROWS: usize = 32;

/// candle's tiled `Q8_0` kernels (AVX-512 VNNI or AVX-VNNI) take weights whose input width
/// is a multiple of this; Qwen2.5-0.5B's is 896.
const TILED_WIDTH: usize = 256;

/// Whether this CPU runs candle's tiled `Q8_0` kernels: 4–20× its generic one, for prompts
/// and single tokens alike, so narrower weights are padded to reach them.
fn tiled_q8_0_kernels() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        (is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512vnni"))
            || (is_x86_feature_detected!("avxvnni") && is_x86_feature_detected!("avx2"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// A quantized matmul weight `w`, applied as `x · wᵀ`.
struct Weight {
    quantized: Arc<QTensor>,
    matmul: QMatMul,
    /// The stored input width: wider than the model's when zero columns were added.
    width: usize,
    padded: bool,
}

impl Weight {
    /// Pads a `Q8_0` weight on the CPU with zero columns up to the tiled kernels' width
    /// when this CPU has them: zero weights read zero inputs, so the product is unchanged.
    fn new(quantized: Arc<QTensor>) -> Result<Self> {
        Self::build(quantized, tiled_q8_0_kernels())
    }

    fn build(quantized: Arc<QTensor>, tiled_kernels: bool) -> Result<Self> {
        let (_, width) = quantized.shape().dims2()?;
        let pad = width.next_multiple_of(TILED_WIDTH) - width;
        let (quantized, padded) =
            if tiled_kernels && pad > 0 && quantized.dtype() == GgmlDType::Q8_0 && quantized.device().is_cpu() {
                (Arc::new(pad_q8_0_columns(&quantized, pad)?), true)
            } else {
                (quantized, false)
            };
        Ok(Self {
            matmul: QMatMul::from_arc(Arc::clone(&quantized))?,
            width: quantized.shape().dims2()?.1,
            quantized,
            padded,
        })
    }

    /// Whether `rows` rows of input go through the dequantized weight.
    fn dense_for(&self, rows: usize, device: &Device) -> bool {
        device.is_cpu() && rows >= DENSE_PROMPT_ROWS && self.quantized.dtype() == GgmlDType::Q8_0 && !self.padded
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let (rows, width) = rows_of(x)?;
        if !self.dense_for(rows, x.device()) {
            return Ok(self.matmul.forward(&pad_last(x, self.width)?)?);
        }
        // The f32 copy lives only for this product: 4 bytes per weight would more than
        // double the model's memory if it were kept.
        let dense = self.quantized.dequantize(x.device())?;
        let product = x.reshape((rows, width))?.matmul(&dense.t()?)?;
        let mut dims = x.dims().to_vec();
        *dims
            .last_mut()
            .unwrap_or_else(|| unreachable!("rows_of checked the rank")) = dense.dim(0)?;
        Ok(product.reshape(dims)?)
    }
}

/// `x` with zeros appended along its last axis up to `width`.
fn pad_last(x: &Tensor, width: usize) -> Result<Tensor> {
    let have = x.dim(D::Minus1)?;
    Ok(if have < width {
        x.pad_with_zeros(D::Minus1, 0, width - have)?
    } else {
        x.clone()
    })
}

/// Appends `pad` zero columns (whole zero blocks) to every row of a `Q8_0` matrix.
fn pad_q8_0_columns(tensor: &QTensor, pad: usize) -> Result<QTensor> {
    let (rows, width) = tensor.shape().dims2()?;
    let block_values = GgmlDType::Q8_0.block_size();
    let (have, extra) = (width / block_values, pad / block_values);
    let data = tensor.data()?;
    let mut out = Vec::with_capacity(rows * (have + extra) * Q8_0_BLOCK);
    for row in data.chunks_exact(have * Q8_0_BLOCK) {
        out.extend_from_slice(row);
        out.resize(out.len() + extra * Q8_0_BLOCK, 0);
    }
    let storage = QStorage::from_data(out.into(), &Device::Cpu, GgmlDType::Q8_0)?;
    Ok(QTensor::new(storage, (rows, width + pad))?)
}

/// (rows, width) of `x` seen as a matrix of its last axis.
fn rows_of(x: &Tensor) -> Result<(usize, usize)> {
    let width = x.dim(D::Minus1)?;
    Ok((x.elem_count() / width.max(1), width))
}

/// The weights, shared by every generation; [`KvCache`] holds a generation's state.
pub struct Qwen2 {
    pub hparams: Hparams,
    token_embd: QTensor,
    blocks: Vec<Block>,
    output_norm: Tensor,
    output: Weight,
    cos: Tensor,
    sin: Tensor,
    device: Device,
}

use crate::kv_cache::BlockCache;
pub use crate::kv_cache::KvCache;

impl Qwen2 {
    /// Reads the model from `content` (already parsed from `reader`).
    pub fn from_gguf<R: Read + Seek>(
        path: &Path,
        content: &gguf_file::Content,
        reader: &mut R,
        device: &Device,
    ) -> Result<Self> {
        let format = |detail: String| LlmError::Format {
            path: path.to_path_buf(),
            detail,
        };
        let hparams = Hparams::from_gguf(content).map_err(format)?;
        let mut load = Loader {
            path,
            content,
            reader,
            device,
        };
        let mut blocks = Vec::with_capacity(hparams.block_count);
        for n in 0..hparams.block_count {
            let name = |part: &str| format!("blk.{n}.{part}");
            blocks.push(Block {
                attn_q: Weight::new(load.weight(&name("attn_q.weight"))?)?,
                attn_k: Weight::new(load.weight(&name("attn_k.weight"))?)?,
                attn_v: Weight::new(load.weight(&name("attn_v.weight"))?)?,
                attn_output: Weight::new(load.weight(&name("attn_output.weight"))?)?,
                ffn_gate: Weight::new(load.weight(&name("ffn_gate.weight"))?)?,
                ffn_up: Weight::new(load.weight(&name("ffn_up.weight"))?)?,
                ffn_down: Weight::new(load.weight(&name("ffn_down.weight"))?)?,
                attn_norm: load.dense(&name("attn_norm.weight"))?,
                ffn_norm: load.dense(&name("ffn_norm.weight"))?,
                attn_q_bias: load.dense(&name("attn_q.bias"))?,
                attn_k_bias: load.dense(&name("attn_k.bias"))?,
                attn_v_bias: load.dense(&name("attn_v.bias"))?,
            });
        }
        let output_norm = load.dense("output_norm.weight")?;
        // Small models may tie the output head to the embedding and ship no `output.weight`.
        let output = if content.tensor_infos.contains_key("output.weight") {
            load.weight("output.weight")?
        } else {
            load.weight("token_embd.weight")?
        };
        // Rows are looked up one token at a time, so the embedding stays quantized.
        let token_embd = load.raw("token_embd.weight")?;
        let token_embd = to_device(token_embd, device)?;
        let (cos, sin) = rope_tables(&hparams, device)?;
        Ok(Self {
            hparams,
            token_embd,
            blocks,
            output_norm,
            output: Weight::new(output)?,
            cos,
            sin,
            device: device.clone(),
        })
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    /// An empty cache for one generation.
    pub fn new_cache(&self) -> KvCache {
        KvCache::new(self.hparams.block_count)
    }

    /// Reads `ids` after the positions already in `cache` and returns the logits
    /// (f32, vocabulary-sized) that predict the token after the last of them.
    pub fn forward(&self, ids: &[u32], cache: &mut KvCache) -> Result<Tensor> {
        Ok(self.forward_tail(ids, 1, cache)?.flatten_all()?)
    }

    /// Reads `ids` like [`Qwen2::forward`] and returns the logits after each of the last
    /// `tail` of them, one row each (`(tail, vocabulary)`, f32): what checking a draft of
    /// `tail - 1` tokens in one pass needs. `tail` is at least 1 and at most `ids.len()`.
    pub fn forward_tail(&self, ids: &[u32], tail: usize, cache: &mut KvCache) -> Result<Tensor> {
        if ids.is_empty() {
            return Err(LlmError::EmptyPrompt);
        }
        let start = cache.len();
        let end = start + ids.len();
        if end > self.hparams.context_length {
            return Err(LlmError::PromptTooLong {
                tokens: end,
                max: self.hparams.context_length,
            });
        }
        let seq = ids.len();
        let ids = Tensor::new(ids, &self.device)?;
        let mut x = self.token_embd.embedding(&ids)?.unsqueeze(0)?;
        let mask = (seq > 1).then(|| causal_mask(seq, start, &self.device)).transpose()?;
        let cos = self.cos.narrow(0, start, seq)?;
        let sin = self.sin.narrow(0, start, seq)?;
        for (n, block) in self.blocks.iter().enumerate() {
            let h = candle_nn::ops::rms_norm(&x, &block.attn_norm, self.hparams.rms_norm_eps)?;
            let attended = self.attention(block, &h, mask.as_ref(), &cos, &sin, cache.block(n))?;
            x = (x + attended)?;
            let h = candle_nn::ops::rms_norm(&x, &block.ffn_norm, self.hparams.rms_norm_eps)?;
            let [gate, up] = shared_lhs_matmul([&block.ffn_gate, &block.ffn_up], &h)?;
            let mixed = (candle_nn::ops::silu(&gate)? * up)?;
            x = (x + block.ffn_down.forward(&mixed)?)?;
        }
        let tail = tail.clamp(1, seq);
        let last = x.narrow(1, seq - tail, tail)?;
        let last = candle_nn::ops::rms_norm(&last, &self.output_norm, self.hparams.rms_norm_eps)?;
        let logits = self.output.forward(&last)?;
        Ok(logits.reshape((tail, ()))?.to_dtype(DType::F32)?)
    }

    fn attention(
        &self,
        block: &Block,
        x: &Tensor,
        mask: Option<&Tensor>,
        cos: &Tensor,
        sin: &Tensor,
        kv: &mut BlockCache,
    ) -> Result<Tensor> {
        let (_, seq, hidden) = x.dims3()?;
        let heads = self.hparams.head_count;
        let kv_heads = self.hparams.head_count_kv;
        let head_dim = self.hparams.head_dim();
        let [q, k, v] = shared_lhs_matmul([&block.attn_q, &block.attn_k, &block.attn_v], x)?;
        let split = |t: Tensor, bias: &Tensor, n: usize| -> candle_core::Result<Tensor> {
            t.broadcast_add(bias)?
                .reshape((1, seq, n, head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = split(q, &block.attn_q_bias, heads)?;
        let k = split(k, &block.attn_k_bias, kv_heads)?;
        let v = split(v, &block.attn_v_bias, kv_heads)?;
        let q = candle_nn::rotary_emb::rope(&q, cos, sin)?;
        let k = candle_nn::rotary_emb::rope(&k, cos, sin)?;
        let (k, v) = kv.append(&k, &v)?;
        // On the CPU the cache's views are multiplied where they lie (candle's matmul
        // steps over the unused positions between heads): copying them first read and
        // wrote every cached key and value again for each token, in each block.
        let (k, v) = if x.device().is_cpu() {
            (k, v)
        } else {
            (k.contiguous()?, v.contiguous()?)
        };
        let total = k.dim(2)?;
        // Grouped-query attention without copying keys: the query heads that share a
        // key/value head are stacked along the sequence axis of that head.
        let group = heads / kv_heads;
        let q = q.reshape((1, kv_heads, group * seq, head_dim))?;
        let scale = 1.0 / (head_dim as f64).sqrt();
        let scores = (q.matmul(&k.t()?)? * scale)?;
        let scores = match mask {
            Some(mask) => scores
                .reshape((1, kv_heads, group, seq, total))?
                .broadcast_add(mask)?
                .reshape((1, kv_heads, group * seq, total))?,
            None => scores,
        };
        let weights = candle_nn::ops::softmax_last_dim(&scores)?;
        let out = weights.matmul(&v)?;
        let out = out
            .reshape((1, heads, seq, head_dim))?
            .transpose(1, 2)?
            .reshape((1, seq, hidden))?;
        block.attn_output.forward(&out)
    }
}

/// `x · wᵀ` for several weights that read the same input: one quantization of `x` and
/// one parallel region when candle has a fused kernel for them, separate matmuls otherwise.
fn shared_lhs_matmul<const N: usize>(weights: [&Weight; N], x: &Tensor) -> Result<[Tensor; N]> {
    let (rows, _) = rows_of(x)?;
    let width = weights[0].width;
    let fused = if weights
        .iter()
        .any(|w| w.dense_for(rows, x.device()) || w.width != width)
    {
        None
    } else {
        let tensors: Vec<&QTensor> = weights.iter().map(|w| &*w.quantized).collect();
        QTensor::gemv_fused_shared_lhs(&tensors, &pad_last(x, width)?)?
    };
    let outs = match fused {
        Some(outs) => outs,
        None => weights.iter().map(|w| w.forward(x)).collect::<Result<Vec<_>>>()?,
    };
    Ok(outs
        .try_into()
        .unwrap_or_else(|_| unreachable!("one output per weight")))
}

/// 0 where position `start + i` may look at `j`, −∞ after it.
fn causal_mask(seq: usize, start: usize, device: &Device) -> Result<Tensor> {
    let total = start + seq;
    let values: Vec<f32> = (0..seq)
        .flat_map(|i| (0..total).map(move |j| if j > start + i { f32::NEG_INFINITY } else { 0.0 }))
        .collect();
    Ok(Tensor::from_vec(values, (seq, total), device)?)
}

fn rope_tables(hparams: &Hparams, device: &Device) -> Result<(Tensor, Tensor)> {
    let head_dim = hparams.head_dim();
    let inverse: Vec<f32> = (0..head_dim)
        .step_by(2)
        .map(|i| 1.0 / hparams.rope_freq_base.powf(i as f32 / head_dim as f32))
        .collect();
    let inverse = Tensor::from_vec(inverse, (1, head_dim / 2), device)?;
    let positions = Tensor::arange(0u32, hparams.context_length as u32, device)?
        .to_dtype(DType::F32)?
        .reshape((hparams.context_length, 1))?;
    let angles = positions.broadcast_mul(&inverse)?;
    Ok((angles.cos()?, angles.sin()?))
}

/// Reads named tensors of one GGUF file onto one device.
struct Loader<'a, R> {
    path: &'a Path,
    content: &'a gguf_file::Content,
    reader: &'a mut R,
    device: &'a Device,
}

impl<R: Read + Seek> Loader<'_, R> {
    /// The tensor as stored, on the CPU.
    fn raw(&mut self, name: &str) -> Result<QTensor> {
        self.content
            .tensor(self.reader, name, &Device::Cpu)
            .map_err(|e| LlmError::Format {
                path: self.path.to_path_buf(),
                detail: format!("tensor {name}: {e}"),
            })
    }

    /// A matmul weight: `Q5_0` is widened to `Q8_0` on the CPU (see the module header).
    fn weight(&mut self, name: &str) -> Result<Arc<QTensor>> {
        let loaded = self.raw(name)?;
        let widened = if self.device.is_cpu() && loaded.dtype() == GgmlDType::Q5_0 {
            q5_0_to_q8_0(&loaded)?
        } else {
            loaded
        };
        Ok(Arc::new(to_device(widened, self.device)?))
    }

    /// A small tensor (norm, bias) as f32.
    fn dense(&mut self, name: &str) -> Result<Tensor> {
        Ok(self.raw(name)?.dequantize(self.device)?)
    }
}

fn to_device(tensor: QTensor, device: &Device) -> Result<QTensor> {
    if device.is_cpu() {
        return Ok(tensor);
    }
    let data = tensor.data()?;
    let storage = QStorage::from_data(data, device, tensor.dtype())?;
    Ok(QTensor::new(storage, tensor.shape().clone())?)
}

/// Bytes of one `Q5_0` block: f16 scale, 4 bytes of fifth bits, 16 bytes of nibbles.
const Q5_0_BLOCK: usize = 22;
/// Bytes of one `Q8_0` block: f16 scale, 32 signed bytes.
const Q8_0_BLOCK: usize = 34;

/// Rewrites `Q5_0` blocks as `Q8_0` blocks with the same scale: every 5-bit value minus 16
/// fits a signed byte, so the weights stay bit-for-bit the same numbers.
pub fn q5_0_to_q8_0(tensor: &QTensor) -> Result<QTensor> {
    let data = tensor.data()?;
    let mut out = Vec::with_capacity(data.len() / Q5_0_BLOCK * Q8_0_BLOCK);
    for block in data.chunks_exact(Q5_0_BLOCK) {
        let (scale, rest) = block.split_at(2);
        let (high, nibbles) = rest.split_at(4);
        let high = u32::from_le_bytes([high[0], high[1], high[2], high[3]]);
        out.extend_from_slice(scale);
        let value = |low: u8, bit: u32| -> u8 {
            let five = low | (((high >> bit) & 1) as u8) << 4;
            (i16::from(five) - 16) as i8 as u8
        };
        out.extend(nibbles.iter().enumerate().map(|(j, &q)| value(q & 0x0f, j as u32)));
        out.extend(nibbles.iter().enumerate().map(|(j, &q)| value(q >> 4, j as u32 + 16)));
    }
    let storage = QStorage::from_data(out.into(), &Device::Cpu, GgmlDType::Q8_0)?;
    Ok(QTensor::new(storage, tensor.shape().clone())?)
}

/// The index of the largest logit (greedy decoding).
pub fn argmax(logits: &Tensor) -> Result<u32> {
    Ok(logits.argmax(D::Minus1)?.to_scalar::<u32>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q5_0_widened_to_q8_0_holds_the_same_numbers() {
        let values: Vec<f32> = (0..64 * 64).map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0).collect();
        let dense = Tensor::from_vec(values, (64, 64), &Device::Cpu).unwrap();
        let q5 = QTensor::quantize(&dense, GgmlDType::Q5_0).unwrap();
        let q8 = q5_0_to_q8_0(&q5).unwrap();
        assert_eq!(q8.dtype(), GgmlDType::Q8_0);
        assert_eq!(q8.shape(), q5.shape());
        let numbers = |q: &QTensor| -> Vec<f32> {
            q.dequantize(&Device::Cpu)
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1()
                .unwrap()
        };
        let (five, eight) = (numbers(&q5), numbers(&q8));
        assert_eq!(five, eight);
        assert!(five.iter().filter(|v| **v != 0.0).count() > 64 * 64 / 2, "{five:?}");
    }

    /// A 96×64 `Q8_0` weight and `rows` inputs, with the product of candle's own kernel.
    fn weight_and_product(rows: usize) -> (Arc<QTensor>, Tensor, Tensor) {
        let device = Device::Cpu;
        let values: Vec<f32> = (0..96 * 64).map(|i| ((i * 53 % 97) as f32 - 48.0) / 300.0).collect();
        let dense = Tensor::from_vec(values, (96, 64), &device).unwrap();
        let quantized = Arc::new(QTensor::quantize(&dense, GgmlDType::Q8_0).unwrap());
        let inputs: Vec<f32> = (0..rows * 64).map(|i| ((i * 29 % 61) as f32 - 30.0) / 10.0).collect();
        let x = Tensor::from_vec(inputs, (1, rows, 64), &device).unwrap();
        let product = QMatMul::from_arc(Arc::clone(&quantized)).unwrap().forward(&x).unwrap();
        (quantized, x, product)
    }

    /// The largest difference between `ours` and `kernel`, and the largest value of `kernel`.
    fn worst_and_scale(ours: &Tensor, kernel: &Tensor) -> (f32, f32) {
        let max = |t: Tensor| t.abs().unwrap().max_all().unwrap().to_scalar::<f32>().unwrap();
        (max((ours - kernel).unwrap()), max(kernel.clone()))
    }

    #[test]
    fn a_prompt_through_the_dequantized_weight_gives_the_quantized_kernels_numbers() {
        let rows = DENSE_PROMPT_ROWS + 3;
        let (quantized, x, kernel) = weight_and_product(rows);
        let weight = Weight::build(quantized, false).unwrap();
        assert!(weight.dense_for(rows, &Device::Cpu) && !weight.dense_for(1, &Device::Cpu));

        let ours = weight.forward(&x).unwrap();
        assert_eq!(ours.dims(), &[1, rows, 96]);
        // The kernel also quantizes the input to 8 bits; the dense path keeps it f32.
        let (worst, scale) = worst_and_scale(&ours, &kernel);
        assert!(scale > 1.0 && worst < scale * 0.01, "worst {worst} of {scale}");
    }

    #[test]
    fn zero_columns_for_the_tiled_kernels_leave_the_product_unchanged() {
        for rows in [1, DENSE_PROMPT_ROWS + 3] {
            let (quantized, x, kernel) = weight_and_product(rows);
            let weight = Weight::build(Arc::clone(&quantized), true).unwrap();
            assert!(weight.padded && !weight.dense_for(rows, &Device::Cpu));
            assert_eq!(weight.quantized.shape().dims(), &[96, TILED_WIDTH]);
            // The stored numbers are the old ones followed by zeros.
            let padded = weight.quantized.dequantize(&Device::Cpu).unwrap();
            let original = quantized.dequantize(&Device::Cpu).unwrap();
            assert_eq!(
                padded.narrow(1, 0, 64).unwrap().to_vec2::<f32>().unwrap(),
                original.to_vec2::<f32>().unwrap()
            );
            let zeros = padded.narrow(1, 64, TILED_WIDTH - 64).unwrap().flatten_all().unwrap();
            assert!(zeros.to_vec1::<f32>().unwrap().iter().all(|v| *v == 0.0));

            let ours = weight.forward(&x).unwrap();
            assert_eq!(ours.dims(), &[1, rows, 96]);
            let (worst, scale) = worst_and_scale(&ours, &kernel);
            assert!(
                scale > 1.0 && worst < scale * 0.01,
                "{rows} rows: worst {worst} of {scale}"
            );
        }
    }

    #[test]
    fn the_causal_mask_hides_only_later_positions() {
        let mask = causal_mask(2, 3, &Device::Cpu).unwrap().to_vec2::<f32>().unwrap();
        let inf = f32::NEG_INFINITY;
        assert_eq!(mask, vec![vec![0.0, 0.0, 0.0, 0.0, inf], vec![0.0; 5]]);
    }
}
