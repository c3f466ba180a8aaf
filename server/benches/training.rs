//! Training throughput of the neural debugger's model on the CPU: one optimiser step
//! (forward, backward, `AdamW`) against the forward pass alone as the baseline measured
//! in the same run. Tokens per second = batch × context / time per step.

use std::hint::black_box;

use candle_core::{DType, Device, Tensor};
use candle_nn::{VarBuilder, VarMap};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use replayground_server::neural::model::{Qwen2Config, TrainableQwen2};
use replayground_server::neural::train::{AdamW, initialize};

fn bench(c: &mut Criterion) {
    // About the size RECIPES.md measured first: 5.8M parameters at context 512.
    let config = Qwen2Config::small(4096, 256, 4, 8, 512);
    let varmap = VarMap::new();
    let vb = VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu);
    let model = TrainableQwen2::new(&config, &vb).expect("the model builds");
    initialize(&varmap, 1, 4).expect("initialised");
    let mut optimizer = AdamW::new(&varmap, 0.1).expect("the optimiser builds");
    let (batch, context) = (2usize, 512usize);
    let ids: Vec<u32> = (0..batch * context).map(|i| (i * 7919 % 4096) as u32).collect();
    let inputs = Tensor::from_vec(ids.clone(), (batch, context), &Device::Cpu).unwrap();
    let targets = Tensor::from_vec(ids, (batch, context), &Device::Cpu)
        .unwrap()
        .flatten_all()
        .unwrap();

    let mut group = c.benchmark_group(format!("training_{:.1}M_params", config.parameters() as f64 / 1e6));
    group.sample_size(10);
    group.throughput(Throughput::Elements((batch * context) as u64));
    group.bench_function("forward_only_baseline", |b| {
        b.iter(|| black_box(model.forward(&inputs).unwrap()));
    });
    group.bench_function("train_step", |b| {
        b.iter(|| {
            let logits = model.forward(&inputs).unwrap();
            let loss = candle_nn::loss::cross_entropy(&logits.flatten_to(1).unwrap(), &targets).unwrap();
            let grads = loss.backward().unwrap();
            black_box(optimizer.step(&grads, 1e-3, 1.0).unwrap());
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
