//! Why prompts multiply `Q8_0` weights as dequantized f32: candle's CPU matmul for each
//! weight type of the embedded model, at its shapes, against dequantize + f32 gemm.
//!
//! `RAYON_NUM_THREADS=2 cargo run --release -p replayground-llm --example prefill_kernels`

#![allow(clippy::print_stdout)]

use std::time::Instant;

use anyhow::Result;
use candle_core::quantized::{GgmlDType, QMatMul, QTensor};
use candle_core::{Device, Module, Tensor};

/// Mean seconds of `runs` calls, after one warm-up call.
fn seconds(runs: u32, mut f: impl FnMut() -> Result<Tensor>) -> Result<f64> {
    f()?;
    let start = Instant::now();
    for _ in 0..runs {
        f()?;
    }
    Ok(start.elapsed().as_secs_f64() / f64::from(runs))
}

fn main() -> Result<()> {
    let device = Device::Cpu;
    println!("| weight | rows | quantized GFLOP/s | dequantize + f32 GFLOP/s | dense / quantized |");
    println!("| --- | --- | --- | --- | --- |");
    // (out, in) of ffn_gate/up, ffn_down and attn_q in Qwen2.5-Coder-0.5B.
    for (n, k, dtype) in [
        (4864, 896, GgmlDType::Q8_0),
        (896, 896, GgmlDType::Q8_0),
        (896, 4864, GgmlDType::Q4K),
        (896, 4864, GgmlDType::Q6K),
    ] {
        let weight = QTensor::quantize(&Tensor::randn(0f32, 0.05, (n, k), &device)?, dtype)?;
        let matmul = QMatMul::from_qtensor(weight)?;
        let QMatMul::QTensor(quantized) = &matmul else {
            anyhow::bail!("{dtype:?} was not kept quantized");
        };
        for rows in [1usize, 32, 512] {
            let x = Tensor::randn(0f32, 1.0, (rows, k), &device)?;
            let q = seconds(3, || Ok(matmul.forward(&x)?))?;
            let d = seconds(3, || Ok(x.matmul(&quantized.dequantize(&device)?.t()?)?))?;
            let flop = 2.0 * (rows * n * k) as f64;
            println!(
                "| {dtype:?} {n}×{k} | {rows} | {:.1} | {:.1} | {:.2}× |",
                flop / q / 1e9,
                flop / d / 1e9,
                q / d
            );
        }
    }
    Ok(())
}
