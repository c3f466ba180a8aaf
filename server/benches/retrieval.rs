//! The reproduction agent's context stage on the fixture project (11 Python files): one query
//! ranked by BM25 alone (the baseline) against the hybrid ranking (query embedding, HNSW,
//! cosine rerank), and embedding time per chunk, alone and in batches of 16.
//! The dense benchmarks need the model from `cargo xtask setup`; without it only BM25 runs.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use replayground_server::repro::chunk::chunk_project;
use replayground_server::repro::embed::Embedder;
use replayground_server::repro::project::Project;
use replayground_server::repro::retrieval::{RetrievalConfig, Retriever};

const QUERY: &str = "Training loss becomes nan after a few epochs; the cross entropy takes log(0) without clipping.";

fn bench(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/repro_project");
    let project = Project::from_dir(&dir).expect("the fixture project reads");
    let embedder = Embedder::locate().and_then(|dir| Embedder::load(&dir).ok());
    let config = RetrievalConfig::default();

    let mut group = c.benchmark_group("retrieval");
    group.sample_size(20);
    let bm25 = Retriever::build(&project, None, &mut |_, _| {}).expect("indexed");
    group.bench_function("build_bm25", |b| {
        b.iter(|| black_box(Retriever::build(&project, None, &mut |_, _| {}).unwrap()));
    });
    group.bench_function("query_bm25_baseline", |b| {
        b.iter(|| black_box(bm25.retrieve(QUERY, &config, None, None)));
    });
    let Some(embedder) = embedder else {
        group.finish();
        eprintln!("retrieval bench: no embedding model (run `cargo xtask setup`); dense benchmarks skipped");
        return;
    };
    let hybrid = Retriever::build(&project, Some(&embedder), &mut |_, _| {}).expect("indexed");
    group.bench_function("query_hybrid", |b| {
        b.iter(|| black_box(hybrid.retrieve(QUERY, &config, Some(&embedder), None)));
    });
    group.finish();

    let chunks = chunk_project(&project);
    let texts: Vec<&str> = chunks.iter().map(|chunk| chunk.text.as_str()).take(16).collect();
    let mut group = c.benchmark_group("embedding");
    group.sample_size(10);
    group.throughput(Throughput::Elements(1));
    group.bench_function("one_chunk", |b| {
        b.iter(|| black_box(embedder.embed(&texts[..1]).unwrap()));
    });
    group.throughput(Throughput::Elements(texts.len() as u64));
    group.bench_function("batch_of_16_chunks", |b| {
        b.iter(|| black_box(embedder.embed(&texts).unwrap()));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
