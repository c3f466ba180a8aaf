//! Edit action: code written for a GPU moved to the CPU (`.to('cuda')`, `.cuda()`,
//! `torch.device("cuda:0")`, `torch.cuda.FloatTensor`). The sandbox has no GPU, and
//! `PyPI`'s torch fails there with a `RuntimeError` of its own (no NVIDIA driver) that
//! would hide the reported one, often of the same type. Left alone when the report's
//! own output is about the device: then the GPU is part of the bug.

use std::sync::LazyLock;

use super::code::{Rewrite, re, rewrite};

/// Words of a report's output that make the device part of the bug.
const DEVICE_WORDS: [&str; 4] = ["cuda", "gpu", "device", "nvidia"];

/// Moves `code` to the CPU unless `observed` (the report's output) is about the device.
pub(crate) fn run_on_cpu(code: &mut String, observed: &str) -> Option<String> {
    static RULES: LazyLock<[Rewrite; 3]> = LazyLock::new(|| {
        [
            (re(r#"(['"])cuda(?::\d+)?(['"])"#), "${1}cpu$2", "'cuda' → 'cpu'"),
            (re(r"\.cuda\([^()]*\)"), "", ".cuda() dropped"),
            (
                re(r"\btorch\.cuda\.(\w+Tensor)\b"),
                "torch.$1",
                "torch.cuda.*Tensor → torch.*Tensor",
            ),
        ]
    });
    let observed = observed.to_lowercase();
    if DEVICE_WORDS.iter().any(|w| observed.contains(w)) {
        return None;
    }
    let done = rewrite(code, RULES.iter());
    (!done.is_empty()).then(|| format!("moved GPU code to the CPU (no GPU in the sandbox): {}", done.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_code_runs_on_the_cpu() {
        let mut code = "device = torch.device(\"cuda:0\" if ok else 'cpu')\nmodel = Net().to('cuda')\nx = x.cuda()\ny = y.cuda(non_blocking=True).float()\nt = torch.cuda.FloatTensor(3)\nprint(torch.cuda.is_available())\n".to_owned();
        let edit = run_on_cpu(&mut code, "RuntimeError: mat1 and mat2 shapes cannot be multiplied").unwrap();
        assert_eq!(
            code,
            "device = torch.device(\"cpu\" if ok else 'cpu')\nmodel = Net().to('cpu')\nx = x\ny = y.float()\nt = torch.FloatTensor(3)\nprint(torch.cuda.is_available())\n"
        );
        assert!(edit.contains(".cuda() dropped"), "{edit}");
    }

    #[test]
    fn a_report_about_the_device_keeps_it() {
        let original = "x = x.to('cuda')\n";
        let mut code = original.to_owned();
        let observed = "RuntimeError: Expected all tensors to be on the same device, but found cuda:0 and cpu";
        assert!(run_on_cpu(&mut code, observed).is_none());
        assert_eq!(code, original);
        assert!(run_on_cpu(&mut "x = 1\n".to_owned(), "").is_none());
    }
}
