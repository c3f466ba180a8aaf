//! The reproduction agent's context stage (RepGen §3.1): reading uploaded projects
//! safely, chunking, training-loop detection, dependency resolution and hybrid retrieval
//! on the fixture project `tests/fixtures/repro_project` (a numpy MLP with one planted
//! bug per module).

use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use replayground_server::repro::chunk::chunk_project;
use replayground_server::repro::embed::{Embedder, cosine};
use replayground_server::repro::extract::{training_loops, with_dependencies};
use replayground_server::repro::project::{MAX_FILES, Project, ProjectError};
use replayground_server::repro::retrieval::{RetrievalConfig, Retriever};
use replayground_shared::repro::{ChunkKind, MAX_PROJECT_ARCHIVE_BYTES};
use zip::write::SimpleFileOptions;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/repro_project")
}

fn fixture() -> Project {
    Project::from_dir(&fixture_dir()).expect("the fixture project reads")
}

/// The installed embedding model; CI runs `cargo xtask setup` first, so its absence fails.
fn embedder() -> &'static Embedder {
    static EMBEDDER: OnceLock<Embedder> = OnceLock::new();
    EMBEDDER.get_or_init(|| {
        let dir = Embedder::locate().expect(
            "the embedding model is not installed: run `cargo xtask setup` (it fetches all-MiniLM-L6-v2 into .tools/models)",
        );
        Embedder::load(&dir).unwrap_or_else(|error| panic!("{error} (run `cargo xtask setup`)"))
    })
}

fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in entries {
        writer.start_file(*name, options).unwrap();
        writer.write_all(bytes).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// A tar.gz whose entry names are written raw, so tests can plant `../` names that the
/// `tar` crate's own builder refuses.
fn tar_gz_of(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
    for (name, kind, bytes) in entries {
        let mut header = tar::Header::new_gnu();
        let raw = &mut header.as_gnu_mut().unwrap().name;
        raw[..name.len()].copy_from_slice(name.as_bytes());
        header.set_entry_type(*kind);
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        if *kind == tar::EntryType::Symlink {
            header.set_link_name("/etc/passwd").unwrap();
        }
        header.set_cksum();
        builder.append(&header, *bytes).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap()
}

#[test]
fn a_zip_is_read_into_memory_without_its_top_folder() {
    let bytes = zip_of(&[
        ("proj-main/train.py", b"import numpy as np\n"),
        ("proj-main/pkg/model.py", b"class Model:\n    pass\n"),
        ("proj-main/README.md", b"# proj\n"),
        ("proj-main/data/weights.bin", &[0, 1, 2, 3]),
        ("proj-main/.git/config", b"[core]\n"),
    ]);
    let project = Project::from_archive("proj.zip", &bytes).unwrap();
    let paths: Vec<&str> = project.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["README.md", "pkg/model.py", "train.py"]);
    assert_eq!(project.python_files().count(), 2);
}

#[test]
fn a_tar_gz_with_a_top_folder_is_read_and_links_are_ignored() {
    let bytes = tar_gz_of(&[
        ("repo-1.0/", tar::EntryType::Directory, b""),
        ("repo-1.0/main.py", tar::EntryType::Regular, b"print('hi')\n"),
        (
            "repo-1.0/lib/util.py",
            tar::EntryType::Regular,
            b"def f():\n    return 1\n",
        ),
        ("repo-1.0/passwd.py", tar::EntryType::Symlink, b""),
    ]);
    let project = Project::from_archive("repo.tar.gz", &bytes).unwrap();
    let paths: Vec<&str> = project.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["lib/util.py", "main.py"]);
    assert_eq!(project.file("main.py").unwrap().text, "print('hi')\n");
}

#[test]
fn zip_slip_and_absolute_paths_refuse_the_archive() {
    for name in ["../evil.py", "ok/../../evil.py", "/etc/cron.d/evil.py"] {
        let bytes = zip_of(&[("fine.py", b"x = 1\n"), (name, b"import os\n")]);
        let error = Project::from_archive("evil.zip", &bytes).unwrap_err();
        assert!(matches!(error, ProjectError::UnsafePath { .. }), "{name}: {error}");
        assert!(error.to_string().contains("outside the project"), "{error}");
    }
    let bytes = tar_gz_of(&[("../../evil.py", tar::EntryType::Regular, b"import os\n")]);
    assert!(matches!(
        Project::from_archive("evil.tar.gz", &bytes),
        Err(ProjectError::UnsafePath { .. })
    ));
}

#[test]
fn garbage_truncated_and_oversized_uploads_get_clear_errors() {
    let error = Project::from_archive("notes.txt", b"just some text, not an archive").unwrap_err();
    assert!(error.to_string().contains("not a zip or tar.gz"), "{error}");

    let mut truncated = zip_of(&[("a.py", b"x = 1\n")]);
    truncated.truncate(truncated.len() / 2);
    let error = Project::from_archive("cut.zip", &truncated).unwrap_err();
    assert!(matches!(error, ProjectError::Corrupt { .. }), "{error}");

    let huge = vec![0_u8; MAX_PROJECT_ARCHIVE_BYTES + 1];
    let error = Project::from_archive("huge.zip", &huge).unwrap_err();
    assert!(matches!(error, ProjectError::ArchiveTooLarge { .. }), "{error}");
    assert!(error.to_string().contains("limit is 20 MB"), "{error}");

    let error = Project::from_archive("empty.zip", &zip_of(&[("README.md", b"# nothing\n")])).unwrap_err();
    assert!(matches!(error, ProjectError::NoPython), "{error}");
}

#[test]
fn zip_bombs_and_file_floods_stop_at_the_limits() {
    // 120 MB of zeros compresses to well under the upload limit.
    let zeros = vec![0_u8; 30 * 1024 * 1024];
    let entries: Vec<(String, &[u8])> = (0..4).map(|i| (format!("blob{i}.bin"), zeros.as_slice())).collect();
    let mut named: Vec<(&str, &[u8])> = entries.iter().map(|(n, b)| (n.as_str(), *b)).collect();
    named.push(("main.py", b"x = 1\n"));
    let bomb = zip_of(&named);
    assert!(bomb.len() < MAX_PROJECT_ARCHIVE_BYTES);
    assert!(matches!(
        Project::from_archive("bomb.zip", &bomb),
        Err(ProjectError::TooLargeUnpacked)
    ));

    let names: Vec<String> = (0..=MAX_FILES).map(|i| format!("f{i}.py")).collect();
    let flood: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), b"x = 1\n".as_slice())).collect();
    assert!(matches!(
        Project::from_archive("flood.zip", &zip_of(&flood)),
        Err(ProjectError::TooManyFiles)
    ));
}

#[test]
fn oversized_and_undecodable_python_files_are_skipped_with_a_note() {
    let big = vec![b'#'; 3 * 1024 * 1024];
    let bytes = zip_of(&[
        ("big.py", &big),
        ("latin1.py", b"name = '\xe9t\xe9'\n"),
        ("ok.py", b"x = 1\n"),
    ]);
    let project = Project::from_archive("p.zip", &bytes).unwrap();
    assert_eq!(
        project.python_files().map(|f| f.path.as_str()).collect::<Vec<_>>(),
        ["ok.py"]
    );
    assert_eq!(project.notes.len(), 2, "{:?}", project.notes);
    assert!(
        project.notes.iter().any(|n| n.contains("big.py") && n.contains("2 MB")),
        "{:?}",
        project.notes
    );
    assert!(
        project
            .notes
            .iter()
            .any(|n| n.contains("latin1.py") && n.contains("UTF-8")),
        "{:?}",
        project.notes
    );
}

#[test]
fn the_fixture_is_chunked_with_qualified_names_and_lines() {
    let project = fixture();
    assert_eq!(project.python_files().count(), 11);
    let chunks = chunk_project(&project);
    // A module chunk is named after its module, so `train.py` has a module `train` and a function `train`.
    let find = |path: &str, name: &str| {
        chunks
            .iter()
            .rev()
            .find(|c| c.path == path && c.name == name)
            .unwrap_or_else(|| panic!("no chunk {name} in {path}"))
    };
    let mlp = find("mlp/model.py", "MLP");
    assert_eq!((mlp.kind, mlp.start_line, mlp.end_line), (ChunkKind::Class, 15, 41));
    let backward = find("mlp/model.py", "MLP.backward");
    assert_eq!(
        (backward.kind, backward.start_line, backward.end_line),
        (ChunkKind::Function, 29, 35)
    );
    assert!(
        backward
            .text
            .trim_start()
            .starts_with("def backward(self, grad_logits):")
    );
    let train = find("train.py", "train");
    assert_eq!(
        (train.kind, train.start_line, train.end_line),
        (ChunkKind::Function, 11, 28)
    );
    let top = find("mlp/config.py", "mlp.config");
    assert_eq!(
        (top.kind, top.spans.as_slice()),
        (ChunkKind::Module, [(1, 3)].as_slice())
    );
    let config = find("mlp/config.py", "Config");
    assert_eq!(
        (config.start_line, config.end_line),
        (6, 14),
        "the decorator belongs to the class"
    );
}

/// Python snippets and whether they hold a training loop.
const LOOP_SNIPPETS: [(&str, bool); 18] = [
    // PyTorch: the classic loop.
    (
        "for x, y in loader:\n    optimizer.zero_grad()\n    loss = F.cross_entropy(model(x), y)\n    loss.backward()\n    optimizer.step()\n",
        true,
    ),
    // PyTorch: nested epochs, inside a function, with a self.optimizer.
    (
        "class T:\n    def fit(self):\n        for epoch in range(3):\n            for batch in self.data:\n                self.opt.zero_grad()\n                self.loss(batch).backward()\n                self.opt.step()\n",
        true,
    ),
    // PyTorch: while loop with AMP's GradScaler.
    (
        "step = 0\nwhile step < 100:\n    with autocast():\n        loss = model(x).sum()\n    scaler.scale(loss).backward()\n    scaler.step(optimizer)\n    scaler.update()\n    step += 1\n",
        true,
    ),
    // PyTorch: only optimizer.step in a loop (gradients from elsewhere).
    (
        "for group in batches:\n    compute_grads(group)\n    g_optimizer.step()\n",
        true,
    ),
    // Keras: compile + fit.
    (
        "import tensorflow as tf\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(1)])\nmodel.compile('adam', 'mse')\nmodel.fit(x, y, epochs=5)\n",
        true,
    ),
    // Keras: fit with keyword arguments and no import in the snippet.
    (
        "history = net.fit(train_ds, validation_data=val_ds, epochs=10, callbacks=[stop])\n",
        true,
    ),
    // Keras: train_on_batch in a loop.
    (
        "from keras.models import Model\nfor i in range(steps):\n    d_loss = discriminator.train_on_batch(real, ones)\n",
        true,
    ),
    // TF2: custom loop with GradientTape and apply_gradients.
    (
        "import tensorflow as tf\n@tf.function\ndef train_step(x, y):\n    with tf.GradientTape() as tape:\n        loss = loss_fn(y, model(x, training=True))\n    grads = tape.gradient(loss, model.trainable_variables)\n    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n    return loss\n",
        true,
    ),
    // TF1: session run in a loop.
    (
        "import tensorflow as tf\nwith tf.Session() as sess:\n    sess.run(init)\n    for step in range(1000):\n        _, l = sess.run([train_op, loss], feed_dict={x: bx})\n",
        true,
    ),
    // Lightning: training_step in a LightningModule.
    (
        "import pytorch_lightning as pl\nclass Lit(pl.LightningModule):\n    def training_step(self, batch, batch_idx):\n        x, y = batch\n        return F.mse_loss(self(x), y)\n",
        true,
    ),
    // PyTorch: a decorated function holding the loop.
    (
        "@torch.enable_grad()\ndef run(model, opt, data):\n    for x in data:\n        model(x).mean().backward()\n        opt.step()\n",
        true,
    ),
    // Not loops: inference under no_grad.
    (
        "with torch.no_grad():\n    for x, y in loader:\n        correct += (model(x).argmax(1) == y).sum()\n",
        false,
    ),
    // Not a loop: a single backward outside any loop.
    ("loss = model(x).sum()\nloss.backward()\nprint(x.grad)\n", false),
    // Not a loop: scikit-learn's fit.
    (
        "from sklearn.linear_model import LogisticRegression\nclf = LogisticRegression()\nclf.fit(X, y)\n",
        false,
    ),
    // Not a loop: a reinforcement-learning environment's step and a scheduler's step.
    (
        "for t in range(100):\n    obs, reward, done, info = env.step(action)\n    scheduler.step()\n",
        false,
    ),
    // Not a loop: a GradientTape for saliency without apply_gradients.
    (
        "import tensorflow as tf\nwith tf.GradientTape() as tape:\n    tape.watch(image)\n    score = model(image)\ngrads = tape.gradient(score, image)\n",
        false,
    ),
    // Not a loop: session.run once, outside any loop.
    (
        "import tensorflow as tf\nsess = tf.Session()\nprint(sess.run(c))\n",
        false,
    ),
    // Not a loop: a method named like a training step outside any class.
    (
        "def training_step(batch):\n    return batch\nfor b in data:\n    training_step(b)\n",
        false,
    ),
];

#[test]
fn training_loops_are_detected_with_full_precision_and_recall() {
    let (mut true_positive, mut false_positive, mut false_negative) = (0, 0, 0);
    for (index, (source, expected)) in LOOP_SNIPPETS.iter().enumerate() {
        let found = training_loops("snippet.py", source);
        match (*expected, !found.is_empty()) {
            (true, true) => true_positive += 1,
            (false, true) => {
                false_positive += 1;
                eprintln!("snippet {index}: false positive {found:?}");
            }
            (true, false) => {
                false_negative += 1;
                eprintln!("snippet {index}: missed");
            }
            (false, false) => {}
        }
    }
    let positives = LOOP_SNIPPETS.iter().filter(|(_, expected)| *expected).count();
    assert!(positives >= 10 && LOOP_SNIPPETS.len() - positives >= 5);
    let precision = f64::from(true_positive) / f64::from(true_positive + false_positive).max(1.0);
    let recall = f64::from(true_positive) / f64::from(true_positive + false_negative).max(1.0);
    assert_eq!(
        (precision, recall),
        (1.0, 1.0),
        "precision {precision}, recall {recall}"
    );
}

#[test]
fn a_training_loop_is_reported_where_it_starts_with_its_framework() {
    let nested = LOOP_SNIPPETS[1].0;
    let found = training_loops("t.py", nested);
    assert_eq!(found.len(), 1, "nested loops are one training loop: {found:?}");
    assert_eq!(
        (found[0].line, found[0].end_line, found[0].framework, found[0].kind),
        (3, 7, "pytorch", "loop")
    );
    let tape = training_loops("t.py", LOOP_SNIPPETS[7].0);
    assert_eq!(
        (tape[0].line, tape[0].framework, tape[0].kind),
        (4, "tensorflow", "gradient_tape")
    );
    let lightning = training_loops("t.py", LOOP_SNIPPETS[9].0);
    assert_eq!((lightning[0].line, lightning[0].framework), (3, "lightning"));
    let fixture = fixture();
    let train = fixture.file("train.py").unwrap();
    let loops = training_loops(&train.path, &train.text);
    assert_eq!(loops.iter().map(|l| l.line).collect::<Vec<_>>(), [18], "{loops:?}");
}

#[test]
fn dependencies_bring_the_imports_and_helpers_a_chunk_uses() {
    let project = fixture();
    // `train` (lines 11–28) calls helpers from five project modules.
    let context = with_dependencies(&project, "train.py", 11, 28);
    assert!(context.starts_with("# --- train.py ---\n"), "{context}");
    for wanted in [
        "from mlp.losses import cross_entropy, cross_entropy_grad",
        "def cross_entropy(logits, labels):",
        "# --- mlp/losses.py ---",
        "def softmax(logits):",
        "# --- mlp/data.py ---",
        "def batch_iterator(",
        "class StepLR:",
        "class MLP:",
        "def init_weights(",
        "import numpy as np",
    ] {
        assert!(context.contains(wanted), "missing {wanted:?} in\n{context}");
    }
    // Unused helpers stay out.
    assert!(!context.contains("def mean_squared_error"), "{context}");
    assert!(!context.contains("add_gaussian_noise"), "{context}");

    // A method keeps its class header, the constructor and the sibling methods it calls
    // through `self`.
    let context = with_dependencies(&project, "mlp/model.py", 40, 41);
    assert!(context.contains("class MLP:\n    def __init__("), "{context}");
    assert!(context.contains("\n    def forward(self, x):"), "{context}");
    assert!(context.contains("\n    def predict(self, x):"), "{context}");
    assert!(!context.contains("def backward"), "{context}");
    assert!(context.contains("def relu(x):"), "{context}");
}

/// Reports about the fixture's planted bugs and the file that holds each.
const REPORTS: [(&str, &str); 5] = [
    (
        "Training loss becomes nan after a few epochs. The cross entropy of the predicted class probabilities \
         goes to inf when a probability underflows to zero, log(0) is taken without clipping.",
        "mlp/losses.py",
    ),
    (
        "Accuracy printed by evaluate is wrong, sometimes above 1.0; predictions seem to be taken with argmax over \
         the wrong axis of the logits.",
        "mlp/metrics.py",
    ),
    (
        "After save and reload of a checkpoint the model gives different predictions: the bias vectors b1 and b2 \
         are not restored when loading the saved weights.",
        "mlp/checkpoint.py",
    ),
    (
        "The learning rate never decays: the StepLR scheduler keeps lr at 0.1 for all epochs although step_size \
         and gamma are set.",
        "mlp/optim.py",
    ),
    (
        "Some training samples are never used: with 409 samples and batch_size 32 the last incomplete mini-batch \
         is dropped by the batch iterator.",
        "mlp/data.py",
    ),
];

fn assert_buggy_file_first(retriever: &Retriever, embedder: Option<&Embedder>, label: &str) {
    let config = RetrievalConfig::default();
    for (report, expected) in REPORTS {
        let started = Instant::now();
        let contexts = retriever.retrieve(report, &config, embedder, None);
        let elapsed = started.elapsed();
        eprintln!("{label}: {elapsed:?} for {expected}");
        assert!(!contexts.is_empty() && contexts.len() <= config.top_k);
        let ranked: Vec<String> = contexts
            .iter()
            .map(|c| format!("{} {} {:.3}", c.path, c.name, c.score))
            .collect();
        assert_eq!(contexts[0].path, expected, "{label}: {report}\nranked: {ranked:#?}");
        assert!(
            contexts.windows(2).all(|w| w[0].score >= w[1].score),
            "{label}: not sorted: {ranked:#?}"
        );
        assert!(!contexts[0].code.is_empty());
    }
}

#[test]
fn bm25_alone_puts_the_buggy_file_first() {
    let project = fixture();
    let retriever = Retriever::build(&project, None, &mut |_, _| {}).unwrap();
    assert!(!retriever.has_dense());
    assert_buggy_file_first(&retriever, None, "bm25");
    let contexts = retriever.retrieve(REPORTS[0].0, &RetrievalConfig::default(), None, None);
    assert!(contexts.iter().all(|c| c.dense <= 0.0 && c.rerank.is_none()));
    let loop_context = retriever.retrieve(
        "training loop epochs optimizer step",
        &RetrievalConfig::default(),
        None,
        None,
    );
    assert!(
        loop_context
            .iter()
            .any(|c| c.path == "train.py" && c.name == "train" && c.training_loop),
        "{loop_context:#?}"
    );
}

#[test]
fn hybrid_retrieval_puts_the_buggy_file_first() {
    let project = fixture();
    let embedder = embedder();
    let mut progress = Vec::new();
    let started = Instant::now();
    let retriever = Retriever::build(&project, Some(embedder), &mut |done, total| {
        progress.push((done, total));
    })
    .unwrap();
    let chunks = retriever.chunks().len();
    eprintln!(
        "hybrid: built {chunks} chunks in {:?} ({:?} per chunk)",
        started.elapsed(),
        started.elapsed() / chunks as u32
    );
    assert_eq!(progress.first(), Some(&(0, chunks)));
    assert_eq!(progress.last(), Some(&(chunks, chunks)));
    assert!(retriever.has_dense());
    assert_buggy_file_first(&retriever, Some(embedder), "hybrid");
    let contexts = retriever.retrieve(REPORTS[1].0, &RetrievalConfig::default(), Some(embedder), None);
    assert!(contexts.iter().any(|c| c.dense > 0.0), "{contexts:#?}");
    assert!(
        contexts.iter().all(|c| c.rerank.is_some()),
        "the bi-encoder reranks without a cross-encoder"
    );
}

#[test]
fn similar_sentences_embed_closer_than_unrelated_ones() {
    let embedder = embedder();
    let texts = [
        "The training loss becomes NaN after a few epochs.",
        "After some epochs the loss turns into not-a-number.",
        "The web page loads slowly on mobile phones.",
        "def cross_entropy(logits, labels):\n    return -np.log(softmax(logits)[labels]).mean()",
    ];
    let started = Instant::now();
    let vectors = embedder.embed(&texts).unwrap();
    eprintln!("embedded {} texts in {:?}", texts.len(), started.elapsed());
    for vector in &vectors {
        assert_eq!(vector.len(), 384);
        let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "not normalised: {norm}");
    }
    let similar = cosine(&vectors[0], &vectors[1]);
    let unrelated = cosine(&vectors[0], &vectors[2]);
    assert!(similar > unrelated + 0.2, "similar {similar} vs unrelated {unrelated}");
    assert!(cosine(&vectors[0], &vectors[3]) > cosine(&vectors[2], &vectors[3]));
    // Batching and padding do not change a text's vector.
    let alone = embedder.embed(&texts[..1]).unwrap();
    assert!(cosine(&alone[0], &vectors[0]) > 0.9999);
}

#[test]
fn an_incomplete_model_directory_names_the_missing_file_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.json"), "{}").unwrap();
    let Err(error) = Embedder::load(dir.path()) else {
        panic!("loaded an empty model directory")
    };
    let message = error.to_string();
    assert!(
        message.contains("tokenizer.json") && message.contains("cargo xtask setup"),
        "{message}"
    );
}

/// A tiny BERT config with MiniLM's vocabulary, so the installed tokenizer fits it.
const TINY_BERT_CONFIG: &str = r#"{"vocab_size": 30522, "hidden_size": 32, "num_hidden_layers": 2,
  "num_attention_heads": 2, "intermediate_size": 64, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
  "max_position_embeddings": 512, "type_vocab_size": 2, "initializer_range": 0.02,
  "layer_norm_eps": 1e-12, "pad_token_id": 0, "model_type": "bert"}"#;

/// Writes a randomly initialised `BertForSequenceClassification` directory; `head` adds
/// the pooler and classifier weights.
fn tiny_cross_encoder(dir: &Path, head: bool) {
    use candle_core::{DType, Device};
    use candle_nn::{VarBuilder, VarMap};
    use candle_transformers::models::bert::{BertModel, Config};

    let installed = Embedder::locate().expect("run `cargo xtask setup` to install the embedding model");
    std::fs::copy(installed.join("tokenizer.json"), dir.join("tokenizer.json")).unwrap();
    std::fs::write(dir.join("config.json"), TINY_BERT_CONFIG).unwrap();
    let config: Config = serde_json::from_str(TINY_BERT_CONFIG).unwrap();
    let varmap = VarMap::new();
    let vb = VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu);
    BertModel::load(vb.pp("bert"), &config).unwrap();
    if head {
        candle_nn::linear(32, 32, vb.pp("bert.pooler.dense")).unwrap();
        candle_nn::linear(32, 1, vb.pp("classifier")).unwrap();
    }
    varmap.save(dir.join("model.safetensors")).unwrap();
}

#[test]
fn a_cross_encoder_directory_loads_and_scores_every_passage() {
    use replayground_server::repro::embed::CrossEncoder;

    let dir = tempfile::tempdir().unwrap();
    tiny_cross_encoder(dir.path(), true);
    let reranker = CrossEncoder::load(dir.path()).unwrap();
    let passages = [
        "def cross_entropy(logits, labels):\n    return -np.log(softmax(logits)).mean()",
        "def accuracy(logits, labels):\n    return (logits.argmax(0) == labels).mean()",
        "README",
    ];
    let scores = reranker.score("loss is nan", &passages).unwrap();
    assert_eq!(scores.len(), passages.len());
    assert!(scores.iter().all(|s| s.is_finite()), "{scores:?}");
    assert!(
        scores.windows(2).any(|w| (w[0] - w[1]).abs() > 1e-6),
        "every passage scored the same: {scores:?}"
    );
    // Padding in a batch does not change a pair's score.
    let alone = reranker.score("loss is nan", &passages[1..2]).unwrap();
    assert!((alone[0] - scores[1]).abs() < 1e-4, "{alone:?} vs {scores:?}");

    let headless = tempfile::tempdir().unwrap();
    tiny_cross_encoder(headless.path(), false);
    let Err(error) = CrossEncoder::load(headless.path()) else {
        panic!("loaded a cross-encoder without its head")
    };
    assert!(
        error.to_string().contains("pooler") || error.to_string().contains("classifier"),
        "{error}"
    );
}
