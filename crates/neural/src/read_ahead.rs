//! Reading a program before the page asks about it: a code LLM takes 4–7 s on these CPUs to
//! read a program it has not seen, so a page in neural mode has the engine read it when the
//! program runs ([`crate::infer::Engine::read_ahead`]), not at the first step.

use replayground_shared::Trace;

use crate::predict::prepare_first_step;
use crate::service::NeuralService;

/// Has `neural`'s engine read `code`'s prompt from its first stop in the background
/// (`trace` is the program's real run), so that the page's first question reads only its
/// states. Skipped when no model is ready or the engine is busy; a program the model
/// cannot be asked about is left for the question to explain.
pub fn read_ahead(neural: &NeuralService, code: String, trace: Trace) {
    let Ok(model) = neural.ready() else {
        return;
    };
    let Ok(mut debugger) = model.engine().try_lock_owned() else {
        return;
    };
    tokio::task::spawn_blocking(move || {
        let started = std::time::Instant::now();
        let Ok(prepared) = prepare_first_step(&model, trace, &code) else {
            return;
        };
        match debugger.read_ahead(prepared.prompt()) {
            Ok(()) => tracing::debug!(seconds = started.elapsed().as_secs_f64(), "program read ahead"),
            Err(e) => tracing::warn!("the neural debugger could not read the program ahead: {e:#}"),
        }
    });
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex as StdMutex;

    use replayground_shared::EventKind::Line;
    use replayground_shared::test_util::TraceBuilder;
    use replayground_shared::trace_lang::Trajectory;

    use std::path::Path;
    use std::sync::Arc;
    use std::time::Instant;

    use tokenizers::Tokenizer;

    use super::*;
    use crate::infer::{Engine, Guide, Prediction, PromptFrame, Sampling};
    use crate::service::BUNDLED_MODEL_DIR;

    /// The bundled engine, noting every prompt it is asked to read ahead.
    struct Recording {
        inner: Box<dyn Engine>,
        read: Arc<StdMutex<Vec<String>>>,
    }

    impl Engine for Recording {
        fn name(&self) -> String {
            self.inner.name()
        }
        fn count_tokens(&self, text: &str) -> anyhow::Result<usize> {
            self.inner.count_tokens(text)
        }
        fn tokenizer(&self) -> &Tokenizer {
            self.inner.tokenizer()
        }
        fn frame(&self) -> PromptFrame {
            self.inner.frame()
        }
        fn context(&self) -> usize {
            self.inner.context()
        }
        fn read_ahead(&mut self, prompt: &str) -> anyhow::Result<()> {
            self.read.lock().unwrap().push(prompt.to_owned());
            self.inner.read_ahead(prompt)
        }
        fn prompt(
            &self,
            prefix: &Trajectory,
            action: replayground_shared::Action,
            s: &Sampling,
        ) -> anyhow::Result<String> {
            self.inner.prompt(prefix, action, s)
        }
        fn predict(
            &mut self,
            prompt: &str,
            guide: &Guide<'_>,
            sampling: &Sampling,
            on_text: &mut dyn FnMut(&str),
        ) -> anyhow::Result<Prediction> {
            self.inner.predict(prompt, guide, sampling, on_text)
        }
    }

    #[tokio::test]
    async fn a_program_is_read_ahead_from_its_first_stop_unless_the_engine_is_busy() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(BUNDLED_MODEL_DIR);
        let inner = crate::load_engine(&dir.to_string_lossy(), &candle_core::Device::Cpu, 1024).unwrap();
        let read = Arc::new(StdMutex::new(Vec::new()));
        let service = NeuralService::default();
        // No model yet: nothing to read with, and nothing fails.
        let code = "x = 1\ny = x + 1\n";
        let mut b = TraceBuilder::new();
        let module = b.frame("<module>", None);
        let one = b.int(1);
        b.event(replayground_shared::EventKind::Call, module, 1, &[]);
        b.event(Line, module, 1, &[]);
        b.event(Line, module, 2, &[("x", one)]);
        b.returning(module, 2, &[("x", one)], None);
        let trace = b.build();
        let b_trace = trace.clone();
        read_ahead(&service, code.into(), trace.clone());
        service.install(Box::new(Recording {
            inner,
            read: Arc::clone(&read),
        }));
        let engine = service.ready().unwrap().engine();
        // Busy with a prediction: skipped, not queued behind it.
        let busy = engine.lock().await;
        read_ahead(&service, code.into(), trace.clone());
        drop(busy);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(read.lock().unwrap().is_empty());
        read_ahead(&service, code.into(), trace);
        let deadline = Instant::now() + std::time::Duration::from_secs(20);
        while read.lock().unwrap().is_empty() && Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let prompts = read.lock().unwrap().clone();
        assert_eq!(prompts.len(), 1, "{prompts:?}");
        // The question the page asks first: the code, the first stop, step into.
        let model = service.ready().unwrap();
        let first = prepare_first_step(&model, b_trace, code).unwrap();
        assert_eq!(prompts[0], first.prompt());
        assert!(
            prompts[0].contains("x = 1\ny = x + 1\n<|end_code|>\n<|"),
            "{}",
            prompts[0]
        );
        assert!(prompts[0].ends_with("<|step_into|>\n"), "{}", prompts[0]);
    }
}
