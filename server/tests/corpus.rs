//! The neural debugger's corpus pipeline end to end, through the real sandbox:
//! generated programs trace cleanly, trajectories are valid trace language, the
//! held-out split is disjoint from training, and the same seed gives the same files.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use replayground_server::neural::corpus::{CorpusConfig, build};
use replayground_server::neural::dedup::Reference;
use replayground_server::neural::infer::Guide;
use replayground_server::neural::policy::Policy;
use replayground_server::runner::{DEFAULT_PYTHON, Tracer};
use replayground_server::sandbox::{Bubblewrap, BubblewrapConfig, RunLimits, Sandbox, Unsandboxed};
use replayground_shared::trace_lang;

fn sandbox() -> Arc<dyn Sandbox> {
    match Bubblewrap::detect(BubblewrapConfig::default()) {
        Ok(bwrap) => Arc::new(bwrap),
        // The generated programs are ours and terminate by construction.
        Err(_) => Arc::new(Unsandboxed::new()),
    }
}

async fn corpus(out: &Path, seed: u64) -> replayground_server::neural::corpus::CorpusStats {
    let tracer = Arc::new(Tracer::new(sandbox(), DEFAULT_PYTHON, RunLimits::default()));
    let config = CorpusConfig {
        out: out.to_path_buf(),
        programs: 40,
        seed,
        trajectories_per_program: 3,
        jobs: 2,
        policy: Policy::default(),
        heldout_every: 5,
    };
    build(&config, tracer, &Reference::default())
        .await
        .expect("the corpus builds")
}

fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn a_small_corpus_is_valid_disjoint_and_reproducible() {
    let dir = tempfile::tempdir().unwrap();
    let stats = corpus(dir.path(), 7).await;
    assert_eq!(stats.generated, 40);
    assert!(
        stats.untraceable_dropped <= 2,
        "generated programs should trace: {stats:?}"
    );
    assert!(
        stats.heldout_programs > 0 && stats.train_programs > stats.heldout_programs,
        "{stats:?}"
    );
    assert_eq!(stats.train_trajectories, 3 * stats.train_programs);
    assert!(stats.inverse_trajectories > 0, "{stats:?}");

    let programs = lines(&dir.path().join("programs.jsonl"));
    let heldout: HashSet<&str> = programs
        .iter()
        .filter(|p| p["split"] == "heldout")
        .map(|p| p["source"].as_str().unwrap())
        .collect();
    let train: HashSet<&str> = programs
        .iter()
        .filter(|p| p["split"] == "train")
        .map(|p| p["source"].as_str().unwrap())
        .collect();
    assert!(heldout.is_disjoint(&train));

    for split in ["train.jsonl", "heldout.jsonl"] {
        for record in lines(&dir.path().join(split)) {
            let text = record["text"].as_str().unwrap();
            let trajectory = trace_lang::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert!(!trajectory.steps.is_empty());
            let source = trajectory.code.trim_end();
            let in_split = if split == "train.jsonl" { &train } else { &heldout };
            assert!(
                in_split.iter().any(|s| s.trim_end() == source),
                "a trajectory of another split"
            );
        }
    }

    // The decoding bounds admit every real step of every trajectory (`check-bounds`).
    let check = replayground_server::neural::commands::CheckBoundsArgs {
        data: vec![dir.path().join("train.jsonl"), dir.path().join("heldout.jsonl")],
        show: 3,
    };
    assert_eq!(
        replayground_server::neural::commands::check_bounds(&check).unwrap(),
        std::process::ExitCode::SUCCESS
    );

    let again = tempfile::tempdir().unwrap();
    assert_eq!(corpus(again.path(), 7).await, stats);
    for file in ["programs.jsonl", "train.jsonl", "heldout.jsonl"] {
        assert_eq!(
            std::fs::read(dir.path().join(file)).unwrap(),
            std::fs::read(again.path().join(file)).unwrap(),
            "{file} differs between two runs with the same seed"
        );
    }
}

mod training {
    use super::*;
    use replayground_server::neural::eval::{load_trajectories, next_state};
    use replayground_server::neural::infer::{Engine as _, NeuralDebugger, Sampling};
    use replayground_server::neural::train::{TrainConfig, train};

    fn config(corpus: &Path, out: &Path, steps: usize) -> TrainConfig {
        TrainConfig {
            corpus: corpus.to_path_buf(),
            out: out.to_path_buf(),
            steps,
            batch_size: 4,
            context: 64,
            hidden_size: 32,
            layers: 2,
            heads: 4,
            vocab_size: 400,
            learning_rate: 3e-3,
            warmup_steps: 5,
            weight_decay: 0.1,
            max_grad_norm: 1.0,
            seed: 3,
            checkpoint_every: 10,
            eval_every: 10,
            stop_after: None,
            time_budget: None,
            device: replayground_server::neural::device::DeviceChoice::Cpu,
        }
    }

    #[tokio::test]
    async fn a_time_budget_plans_the_schedule_and_summarises_the_run() {
        let corpus_dir = tempfile::tempdir().unwrap();
        corpus(corpus_dir.path(), 5).await;
        let out = tempfile::tempdir().unwrap();
        let budgeted = TrainConfig {
            time_budget: Some(2.0),
            ..config(corpus_dir.path(), out.path(), 1_000_000)
        };
        let state = train(&budgeted).unwrap();
        // The schedule was planned from the timed steps, far below the nominal million,
        // and the run ended on its own checkpoint.
        assert!(state.config.steps < 1_000_000, "planned {} steps", state.config.steps);
        assert!(
            state.step >= 6 && state.step <= state.config.steps,
            "{} of {}",
            state.step,
            state.config.steps
        );
        assert_eq!(losses(out.path()).len(), state.step);
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.path().join("trainer_state.json")).unwrap()).unwrap();
        assert_eq!(saved["step"], state.step);
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.path().join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["steps"], state.step);
        assert_eq!(summary["device"], "cpu");
        assert!(summary["tokens_per_second"].as_f64().unwrap() > 0.0, "{summary}");
        assert!(summary["heldout_loss"].as_f64().is_some(), "{summary}");
        assert!(summary["parameters"].as_u64().unwrap() > 10_000, "{summary}");
    }

    fn losses(out: &Path) -> Vec<f64> {
        std::fs::read_to_string(out.join("loss.csv"))
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(2).unwrap().parse().unwrap())
            .collect()
    }

    #[tokio::test]
    async fn training_lowers_the_loss_writes_a_qwen2_checkpoint_and_resumes_exactly() {
        let corpus_dir = tempfile::tempdir().unwrap();
        corpus(corpus_dir.path(), 11).await;

        let straight = tempfile::tempdir().unwrap();
        let state = train(&config(corpus_dir.path(), straight.path(), 40)).unwrap();
        assert_eq!(state.step, 40);
        let l = losses(straight.path());
        assert_eq!(l.len(), 40);
        let first: f64 = l[..5].iter().sum::<f64>() / 5.0;
        let last: f64 = l[35..].iter().sum::<f64>() / 5.0;
        assert!(last < first - 0.5, "the loss did not fall: {first:.3} -> {last:.3}");
        for file in [
            "config.json",
            "tokenizer.json",
            "model.safetensors",
            "optimizer.safetensors",
            "trainer_state.json",
            "loss.png",
        ] {
            assert!(straight.path().join(file).is_file(), "{file} is missing");
        }
        let config_json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(straight.path().join("config.json")).unwrap()).unwrap();
        assert_eq!(config_json["model_type"], "qwen2");
        assert_eq!(config_json["architectures"][0], "Qwen2ForCausalLM");

        // Stopped at step 20 and resumed: the same weights as the straight run.
        let resumed = tempfile::tempdir().unwrap();
        let interrupted = TrainConfig {
            stop_after: Some(20),
            ..config(corpus_dir.path(), resumed.path(), 40)
        };
        assert_eq!(train(&interrupted).unwrap().step, 20);
        assert_eq!(train(&config(corpus_dir.path(), resumed.path(), 40)).unwrap().step, 40);
        assert_eq!(losses(resumed.path()), l, "the resumed run logs the same losses");
        let a = candle_core::safetensors::load(straight.path().join("model.safetensors"), &candle_core::Device::Cpu)
            .unwrap();
        let b = candle_core::safetensors::load(resumed.path().join("model.safetensors"), &candle_core::Device::Cpu)
            .unwrap();
        assert_eq!(a.len(), b.len());
        for (name, ta) in &a {
            let tb = &b[name];
            let diff = (ta - tb)
                .unwrap()
                .abs()
                .unwrap()
                .flatten_all()
                .unwrap()
                .max(0)
                .unwrap()
                .to_scalar::<f32>()
                .unwrap();
            assert!(diff < 1e-5, "{name} differs by {diff} after resuming");
        }

        // The checkpoint serves through candle-transformers with constrained decoding.
        let mut debugger = NeuralDebugger::load(straight.path()).expect("the checkpoint loads");
        let heldout: Vec<_> = load_trajectories(&corpus_dir.path().join("heldout.jsonl"))
            .unwrap()
            .into_iter()
            .map(replayground_server::neural::eval::Walk::from)
            .collect();
        let sampling = Sampling {
            max_tokens: 48,
            ..Sampling::default()
        };
        let mut seen = 0;
        let report = next_state(
            "next-state",
            &mut debugger,
            &heldout,
            replayground_server::neural::eval::Selection::first(6),
            &sampling,
            &mut |done, _| seen = done,
        )
        .unwrap();
        assert_eq!((report.n, seen), (6, 6));
        assert_eq!(report.baselines["copy"].n, 6);
        assert!(report.tokens_generated > 0);
        let example = &replayground_server::neural::eval::examples(&heldout[0].trajectory).unwrap()[0];
        let mut streamed = String::new();
        let p = debugger
            .predict(
                &example.prompt,
                &Guide::after(&example.prefix, example.step_action),
                &sampling,
                &mut |t| {
                    streamed.push_str(t);
                },
            )
            .unwrap();
        assert_eq!(streamed, p.text);
        let mut machine = replayground_shared::trace_lang::StateLineMachine::new();
        assert!(
            machine.feed(p.text.as_bytes()),
            "constrained decoding left the grammar: {:?}",
            p.text
        );
        if p.text.ends_with('\n') {
            assert!(
                p.state.is_ok() || p.state.as_ref().unwrap_err().contains(".."),
                "{:?}",
                p.state
            );
        }
    }
}
