// End-to-end tests of the reproduction page (/repro/) in headless Chromium (Playwright)
// against the real server, whose agent runs the candidates in the sandbox. `cargo xtask
// test` starts the server and runs this after playground.mjs; by hand:
//   cargo xtask serve   # in one terminal
//   BASE_URL=http://127.0.0.1:8080 node tests/e2e/repro.mjs
// Screenshots go to tests/artifacts/repro-*.png.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { $, ARTIFACTS, BASE, check, launchChromium, failed, shot } from './harness.mjs';

const TITLE = 'Loss becomes NaN in logistic regression';
const SNIPPET = `import numpy as np

p = np.array([0.0, 0.5, 1.0])
y = np.array([0.0, 1.0, 1.0])
loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
print("loss", loss)
`;
const MODEL_PY = 'import numpy as np\n\n\ndef loss(y, p):\n    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))\n';
const TRAIN_PY = 'import numpy as np\nfrom model import loss\n\n\ndef train(X, y, lr=10.0):\n    w = np.zeros(X.shape[1])\n    for step in range(20):\n        p = 1 / (1 + np.exp(-X @ w))\n        w -= lr * X.T @ (p - y)\n        print(step, loss(y, p))\n    return w\n';

async function openPage(browser, url = `${BASE}/repro/`, viewport = { width: 1280, height: 800 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.log(`page error: ${e}`));
  await page.goto(url);
  return page;
}

/** A zip of a small numpy project, written by Python's zipfile. */
function projectZip() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'repro-e2e-'));
  const file = path.join(dir, 'nan-project.zip');
  const script = 'import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], "w") as z:\n'
    + '    z.writestr("proj/model.py", sys.argv[2])\n    z.writestr("proj/train.py", sys.argv[3])\n';
  execFileSync('python3', ['-c', script, file, MODEL_PY, TRAIN_PY]);
  return file;
}

const browser = await launchChromium();
try {
  const page = await openPage(browser);
  let shareUrl;
  let debuggerHref;

  await check('an empty form shows its messages next to the fields', async () => {
    await page.waitForSelector($('repro-run'));
    await page.click($('repro-run'));
    await page.waitForSelector(`${$('title-error')}:not(:empty)`);
    assert.match(await page.locator($('title-error')).innerText(), /title/);
    assert.match(await page.locator($('observed-error')).innerText(), /stack trace|snippet/);
    assert.equal(await page.getAttribute('#title', 'aria-invalid'), 'true');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'title', 'the first field to fix has the focus');
    assert.equal(await page.locator($('attempt')).count(), 0, 'nothing ran');
    await shot(page, 'repro-01-invalid');
  });

  await check('the draft survives a reload', async () => {
    await page.fill($('title'), TITLE);
    await page.fill($('observed'), 'step 2 loss nan\nRuntimeWarning: divide by zero encountered in log');
    await page.fill($('expected'), 'The loss decreases and stays finite.');
    await page.fill($('snippet'), SNIPPET);
    await page.fill($('frameworks'), 'numpy 1.24');
    assert.equal(await page.locator($('title-error')).innerText(), '', 'typing clears the message');
    await page.reload();
    await page.waitForSelector($('repro-run'));
    assert.equal(await page.inputValue($('title')), TITLE);
    assert.equal(await page.inputValue($('snippet')), SNIPPET);
    assert.equal(await page.inputValue($('frameworks')), 'numpy 1.24');
  });

  await check('archives are checked before and after upload', async () => {
    await page.setInputFiles($('project-file'), { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') });
    assert.match(await page.locator($('project-error')).innerText(), /not a \.zip or \.tar\.gz/);
    await page.setInputFiles($('project-file'), { name: 'big.zip', mimeType: 'application/zip', buffer: Buffer.alloc(21 * 1024 * 1024) });
    assert.match(await page.locator($('project-error')).innerText(), /limit is 20 MB/);
    await page.setInputFiles($('project-file'), { name: 'fake.zip', mimeType: 'application/zip', buffer: Buffer.from('not really a zip') });
    await page.waitForSelector($('project-error'));
    assert.match(await page.locator($('project-error')).innerText(), /refused fake\.zip/);
    await page.setInputFiles($('project-file'), projectZip());
    await page.waitForSelector($('project'), { timeout: 30_000 });
    assert.match(await page.locator($('project')).innerText(), /nan-project\.zip.*2 Python/);
  });

  await check('Ctrl+Enter runs the agent: attempts stream, then a final script', async () => {
    await page.focus($('snippet'));
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector($('attempt'), { timeout: 60_000 });
    await page.waitForSelector(`${$('attempt-code')} .line`, { timeout: 60_000 });
    await shot(page, 'repro-02-running');
    await page.waitForSelector($('final-script'), { timeout: 180_000 });
    const script = await page.locator($('final-script')).innerText();
    assert.match(script, /np\.log/);
    const headline = await page.locator($('final-headline')).innerText();
    assert.match(headline, /Reproduced|Not reproduced/);
    if (headline.startsWith('Reproduced')) {
      // The run's own output is shown beside the verdict: here the NaN loss it printed.
      assert.match(await page.locator(`${$('final-output')} pre`).innerText(), /nan/);
    }
    assert.ok(await page.locator(`${$('checks')} .check`).count() >= 2, 'check badges');
    assert.ok(await page.locator($('contexts')).count() === 1, 'ranked contexts from the project');
    assert.match(await page.locator($('symptom')).innerText(), /calculation|crash|warning/i);
    await page.locator($('restructured')).evaluate((d) => { d.open = false; });
    await shot(page, 'repro-03-final');
    await page.locator($('attempts')).scrollIntoViewIfNeeded();
    await shot(page, 'repro-03b-attempts');
    debuggerHref = await page.getAttribute($('open-debugger'), 'href');
    assert.ok(debuggerHref.startsWith('/#v1.'), debuggerHref);
    const attempts = await page.locator($('attempt')).count();
    if (attempts > 1) {
      await page.locator($('attempt')).first().click();
      assert.equal(await page.locator($('attempt')).first().getAttribute('aria-current'), 'true');
      await page.waitForSelector($('attempt-code'));
    }
  });

  await check('"Open in debugger" opens the script in the playground', async () => {
    const playground = await openPage(browser, `${BASE}${debuggerHref}`);
    await playground.waitForSelector('.highlight .tok-keyword');
    assert.match(await playground.inputValue($('editor')), /np\.log/);
    await playground.context().close();
  });

  await check('Share stores the run; its link reopens it read-only with Rerun', async () => {
    await page.click($('share-repro'));
    await page.waitForSelector($('repro-link'));
    shareUrl = await page.inputValue($('repro-link'));
    assert.match(shareUrl, /\/s\/[A-Za-z0-9_-]+$/);
    const shared = await openPage(browser, shareUrl);
    await shared.waitForSelector($('stored-report'));
    assert.equal(await shared.locator($('stored-title')).innerText(), TITLE);
    await shared.waitForSelector($('final-script'));
    assert.match(await shared.locator($('final-script')).innerText(), /np\.log/);
    assert.ok(await shared.locator($('attempt')).count() >= 1);
    assert.ok(await shared.isEnabled($('rerun')));
    assert.equal(await shared.locator($('repro-run')).count(), 0, 'read-only: no form');
    await shot(shared, 'repro-04-shared');
    await shared.click($('rerun'));
    await shared.waitForSelector($('repro-run'));
    assert.equal(await shared.inputValue($('title')), TITLE, 'Rerun fills the form with the report');
    assert.ok(new URL(shared.url()).pathname === '/repro/', shared.url());
    await shared.waitForSelector($('final-script'), { timeout: 180_000 });
    await shared.context().close();
  });

  await check('a torch report on a machine without torch is approximated by the neural debugger', async () => {
    try {
      execFileSync('python3', ['-c', 'import torch'], { stdio: 'ignore' });
      console.log('     (torch is installed here: the report runs for real, nothing to approximate)');
      return;
    } catch { /* torch is missing, as on the CI machine */ }
    const torch = await openPage(browser);
    await torch.waitForSelector($('repro-run'));
    await torch.fill($('title'), 'torch.log gives a nan loss');
    await torch.fill($('observed'), 'the loss printed is nan');
    await torch.fill($('snippet'), "import torch\nx = torch.zeros(3) - 1\nloss = torch.log(x).mean()\nprint('loss', loss.item())\n");
    await torch.click($('repro-run'));
    await torch.waitForSelector($('final-headline'), { timeout: 180_000 });
    assert.equal(await torch.locator($('final-headline')).innerText(), 'Could not run here: torch is not installed');
    assert.match(await torch.locator($('approximation')).innerText(), /^Not reproduced: the script did not run, so its behaviour was approximated \(predicted\), not observed\. The approximation scored \d\.\d\d after 1 attempt\. Install torch and rerun/);
    assert.equal(await torch.locator('.approx-badge').count(), 1, 'the result is marked approximated');
    assert.equal(await torch.locator('.stage.approximated').count(), 1, 'the sandbox-run stage says so too');
    const runtime = await torch.locator($('check-runtime')).first().getAttribute('title');
    assert.match(runtime, /needs torch/);
    assert.match(runtime, /neural debugger \(neural-debugger-tiny\) stepped through it/);
    await shot(torch, 'repro-06-approximated');
    await torch.context().close();
  });

  await check('a check that failed shows as failed, not done', async () => {
    const failing = await openPage(browser);
    try {
      await failing.waitForSelector($('repro-run'));
      await failing.fill($('title'), 'The loss becomes NaN');
      await failing.fill($('observed'), 'loss nan');
      await failing.fill($('snippet'), "print('loss', 0.25)\n");
      await failing.click($('repro-run'));
      await failing.waitForSelector($('final-headline'), { timeout: 180_000 });
      assert.match(await failing.locator($('final-headline')).innerText(), /^Not reproduced/);
      const runtime = failing.locator(`${$('stages')} [data-stage="runtime"]`);
      assert.match(await runtime.getAttribute('class'), /\bfailed\b/);
      assert.equal(await runtime.locator('.badge').innerText(), 'failed');
      assert.match(await failing.locator($('final')).innerText(), /without showing the reported symptom/);
      assert.ok(await failing.locator(`${$('checks')} .check.fail`).count() >= 1, 'the attempt shows the failed check');
      await shot(failing, 'repro-07-failed-check');
    } finally {
      await failing.context().close();
    }
  });

  await check('"Fill in an example" reproduces its own bug', async () => {
    for (const viewport of [{ width: 1280, height: 720 }, { width: 390, height: 844 }]) {
      const example = await openPage(browser, `${BASE}/repro/`, viewport);
      try {
        await example.waitForSelector($('load-example'));
        if (viewport.width < 400) await shot(example, 'repro-09-phone-start');
        await example.click($('load-example'));
        assert.match(await example.inputValue($('title')), /NaN/);
        await example.click($('repro-run'));
        await example.waitForSelector($('final-headline'), { timeout: 180_000 });
        assert.match(await example.locator($('final-headline')).innerText(), /^Reproduced in \d attempts? \(score/);
        assert.match(await example.locator($('final')).innerText(), /The script shows: (wrong calculation|warning)/);
        const width = await example.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(width <= viewport.width, `the page is ${width} px wide at ${viewport.width}`);
        await example.locator($('final')).scrollIntoViewIfNeeded();
        await shot(example, `repro-08-example-${viewport.width}`);
      } finally {
        await example.context().close();
      }
    }
  });

  await check('versions named in a pasted issue fill the Environment fields', async () => {
    const paste = await openPage(browser);
    try {
      await paste.waitForSelector($('mode-paste'));
      await paste.click($('mode-paste'));
      await paste.fill($('free-text'), 'Loss is nan after the first epoch\n\nPyTorch version: 2.1.0+cu121\n'
        + 'CUDA used to build PyTorch: 12.1\nPython version: 3.10.12 (main, Nov 20 2023) [GCC 11.4.0] (64-bit runtime)\n'
        + 'GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4090\n[pip3] numpy==1.26.0\n');
      assert.equal(await paste.inputValue($('python')), '3.10.12');
      assert.equal(await paste.inputValue($('frameworks')), 'torch 2.1.0\nnumpy 1.26.0');
      assert.equal(await paste.inputValue($('hardware')), 'NVIDIA GeForce RTX 4090, CUDA 12.1');
      await shot(paste, 'repro-10-paste-environment');
      // What the person types stays when the issue is edited.
      await paste.fill($('python'), '3.9');
      await paste.fill($('free-text'), 'Loss is nan\nPython 3.12 and numpy 2.0.1 on CPU\n');
      assert.equal(await paste.inputValue($('python')), '3.9');
      assert.equal(await paste.inputValue($('frameworks')), 'numpy 2.0.1');
    } finally {
      await paste.context().close();
    }
  });

  await check('paste mode and the dark theme', async () => {
    await page.click($('mode-paste'));
    await page.fill($('free-text'), 'NaN');
    await page.click($('repro-run'));
    assert.match(await page.locator($('free-text-error')).innerText(), /too short/);
    await page.click($('mode-structured'));
    await page.click($('theme'));
    await shot(page, 'repro-05-dark');
  });
} finally {
  await browser.close();
}
if (failed() > 0) {
  console.log(`e2e repro: ${failed()} check(s) failed; screenshots in ${ARTIFACTS}`);
  process.exit(1);
}
console.log(`e2e repro: all checks passed; screenshots in ${ARTIFACTS}`);
