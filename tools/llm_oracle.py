#!/usr/bin/env python3
"""Writes the fixtures that crates/llm's tests compare against: what llama.cpp (an
independent implementation, via llama-cpp-python) makes of the same GGUF file.

    python3 -m venv /tmp/oracle && /tmp/oracle/bin/pip install llama-cpp-python==0.3.36
    /tmp/oracle/bin/python tools/llm_oracle.py .tools/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf

Writes crates/llm/tests/fixtures/{tokenizer,generation,chat_template}.json. The chat
template is the file's own Jinja (`tokenizer.chat_template`) rendered by jinja2 the way
Hugging Face's `apply_chat_template` renders it.
"""

import hashlib
import json
import pathlib
import sys
import unicodedata

import jinja2.sandbox
import llama_cpp

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "crates/llm/tests/fixtures"

# Code, prose, unicode, whitespace runs, numbers, the special tokens, and edge cases.
STRINGS = [
    "",
    " ",
    "  ",
    "\t",
    "\n",
    "\n\n\n",
    "   \n   \n",
    "\r\n",
    "a",
    "Hello, world!",
    "hello world",
    "  leading spaces",
    "trailing spaces   ",
    "multiple     spaces    between",
    "def add(a, b):\n    return a + b\n",
    "import numpy as np\nx = np.zeros((3, 4), dtype=np.float32)\n",
    "for i in range(10):\n\tprint(i ** 2)\n",
    "class Foo(Base):\n    def __init__(self, *args, **kwargs):\n        super().__init__(*args, **kwargs)\n",
    "if __name__ == '__main__':\n    main()\n",
    "    # a comment with    tabs\t\tand spaces\n",
    "lambda x: x if x > 0 else -x",
    "print(f\"{value!r:>10}\")",
    "x = [1, 2, 3]; y = {'a': 1, \"b\": 2}",
    "s = 'it''s'; t = \"don't\"",
    "I'm sure they'll say we've done it, haven't we? I'd think so. It's OK.",
    "CAPITAL LETTERS AND 'S 'T 'RE 'VE 'M 'LL 'D",
    "0123456789",
    "3.14159265358979 1e-10 0xFF 0b1010 1_000_000",
    "Version 2.5.1-rc3 released on 2024-11-12.",
    "Traceback (most recent call last):\n  File \"train.py\", line 42, in <module>\n    loss.backward()\nRuntimeError: CUDA out of memory.",
    "ValueError: shapes (3,4) and (5,6) not aligned: 4 (dim 1) != 5 (dim 0)",
    "naïve café résumé façade",
    "Größe Straße Übermaß",
    "日本語のテキスト",
    "中文字符测试，标点符号。",
    "한국어 문장입니다",
    "Привет, мир!",
    "مرحبا بالعالم",
    "שלום עולם",
    "Ελληνικά γράμματα",
    "emoji 😀🎉👍🏽 and 🇫🇷 flags",
    "👨‍👩‍👧‍👦 family",
    "math: ∀x ∈ ℝ, x² ≥ 0 → √(x²) = |x|",
    "arrows ←↑→↓ and box ┌─┐│└┘",
    "zero\u200bwidth\u200djoiner",
    "e\u0301 composed vs \u00e9 precomposed",
    "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    "<|endoftext|>",
    "<|im_start|>system\nYou are helpful.<|im_end|>",
    "text before<|im_end|>text after",
    "<|fim_prefix|>def f():\n<|fim_suffix|>\n    return 1<|fim_middle|>",
    "<|im_start|><|im_end|><|endoftext|>",
    "not special: <|im_start and im_end|>",
    "<html><body><div class=\"x\">&amp;&lt;</div></body></html>",
    "SELECT * FROM users WHERE id = 42 AND name LIKE '%bob%';",
    "fn main() { println!(\"{}\", 1 + 1); }",
    "#include <stdio.h>\nint main(void) { return 0; }\n",
    "https://example.com/path?query=1&other=two#frag",
    "user@example.com, +1 (555) 123-4567",
    "!!!???...,,,;;;:::",
    "----====____****####",
    "a\u00a0b non-breaking space",
    "line one\nline two\n\n\nline five",
    "mixed\ttabs\t\tand\n\nnewlines\r\n",
    "     ",
    "\n    \n",
    "tokenization of very_long_snake_case_identifier_names_in_python",
    "CamelCaseIdentifierWithManyWords",
    "numbers 12345678901234567890",
    "```python\nprint('hi')\n```",
]

# Greedy continuations: raw completion and chat prompts.
GENERATION_PROMPTS = [
    "def add(a, b):\n",
    "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
    "<|im_start|>user\nWrite a Python function that returns the factorial of n.<|im_end|>\n"
    "<|im_start|>assistant\n",
    "import numpy as np\n\n# Compute the mean of each row of a matrix\ndef row_means(m):\n",
]
GENERATED_TOKENS = 32

CHATS = [
    [{"role": "user", "content": "Hi"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Fix this:\nx = 1 +"}],
    [
        {"role": "system", "content": "You write Python."},
        {"role": "user", "content": "Say hello."},
        {"role": "assistant", "content": "print('hello')"},
        {"role": "user", "content": "Again, twice."},
    ],
]


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def plain_cpu_kernels():
    """llama.cpp's reference CPU kernels, without its weight-repacking buffers: built
    natively on a CPU with AMX, the AMX repack crashed llama-cpp-python 0.3.36 here."""
    default = llama_cpp.llama_model_default_params

    def params():
        p = default()
        p.use_extra_bufts = False
        return p

    llama_cpp.llama_model_default_params = params
    llama_cpp.llama.llama_cpp.llama_model_default_params = params


def main():
    model_path = pathlib.Path(sys.argv[1])
    plain_cpu_kernels()
    checksum = sha256(model_path)
    llm = llama_cpp.Llama(str(model_path), n_ctx=2048, n_threads=2, logits_all=True, verbose=False)
    source = f"llama-cpp-python {llama_cpp.__version__}"

    def tokenize(text):
        return llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    cases = []
    for text in STRINGS:
        ids = tokenize(text)
        case = {"text": text, "ids": ids}
        # Qwen's own tokenizer (tokenizer.json) normalizes to NFC first; llama.cpp does not.
        normalized = unicodedata.normalize("NFC", text)
        if normalized != text:
            case["nfc_ids"] = tokenize(normalized)
        cases.append(case)
    FIXTURES.mkdir(parents=True, exist_ok=True)
    write(FIXTURES / "tokenizer.json", {"model_sha256": checksum, "source": source, "cases": cases})

    runs = []
    for prompt in GENERATION_PROMPTS:
        ids = tokenize(prompt)
        llm.reset()
        llm.eval(ids)
        generated, margins = [], []
        for _ in range(GENERATED_TOKENS):
            scores = llm.scores[llm.n_tokens - 1]
            order = scores.argsort()[::-1]
            best, second = int(order[0]), int(order[1])
            generated.append(best)
            margins.append(round(float(scores[best] - scores[second]), 4))
            if best == llm.token_eos():
                break
            llm.eval([best])
        text = llm.detokenize(generated).decode("utf-8", errors="replace")
        runs.append({"prompt": prompt, "prompt_ids": ids, "generated": generated, "top1_margin": margins, "text": text})
    write(FIXTURES / "generation.json", {"model_sha256": checksum, "source": source, "greedy": runs})

    environment = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    template = environment.from_string(llm.metadata["tokenizer.chat_template"])
    rendered = [
        {"messages": chat, "prompt": template.render(messages=chat, add_generation_prompt=True)} for chat in CHATS
    ]
    write(FIXTURES / "chat_template.json", {"source": f"jinja2 {jinja2.__version__}", "chats": rendered})


def write(path, value):
    path.write_text(json.dumps(value, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
