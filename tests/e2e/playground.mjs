// End-to-end tests of the playground in headless Chromium (Playwright) against the real
// server. `cargo xtask test` starts the server and runs this with BASE_URL set; by hand:
//   cargo xtask serve   # in one terminal
//   BASE_URL=http://127.0.0.1:8080 node tests/e2e/playground.mjs
// Screenshots of each view go to tests/artifacts/ (git-ignored). With --bench it also
// measures time to interactive, as a ratio to fetching index.html in the same run.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { $, ARTIFACTS, BASE, ROOT, check, launchChromium, failed, shot } from './harness.mjs';

const BENCH = process.argv.includes('--bench');

const PROGRAM = `def area(w, h):
    result = w * h
    return result


class Box:
    def __init__(self, w):
        self.w = w


sizes = [1, 2, 3]
alias = sizes
total = 0
for s in sizes:
    total += area(s, 2)
print(total)
`;
const BROKEN = PROGRAM.replace('total = 0', 'total = = 0');

// Most checks are a returning user who opened "Advanced" (pdb's commands, neural mode);
// the simple-mode check starts as a first visit.
const ADVANCED_KEY = 'replayground-advanced';
async function openPage(browser, url = `${BASE}/`, { advanced = true, viewport = { width: 1280, height: 720 } } = {}) {
  const context = await browser.newContext({ viewport });
  if (advanced) {
    await context.addInitScript((key) => {
      if (localStorage.getItem(key) === null) localStorage.setItem(key, '1');
    }, ADVANCED_KEY);
  }
  const page = await context.newPage();
  page.on('pageerror', (e) => console.log(`page error: ${e}`));
  await page.goto(url);
  await page.waitForSelector('.highlight .tok-keyword');
  return page;
}
const text = (page, id) => page.locator($(id)).innerText();
async function runProgram(page) {
  await page.click($('run'));
  await page.waitForSelector($('current-line'), { timeout: 30_000 });
}

const browser = await launchChromium();
try {
  const page = await openPage(browser);
  let shareUrl;

  await check('the page opens with a highlighted example and the gallery', async () => {
    assert.ok(await page.locator('.highlight .tok-function').count() > 0);
    assert.ok(await page.locator(`${$('gallery')} li`).count() >= 12);
    await shot(page, '01-start');
  });

  await check('typing is highlighted, outlined and checked', async () => {
    await page.fill($('editor'), BROKEN);
    await page.waitForSelector(`${$('errors')} li`);
    assert.match(await page.locator(".highlight").innerHTML(), /<span class="tok-class">Box<\/span>/);
    const outline = await text(page, 'outline');
    assert.match(outline, /def area/);
    assert.match(outline, /class Box/);
    assert.match(outline, /def __init__/);
    assert.ok(await page.locator('.highlight .syntax-error, .highlight .missing').count() > 0, 'an error marker');
    await shot(page, '02-syntax-error');
    // Clicking the error puts the caret on its line.
    await page.locator(`${$('errors')} button`).first().click();
    const caret = await page.locator($('editor')).evaluate((t) => t.value.slice(0, t.selectionStart).split('\n').length);
    assert.equal(caret, Number((await text(page, 'errors')).match(/Line (\d+)/)[1]));
    assert.equal(caret, 13);
    // Fix it by typing, as a person would: incremental re-parse clears the error.
    await page.fill($('editor'), PROGRAM.replace('total = 0', 'total = '));
    await page.locator($('editor')).evaluate((t) => { const i = t.value.indexOf('total = ') + 8; t.setSelectionRange(i, i); });
    await page.keyboard.type('0');
    await page.waitForFunction((id) => document.querySelectorAll(`[data-testid="${id}"] li`).length === 0, 'errors');
    assert.equal(await page.locator($('editor')).inputValue(), PROGRAM);
  });

  await check('Tab indents and undo takes it back', async () => {
    await page.locator($('editor')).evaluate((t) => { t.focus(); t.setSelectionRange(0, 0); });
    await page.keyboard.press('Tab');
    assert.ok((await page.locator($('editor')).inputValue()).startsWith('    def area'));
    await page.keyboard.press('Shift+Tab');
    assert.ok((await page.locator($('editor')).inputValue()).startsWith('def area'));
    await page.keyboard.press('Tab');
    await page.keyboard.press('Control+z');
    assert.equal(await page.locator($('editor')).inputValue(), PROGRAM);
  });

  await check('run, step forward and back', async () => {
    await runProgram(page);
    assert.equal(await text(page, 'current-line'), '1');
    await page.click($('step-over'));
    assert.equal(await text(page, 'current-line'), '6');
    await page.click($('step-back'));
    assert.equal(await text(page, 'current-line'), '1');
    // pdb's letters work once the focus is out of the editor.
    await page.locator('h1').click();
    await page.keyboard.press('n');
    await page.keyboard.press('n');
    assert.equal(await text(page, 'current-line'), '11');
    await page.keyboard.press('Shift+N');
    assert.equal(await text(page, 'current-line'), '6');
  });

  await check('a breakpoint stops continue; variables show the values there', async () => {
    await page.click('[aria-label="Breakpoint on line 2"]');
    await page.click($('continue'));
    assert.equal(await text(page, 'current-line'), '2');
    const vars = await text(page, 'variables');
    assert.match(vars, /w\s+1/);
    assert.match(vars, /h\s+2/);
    assert.match(await text(page, 'call-stack'), /area\(\) line 2/);
    assert.ok(await page.locator('.line-marker').count() === 1, 'the editor marks the current line');
    await page.click($('continue'));
    assert.equal(await text(page, 'current-line'), '2');
    assert.match(await text(page, 'variables'), /w\s+2/);
    await shot(page, '03-debugger');
  });

  await check('aliases are tagged as the same object; the call tree jumps', async () => {
    await page.click($('step-return'));
    await page.click($('step-return'));
    await page.locator('.call-stack .frame').first().click();
    assert.ok(await page.locator('.variables .obj-tag.shared').count() >= 2, 'sizes and alias share a tag');
    // Opening `sizes` opens `alias` too: what stays open is the object, not the name.
    await page.locator('.variables summary[data-path^="obj:"]').first().click();
    assert.equal(await page.locator('.variables details.value-tree[open]').count(), 2, 'both names show the list open');
    await page.click($('step-back'));
    await page.click($('step-into'));
    assert.equal(await page.locator('.variables details.value-tree[open]').count(), 2, 'still open after stepping');
    await shot(page, '03c-aliases-open');
    const rows = page.locator(`${$('state-tree')} .tree-row`);
    assert.ok(await rows.count() >= 4);
    await rows.nth(2).locator(".node").click();
    assert.equal(await text(page, 'current-line'), '1');
    assert.match(await text(page, 'headline'), /Calling area/);
    await page.click($('continue'));
  });

  await check('breakpoints move with their lines as code is edited', async () => {
    const fresh = await openPage(browser);
    await fresh.click('[aria-label="Breakpoint on line 2"]');
    // A newline typed at the very start of the file pushes every line down one.
    await fresh.locator($('editor')).evaluate((t) => { t.focus(); t.setSelectionRange(0, 0); });
    await fresh.keyboard.press('Enter');
    await fresh.locator('[aria-label="Breakpoint on line 3"][aria-pressed="true"]').waitFor({ timeout: 5_000 });
    assert.equal(await fresh.locator('.gutter .breakpoint').count(), 1);
    await runProgram(fresh);
    await fresh.click($('continue'));
    assert.equal(await text(fresh, 'current-line'), '3');
    await fresh.context().close();
  });

  await check('a share link restores the same view in a fresh page', async () => {
    const before = await text(page, 'current-line');
    await page.click($('share'));
    shareUrl = await page.locator($('share-link')).inputValue();
    assert.match(shareUrl, /#v1\./);
    await shot(page, '04-share');
    const fresh = await openPage(browser, shareUrl);
    await fresh.waitForSelector($('current-line'), { timeout: 30_000 });
    assert.equal(await text(fresh, 'current-line'), before);
    assert.equal(await fresh.locator($('editor')).inputValue(), PROGRAM);
    assert.equal(await fresh.locator('[aria-label="Breakpoint on line 2"]').getAttribute('aria-pressed'), 'true');
    assert.equal(await text(fresh, 'position'), await text(page, 'position'));
    await shot(fresh, '05-shared-view');
    await fresh.context().close();
  });

  await check('a short link opens the same view', async () => {
    await page.click($('make-short-link'));
    const shortInput = page.locator($('short-link'));
    const failed = page.locator(`${$('share-panel')} .error`);
    await Promise.race([shortInput.waitFor(), failed.waitFor()]);
    if (await failed.count()) {
      throw new Error(`the server refused the short link: ${await failed.innerText()}`);
    }
    const shortUrl = await shortInput.inputValue();
    assert.match(shortUrl, /\/s\/[^/]+$/);
    const fresh = await openPage(browser, shortUrl);
    await fresh.waitForSelector($('current-line'), { timeout: 30_000 });
    assert.equal(await text(fresh, 'current-line'), await text(page, 'current-line'));
    assert.equal(await fresh.locator($('editor')).inputValue(), PROGRAM);
    await fresh.context().close();
  });

  await check('a corrupt link says so', async () => {
    const broken = await openPage(browser, `${BASE}/#v1.this-is-not-a-view`);
    assert.match(await text(broken, 'link-error'), /cannot be opened/);
    await shot(broken, '06-corrupt-link');
    await broken.context().close();
  });

  await check('a long run streams an event count and Cancel stops it', async () => {
    await page.fill($('editor'), 'import time\n\nfor i in range(100000):\n    time.sleep(0.001)\n');
    await page.click($('run'));
    await page.waitForFunction(
      (id) => /^[1-9][\d,]* events?$/.test(document.querySelector(`[data-testid="${id}"]`)?.textContent ?? ''),
      'progress-count', { timeout: 20_000 });
    await shot(page, '06b-streaming');
    await page.click($('cancel'));
    await page.waitForSelector($('error'));
    assert.match(await text(page, 'error'), /cancelled/);
    assert.equal(await page.locator($('cancel')).count(), 0);
  });

  await check('without a WebSocket the run falls back to one POST', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    // Every socket goes to a closed port, as behind a proxy that refuses upgrades.
    await context.addInitScript(() => {
      const Real = window.WebSocket;
      window.WebSocket = function RefusedSocket() { return new Real('ws://127.0.0.1:9/'); };
    });
    const fallback = await context.newPage();
    await fallback.goto(`${BASE}/`);
    await fallback.waitForSelector('.highlight .tok-keyword');
    await runProgram(fallback);
    assert.equal(await text(fallback, 'current-line'), '1');
    await context.close();
  });

  await check('examples load; presentation mode and the dark theme', async () => {
    await page.selectOption($('examples'), 'gradient_descent');
    assert.match(await page.locator($('editor')).inputValue(), /SILENT BUG/);
    await runProgram(page);
    await page.locator('h1').click();
    for (let i = 0; i < 12; i += 1) await page.keyboard.press('n');
    await shot(page, '07-example-gradient-descent');
    await page.click($('theme'));
    await page.keyboard.press('p');
    await page.keyboard.press('ArrowRight');
    assert.ok(await page.locator('.app.presenting').count() === 1);
    await shot(page, '08-presentation-dark');
    await page.keyboard.press('Escape');
    await shot(page, '09-dark');
  });

  await check('neural mode: the model predicts each step beside the real run', async () => {
    // The test server loads the bundled model (--model-dir models/neural-debugger-tiny, xtask/src/frontend.rs).
    const neural = await openPage(browser);
    await neural.fill($('editor'), PROGRAM);
    await runProgram(neural);
    await neural.click($('neural-toggle'));
    await neural.waitForSelector($('neural-panel'));
    await neural.click($('step-over'));
    const slow = { timeout: 120_000 };
    const panelError = neural.locator($('neural-error'));
    await Promise.race([neural.waitForSelector($('neural-real-line'), slow), panelError.waitFor(slow)]);
    if (await panelError.count()) throw new Error(`neural mode failed: ${await panelError.innerText()}`);
    assert.equal(await text(neural, 'neural-real-line'), await text(neural, 'current-line'));
    assert.match(await text(neural, 'neural-predicted-line'), /^(\d+|—)$/);
    assert.match(await text(neural, 'neural-verdict'), /[✓✗]/);
    await shot(neural, '10-neural-forward');
    // Reverse: k candidate previous states, each marked consistent or not.
    await neural.click($('step-back'));
    await Promise.race([neural.waitForSelector(`${$('neural-candidates')} li`, slow), panelError.waitFor(slow)]);
    if (await panelError.count()) throw new Error(`neural mode failed: ${await panelError.innerText()}`);
    assert.equal(await neural.locator(`${$('neural-candidates')} li`).count(), 3);
    assert.match(await text(neural, 'neural-candidates'), /consistent/);
    assert.equal(await text(neural, 'neural-real-line'), await text(neural, 'current-line'));
    await shot(neural, '11-neural-reverse');
    // m turns it off again.
    await neural.locator('h1').click();
    await neural.keyboard.press('m');
    assert.equal(await neural.locator($('neural-panel')).count(), 0);
    assert.equal(await neural.locator($('neural-toggle')).getAttribute('aria-pressed'), 'false');
    await neural.context().close();
  });

  // Issue 14: the playground in a classroom.
  const testsInFreshPage = async (body) => {
    const fresh = await openPage(browser);
    const errors = [];
    fresh.on('pageerror', (e) => errors.push(String(e)));
    try {
      await body(fresh);
      assert.deepEqual(errors, [], 'the page raised no error');
    } finally {
      await fresh.context().close();
    }
  };
  const outcomeMatches = (p, pattern) => p.waitForFunction(
    ([id, source]) => new RegExp(source).test(document.querySelector(`[data-testid="${id}"]`)?.textContent ?? ''),
    ['outcome', pattern.source], { timeout: 30_000 });

  await check('a syntax error, then the fixed program: it runs, and Cancel and Theme still answer', () => testsInFreshPage(async (p) => {
    await p.fill($('editor'), 'x = 5\nif x > 3\n    print("big")\n');
    await p.click($('run'));
    await outcomeMatches(p, /syntax error on line 2/);
    await p.fill($('editor'), 'x = 5\nif x > 3:\n    print("big")\n');
    await p.click($('run'));
    await outcomeMatches(p, /finished/);
    assert.equal(await text(p, 'current-line'), '1');
    assert.equal((await text(p, 'run')).trim(), 'Run');
    const theme = () => p.evaluate(() => document.documentElement.getAttribute('data-theme') ?? '');
    const before = await theme();
    await p.click($('theme'));
    assert.notEqual(await theme(), before, 'Theme still switches');
    // A long run after it can still be cancelled.
    await p.fill($('editor'), 'import time\n\nfor i in range(100000):\n    time.sleep(0.001)\n');
    await p.click($('run'));
    await p.waitForSelector($('cancel'));
    await p.click($('cancel'));
    await p.waitForSelector($('error'));
    assert.equal(await p.locator($('crash')).count(), 0);
  }));

  await check('code, input and breakpoints survive a reload; loading an example can be undone', () => testsInFreshPage(async (p) => {
    await p.fill($('editor'), PROGRAM);
    await p.fill($('stdin'), 'my input\n');
    await p.click('[aria-label="Breakpoint on line 2"]');
    await p.reload();
    await p.waitForSelector('.highlight .tok-keyword');
    assert.equal(await p.locator($('editor')).inputValue(), PROGRAM);
    assert.equal(await p.locator($('stdin')).inputValue(), 'my input\n');
    assert.equal(await p.locator('[aria-label="Breakpoint on line 2"]').getAttribute('aria-pressed'), 'true');
    await p.selectOption($('examples'), 'gradient_descent');
    assert.match(await p.locator($('editor')).inputValue(), /SILENT BUG/);
    assert.match(await text(p, 'replaced'), /Gradient|example/);
    await p.click($('undo-replace'));
    assert.equal(await p.locator($('editor')).inputValue(), PROGRAM);
    assert.equal(await p.locator($('stdin')).inputValue(), 'my input\n');
    assert.equal(await p.locator('[aria-label="Breakpoint on line 2"]').getAttribute('aria-pressed'), 'true');
    assert.equal(await p.locator($('replaced')).count(), 0);
  }));

  await check('the end keeps the final state; an uncaught exception is stopped on and marked', () => testsInFreshPage(async (p) => {
    await p.fill($('editor'), PROGRAM);
    await runProgram(p);
    assert.match(await text(p, 'outcome'), /^Run result: the program finished after \d+ steps\.$/);
    await p.click($('continue'));
    assert.equal(await text(p, 'current-line'), 'end');
    assert.match(await text(p, 'variables'), /total●?\s+12/);
    assert.match(await text(p, 'variables'), /area●?\s+function area\(w, h\)/, 'a function in a few words');
    assert.match(await p.locator('#vars-heading').innerText(), /globals at the end/i);
    assert.equal(await text(p, 'stdout'), '12\n');
    await shot(p, '13-end-state');

    await p.fill($('editor'), 'def average(xs):\n    return sum(xs) / len(xs)\n\n\nprint(average([1, 2]))\nprint(average([]))\n');
    await p.fill($('stdin'), '');
    await p.click($('run'));
    await outcomeMatches(p, /^Run result: the program raised ZeroDivisionError/);
    await p.click($('continue'));
    assert.equal(await text(p, 'current-line'), '2');
    assert.match(await text(p, 'headline'), /Exception .*ZeroDivisionError/);
    assert.match(await text(p, 'variables'), /xs\s+list#1 \[\]/);
    assert.match(await text(p, 'call-stack'), /average\(\) line 2/);
    assert.match(await text(p, 'state-tree'), /average\(xs=\[\]\) raised ZeroDivisionError/);
    assert.match(await text(p, 'state-tree'), /average\(xs=\[1, 2\]\) → 1\.5/);
    await shot(p, '14-stopped-on-the-error');
    await p.click($('step-back'));
    await p.click($('jump-to-error'));
    assert.equal(await text(p, 'current-line'), '2');
    assert.match(await text(p, 'headline'), /Exception/);
  }));

  await check('keys: Ctrl+Enter hands the keys to the debugger, arrows step, input() explains where input goes', () => testsInFreshPage(async (p) => {
    await p.fill($('editor'), PROGRAM);
    await p.locator($('editor')).focus();
    await p.keyboard.press('Control+Enter');
    await p.waitForSelector($('current-line'), { timeout: 30_000 });
    await p.waitForFunction(() => document.activeElement?.tagName === 'BUTTON');
    await p.keyboard.press('n');
    assert.equal(await text(p, 'current-line'), '6');
    assert.equal(await p.locator($('editor')).inputValue(), PROGRAM, 'n stepped, it was not typed');
    const at = await text(p, 'position');
    await p.keyboard.press('ArrowRight');
    assert.notEqual(await text(p, 'position'), at, 'Right steps forward');
    await p.keyboard.press('ArrowLeft');
    assert.equal(await text(p, 'position'), at, 'Left steps back');

    // Enter keeps the indentation, one level deeper after a colon.
    await p.fill($('editor'), '');
    await p.locator($('editor')).focus();
    await p.keyboard.type('for i in range(60):');
    await p.keyboard.press('Enter');
    await p.keyboard.type('print(i)');
    assert.equal(await p.locator($('editor')).inputValue(), 'for i in range(60):\n    print(i)');
    // The output box follows the newest line.
    await p.click($('run'));
    await outcomeMatches(p, /finished after 1\d\d steps/);
    await p.click($('continue'));
    await p.waitForFunction((id) => {
      const out = document.querySelector(`[data-testid="${id}"]`);
      return out && out.scrollHeight > out.clientHeight && out.scrollTop + out.clientHeight >= out.scrollHeight - 2;
    }, 'stdout', { timeout: 5_000 });

    await p.fill($('editor'), 'name = input("Your name? ")\nprint("Hello", name)\n');
    await p.fill($('stdin'), '');
    await p.click($('run'));
    await outcomeMatches(p, /EOFError/);
    assert.match(await text(p, 'input-hint'), /Standard input/);
  }));

  await check('the step limit: one message, the run ends on its last recorded step', () => testsInFreshPage(async (p) => {
    await p.fill($('editor'), 'i = 0\nwhile True:\n    i += 1\n');
    await p.click($('run'));
    await outcomeMatches(p, /step limit/);
    const outcome = await text(p, 'outcome');
    assert.doesNotMatch(outcome, /raise the limit/);
    assert.equal(await p.locator('.limit').count(), 0, 'one message, not two');
    await p.click($('continue'));
    assert.notEqual(await text(p, 'current-line'), 'end');
    assert.match(await text(p, 'variables'), /i●?\s+\d+/);
    assert.match(await text(p, 'jump-to-error'), /last step/);
    await shot(p, '15-step-limit');
  }));

  await check('the live checker names indentation, tab and bracket errors where CPython does', () => testsInFreshPage(async (p) => {
    const problems = async (pattern) => {
      await p.waitForFunction(([id, source]) => new RegExp(source).test(document.querySelector(`[data-testid="${id}"]`)?.textContent ?? ''),
        ['errors', pattern.source], { timeout: 5_000 });
      return text(p, 'errors');
    };
    await p.fill($('editor'), 'x = 1\n    y = 2\n');
    assert.match(await problems(/unexpected indent/), /^Line 2:5 unexpected indent/);
    assert.equal(await p.locator('.gutter .error-line').innerText(), '2', 'the error line is marked');
    await p.fill($('editor'), 'if True:\n\tx = 1\n        y = 2\n');
    assert.match(await problems(/tabs and spaces/), /^Line 3:9 inconsistent use of tabs and spaces in indentation/);
    await p.fill($('editor'), 'total = sum([1, 2\nprint(total)\n');
    assert.match(await problems(/never closed/), /^Line 1:13 `\[` was never closed/);
    // CPython agrees, and a program that did not run offers nothing to step through.
    await p.click($('run'));
    await outcomeMatches(p, /syntax error on line 1: '\[' was never closed/);
    assert.equal(await p.locator($('step-into')).isVisible(), false, 'no step controls for a program that did not run');
    await shot(p, '12-syntax-error-run');
  }));

  await check('a phone (390×844): the header wraps, nothing is off-screen, the editor is wide', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const p = await context.newPage();
    try {
      await p.goto(`${BASE}/`);
      await p.waitForSelector('.highlight .tok-keyword');
      const fits = async (where) => {
        const width = await p.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(width <= 390, `${where}: the page is ${width} px wide`);
        for (const id of ['share', 'theme', 'present', 'run']) {
          const box = await p.locator($(id)).boundingBox();
          assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `${where}: ${id} is off-screen`);
        }
      };
      await fits('before a run');
      const editor = await p.locator('.code-scroll').boundingBox();
      assert.ok(editor.width >= 300, `the editor is ${editor.width} px wide`);
      await shot(p, '16-phone');
      await runProgram(p);
      await p.click($('next'));
      await fits('stepping');
      const boxes = await p.$$eval('.inspectors > .inspector', (els) => els.map((e) => {
        const r = e.getBoundingClientRect();
        return [r.left, r.top, r.right, r.bottom];
      }));
      for (let i = 0; i < boxes.length; i += 1) {
        for (let j = i + 1; j < boxes.length; j += 1) {
          const [a, b] = [boxes[i], boxes[j]];
          const apart = a[2] <= b[0] || b[2] <= a[0] || a[3] <= b[1] || b[3] <= a[1];
          assert.ok(apart, `inspectors ${i} and ${j} overlap`);
        }
      }
      await p.locator($('variables')).scrollIntoViewIfNeeded();
      await shot(p, '17-phone-debugger');
    } finally {
      await context.close();
    }
  });

  // The heap fixture of the frontend's unit tests (frontend/tests/fixtures/heap.py).
  const HEAP_PROGRAM = readFileSync(path.join(ROOT, 'frontend/tests/fixtures/heap.py'), 'utf8');
  const heapBoxes = (p, kind) => p.$$eval(`[data-testid="heap"] g.${kind} > text.title`, (ts) => ts.map((t) => t.textContent));

  await check('the heap diagram: frames left, objects right, arrows for references, aliasing and mutation', () => testsInFreshPage(async (p) => {
    await p.fill($('editor'), HEAP_PROGRAM);
    await p.fill($('stdin'), '');
    await runProgram(p);
    assert.equal(await p.locator($('heap')).count(), 0, 'the table is the default');
    await p.click($('view-diagram'));
    await p.waitForSelector($('heap'));
    assert.equal(await p.locator($('view-diagram')).getAttribute('aria-pressed'), 'true');
    assert.equal(await p.locator($('call-stack')).isVisible(), false, 'the diagram shows the frames itself');
    // To the append (line 16): then step over it, and the list's new row is highlighted.
    await p.click('[aria-label="Breakpoint on line 16"]');
    await p.click($('continue'));
    assert.equal(await text(p, 'current-line'), '16');
    assert.deepEqual(await heapBoxes(p, 'frame'), ['Global frame']);
    const objects = await heapBoxes(p, 'object');
    for (const title of ['function average(xs)', 'class Node', 'list', 'tuple', 'dict', 'Node']) {
      assert.ok(objects.includes(title), `${title} in ${objects}`);
    }
    assert.ok(!objects.some((t) => t.includes('0x')), `no addresses: ${objects}`);
    assert.equal(objects.filter((t) => t === 'list').length, 1, 'nums and alias are one list');
    // Arrows: average, Node, nums, alias, pair, ages, head, the tuple's list, head.next.
    assert.equal(await p.locator(`${$('heap')} path.ref`).count(), 9);
    // Arrows end on a box's left side, or loop round into its right side.
    const listArrows = await p.$eval($('heap'), (svg) => {
      const list = [...svg.querySelectorAll('g.object')].find((g) => g.querySelector('.title').textContent === 'list');
      const box = list.querySelector('rect.box');
      const [x, y, w] = ['x', 'y', 'width'].map((a) => Number(box.getAttribute(a)));
      return [...svg.querySelectorAll('path.ref')].filter((path) => {
        const [ex, ey] = path.getAttribute('d').split(/[ MC]/).filter(Boolean).slice(-2).map(Number);
        return (ex === x || ex === x + w) && ey > y && ey < y + 24;
      }).length;
    });
    assert.equal(listArrows, 3, 'three arrows end at the list: nums, alias and the tuple');
    await p.click($('step-over'));
    assert.equal(await p.locator(`${$('heap')} .object .cell.changed`).count(), 1, 'the appended item is marked');
    await shot(p, '18-heap-diagram');
    // Inside average(): a second frame whose xs points at the same list.
    await p.click($('step-into'));
    await p.click($('step-into'));
    assert.deepEqual(await heapBoxes(p, 'frame'), ['Global frame', 'average()']);
    assert.equal(await p.locator(`${$('heap')} g.frame.current text.title`).textContent(), 'average()');
    // The choice is remembered.
    await p.reload();
    await p.waitForSelector('.highlight .tok-keyword');
    await runProgram(p);
    await p.waitForSelector($('heap'));
    await p.click($('view-table'));
    assert.equal(await p.locator($('heap')).count(), 0);
    assert.ok(await p.locator($('variables')).isVisible());
  }));

  await check('the heap diagram shows recursion as a frame per call, and on a phone', () => testsInFreshPage(async (p) => {
    await p.fill($('editor'), 'def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n\n\nprint(fact(4))\n');
    await runProgram(p);
    await p.click($('view-diagram'));
    await p.click('[aria-label="Breakpoint on line 3"]');
    await p.click($('continue'));
    assert.deepEqual(await heapBoxes(p, 'frame'), ['Global frame', 'fact()', 'fact()', 'fact()', 'fact()']);
    assert.deepEqual(await heapBoxes(p, 'object'), ['function fact(n)']);
    // A click on a frame picks it, as in the call stack: the table then shows its locals.
    await p.locator(`${$('heap')} g.frame`).nth(1).click();
    assert.equal(await p.locator(`${$('heap')} g.frame.current text.value`).textContent(), '4');
    await shot(p, '19-heap-recursion');
    await p.click($('theme'));
    await shot(p, '19b-heap-recursion-dark');
    await p.click($('theme'));
    await p.setViewportSize({ width: 390, height: 844 });
    await p.locator($('heap')).scrollIntoViewIfNeeded();
    const width = await p.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `the page is ${width} px wide with the diagram`);
    await shot(p, '20-heap-phone');
  }));

  // 150 objects: three lists of 50 instances (the tracer records 50 items per container).
  const MANY_OBJECTS = `class Point:
    def __init__(self, x):
        self.x = x


a = [Point(i) for i in range(50)]
b = [Point(i) for i in range(50, 100)]
c = [Point(i) for i in range(100, 150)]
done = True
`;
  await check('the heap diagram draws 150 objects (and times it against the table with --bench)', () => testsInFreshPage(async (p) => {
    await p.fill($('editor'), MANY_OBJECTS);
    await runProgram(p);
    await p.locator('h1').click();
    await p.keyboard.press('c');
    await p.waitForFunction((id) => document.querySelector(`[data-testid="${id}"]`)?.textContent === 'end', 'current-line');
    await p.click($('view-diagram'));
    await p.waitForSelector($('heap'));
    assert.equal(await p.locator(`${$('heap')} g.object`).count(), 1 + 3 + 150, 'a class, three lists, 150 points');
    assert.equal(await p.locator(`${$('heap')} path.ref`).count(), 4 + 150);
    await shot(p, '21-heap-150-objects');
    if (!BENCH) return;
    // Switching view re-renders the whole panel: time each view, alternating, in one page.
    const time = (id) => p.evaluate((testId) => new Promise((done) => {
      const t0 = performance.now();
      document.querySelector(`[data-testid="${testId}"]`).click();
      requestAnimationFrame(() => setTimeout(() => done(performance.now() - t0), 0));
    }), id);
    const median = (xs) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)];
    const table = [];
    const diagram = [];
    for (let i = 0; i < 9; i += 1) {
      table.push(await time('view-table'));
      diagram.push(await time('view-diagram'));
    }
    // Stepping with the diagram open (each step re-renders it) against the table.
    const step = (key) => p.evaluate((k) => new Promise((done) => {
      const t0 = performance.now();
      window.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true }));
      requestAnimationFrame(() => setTimeout(() => done(performance.now() - t0), 0));
    }), key);
    const steps = async () => {
      const out = [];
      for (let i = 0; i < 5; i += 1) { out.push(await step('b')); out.push(await step('s')); }
      return median(out);
    };
    const diagramStep = await steps();
    await p.click($('view-table'));
    const tableStep = await steps();
    const [t, d] = [median(table), median(diagram)];
    console.log(`bench: 150-object heap: diagram ${d.toFixed(1)} ms, table ${t.toFixed(1)} ms to render (ratio ${(d / t).toFixed(2)}); a step with the diagram ${diagramStep.toFixed(1)} ms, with the table ${tableStep.toFixed(1)} ms (ratio ${(diagramStep / tableStep).toFixed(2)}); medians of 9 and 10, render to next frame`);
  }));

  await check('simple mode: Prev and Next first, pdb and neural mode under Advanced, remembered', async () => {
    const p = await openPage(browser, `${BASE}/`, { advanced: false });
    try {
      await p.fill($('editor'), PROGRAM);
      await runProgram(p);
      for (const id of ['prev', 'next', 'advanced']) assert.ok(await p.locator($(id)).isVisible(), `${id} is shown`);
      for (const id of ['step-over', 'continue', 'neural-toggle']) assert.equal(await p.locator($(id)).isVisible(), false, `${id} waits under Advanced`);
      assert.equal(await p.locator($('advanced')).getAttribute('aria-expanded'), 'false');
      await shot(p, '22-simple-mode');
      await p.click($('next'));
      assert.equal(await text(p, 'current-line'), '6');
      await p.click($('prev'));
      assert.equal(await text(p, 'current-line'), '1');
      await p.click($('advanced'));
      for (const id of ['step-over', 'continue', 'neural-toggle']) assert.ok(await p.locator($(id)).isVisible(), `${id} under Advanced`);
      assert.equal(await p.locator($('next')).isVisible(), false);
      await p.reload();
      await p.waitForSelector('.highlight .tok-keyword');
      await runProgram(p);
      assert.ok(await p.locator($('step-over')).isVisible(), 'Advanced stays open after a reload');
      // A program that did not run has nothing for the model to predict.
      await p.fill($('editor'), 'x = 5\nif x > 3\n    print("big")\n');
      await p.click($('run'));
      await outcomeMatches(p, /syntax error/);
      assert.equal(await p.locator($('neural-toggle')).isVisible(), false, 'no Neural toggle after a syntax error');
    } finally {
      await p.context().close();
    }
  });

  // Predict mode (issue 14, item 8): a learner guesses the next line and a value first.
  // `if` for the keyword a fresh page waits for (see openPage).
  const PREDICT_PROGRAM = 'x = 1\ny = x + 1\nif y:\n    print(y)\n';
  const predictResult = async (p) => {
    // The model's column fills in once the neural debugger answered (or said why it cannot).
    await p.waitForFunction((id) => !/…/.test(document.querySelector(`[data-testid="${id}"]`)?.textContent ?? '…'),
      'predict-model-line', { timeout: 120_000 });
    return {
      you: await text(p, 'predict-you-line'),
      model: await text(p, 'predict-model-line'),
      real: await text(p, 'predict-real-line'),
    };
  };
  await check('predict mode: the guess, the neural debugger and the real run side by side, scored; links open in it', async () => {
    const p = await openPage(browser, `${BASE}/`, { advanced: false });
    try {
      await p.fill($('editor'), PREDICT_PROGRAM);
      await p.fill($('stdin'), '');
      await runProgram(p);
      assert.equal(await p.locator($('predict-panel')).isVisible(), false, 'off until asked for');
      await p.click($('predict-toggle'));
      assert.equal(await p.locator($('predict-toggle')).getAttribute('aria-pressed'), 'true');
      await p.waitForSelector($('predict-panel'));
      // A click on line 2 of the code picks it, and the editor marks it.
      const box = await p.locator($('editor')).boundingBox();
      await p.mouse.click(box.x + 60, box.y + 8 + 21 + 10);
      assert.equal(await p.locator($('predict-line')).inputValue(), '2');
      assert.equal(await p.locator('.code-cell').getAttribute('data-guess'), '2', 'the code marks the guess');
      assert.equal(await p.locator($('editor')).inputValue(), PREDICT_PROGRAM, 'the click typed nothing');
      await shot(p, '25a-predict-guess');
      await p.fill($('predict-value'), 'x = 1');
      await p.click($('predict-check'));
      assert.equal(await text(p, 'current-line'), '2', 'Check took the step');
      let result = await predictResult(p);
      assert.equal(result.you, '2 ✓');
      assert.equal(result.real, '2');
      assert.match(result.model, /^(\d+ [✓✗]|the end [✓✗]|no answer ✗|—)$/);
      assert.equal(await text(p, 'predict-you-value'), '1 ✓');
      assert.equal(await text(p, 'predict-real-value'), '1');
      assert.match(await text(p, 'predict-real'), /About to run line 2/);
      // Keyboard only: the focus is back on the line box; a wrong value this time.
      assert.equal(await p.evaluate(() => document.activeElement?.dataset.testid), 'predict-line');
      await p.keyboard.type('3');
      await p.keyboard.press('Tab');
      await p.keyboard.type('y = 3');
      await p.keyboard.press('Enter');
      assert.equal(await text(p, 'current-line'), '3');
      result = await predictResult(p);
      assert.equal(result.you, '3 ✓');
      assert.equal(await text(p, 'predict-you-value'), '3 ✗');
      assert.equal(await text(p, 'predict-real-value'), '2');
      assert.match(await text(p, 'predict-score'), /^You: lines 2\/2, values 1\/2( · neural debugger: lines \d\/2, values \d\/2)?$/);
      await shot(p, '25-predict-mode');
      await p.setViewportSize({ width: 390, height: 844 });
      await p.locator($('predict-panel')).scrollIntoViewIfNeeded();
      const width = await p.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 390, `the page is ${width} px wide in predict mode`);
      await shot(p, '26-predict-mode-phone');
      await p.setViewportSize({ width: 1280, height: 720 });
      // A guess needs a line; a value must read name = value.
      await p.fill($('predict-value'), 'nonsense');
      await p.click($('predict-check'));
      assert.match(await text(p, 'predict-problem'), /next/);
      await p.fill($('predict-line'), '4');
      await p.click($('predict-check'));
      assert.match(await text(p, 'predict-problem'), /name = value/);
      assert.equal(await text(p, 'current-line'), '3', 'no step without a valid guess');
      // At the end there is nothing left to guess; the last result and the score stay.
      for (let i = 0; i < 3; i += 1) await p.click($('next'));
      assert.equal(await text(p, 'current-line'), 'end');
      assert.equal(await p.locator($('predict-check')).isVisible(), false, 'no guess form at the end');
      assert.ok(await p.locator($('predict-score')).isVisible());
      for (let i = 0; i < 3; i += 1) await p.click($('prev'));
      assert.equal(await text(p, 'current-line'), '3');

      // The teacher's link opens in predict mode; the same link without the query does not.
      await p.click($('share'));
      const link = await p.locator($('share-link')).inputValue();
      assert.match(link, /\/\?predict#v1\./);
      assert.match(await p.locator('label[for="share-link"]').innerText(), /predict mode/);
      const student = await openPage(browser, link, { advanced: false });
      await student.waitForSelector($('predict-panel'), { timeout: 30_000 });
      assert.equal(await student.locator($('predict-toggle')).getAttribute('aria-pressed'), 'true');
      assert.equal(await text(student, 'current-line'), '3');
      await student.context().close();
      const old = await openPage(browser, link.replace('?predict', ''), { advanced: false });
      await old.waitForSelector($('current-line'), { timeout: 30_000 });
      assert.equal(await old.locator($('predict-panel')).isVisible(), false, 'an old link opens as before');
      await old.context().close();
      await p.click($('make-short-link'));
      const short = await p.locator($('short-link')).inputValue();
      assert.match(short, /\/s\/[^/?]+\?predict$/);
      const viaShort = await openPage(browser, short, { advanced: false });
      await viaShort.waitForSelector($('predict-panel'), { timeout: 30_000 });
      await viaShort.context().close();
    } finally {
      await p.context().close();
    }
  });

  await check('predict mode without a model says so plainly', async () => {
    const p = await openPage(browser, `${BASE}/?predict`, { advanced: false });
    try {
      // The real server, but its welcome says it has no model (as one started without one does).
      await p.routeWebSocket(/\/api\/ws$/, (ws) => {
        const server = ws.connectToServer();
        server.onMessage((message) => {
          const parsed = JSON.parse(message);
          // Every message is an envelope {seq, job?, body}.
          if (parsed.body?.type === 'welcome') {
            parsed.body.neural = { available: false, reason: 'Neural mode is off: this server has no model.' };
          }
          ws.send(JSON.stringify(parsed));
        });
      });
      await p.fill($('editor'), PREDICT_PROGRAM);
      await runProgram(p);
      await p.fill($('predict-line'), '2');
      await p.keyboard.press('Enter');
      const result = await predictResult(p);
      assert.equal(result.model, '—');
      assert.equal(await text(p, 'predict-model-note'), 'No neural prediction: Neural mode is off: this server has no model.');
      assert.equal(await text(p, 'predict-score'), 'You: lines 1/1');
      await shot(p, '27-predict-no-model');
    } finally {
      await p.context().close();
    }
  });

  await check('a run stuck in a loop says which lines and what never changed', () => testsInFreshPage(async (p) => {
    await p.fill($('editor'), 'i = 0\nwhile i < 10:\n    total = i * 2\n');
    await p.click($('run'));
    await outcomeMatches(p, /step limit/);
    assert.match(await text(p, 'loop-hint'), /^Lines 2–3 ran [\d,]+ times; i never changed there\.$/);
    assert.equal(await p.locator(`${$('loop-hint')} code`).innerText(), 'i');
    await shot(p, '24-stuck-loop-hint');
  }));

  await check('presentation mode: a long line shows that it goes on, and scrolls', () => testsInFreshPage(async (p) => {
    const long = `message = "${'a very long line of text '.repeat(8)}"`;
    await p.fill($('editor'), `x = 1\n${long}\nprint(len(message))\n`);
    await runProgram(p);
    await p.locator('h1').click();
    await p.keyboard.press('p');
    await p.keyboard.press('ArrowRight');
    const box = await p.locator('.code-scroll').evaluate((e) => ({
      scrollable: e.scrollWidth > e.clientWidth,
      attachment: getComputedStyle(e).backgroundAttachment,
      bottom: e.getBoundingClientRect().bottom,
    }));
    assert.ok(box.scrollable, 'the long line is wider than the editor');
    // Headless Chromium draws no scrollbars: the right-edge shadow is what shows the rest.
    assert.match(box.attachment, /local.*scroll/, 'a shadow marks the cut-off lines');
    assert.ok(box.bottom <= 720, `the editor's scrollbar is on screen (the editor ends at ${box.bottom})`);
    await shot(p, '23-presentation-long-line');
    await p.locator('.code-scroll').evaluate((e) => { e.scrollLeft = e.scrollWidth; });
    // Scrolled to the end of the long line, the line numbers and the current line's bar stay.
    const scroller = await p.locator('.code-scroll').boundingBox();
    const gutter = await p.locator('.gutter').boundingBox();
    assert.ok(Math.abs(gutter.x - scroller.x) <= 2, `the line numbers are at x=${gutter.x}, the editor at ${scroller.x}`);
    const bar = await p.locator('.line-marker').boundingBox();
    assert.ok(bar.x + bar.width >= scroller.x + scroller.width - 20, 'the current line is marked to the end of the long line');
    await shot(p, '23b-presentation-long-line-scrolled');
    // The diagram's text grows with the rest.
    await p.click($('view-diagram'));
    const [font, zoom] = await p.locator(`${$('heap')} text.value`).first().evaluate((t) => [parseFloat(getComputedStyle(t).fontSize), t.closest('svg').currentCSSZoom]);
    assert.ok(font * zoom >= 19, `diagram text is ${font * zoom} px in presentation mode`);
    await shot(p, '23c-presentation-diagram');
  }));

  if (BENCH) {
    await check('time to interactive', async () => {
      const runs = 5;
      let tti = 0;
      let fetchHtml = 0;
      for (let i = 0; i < runs; i += 1) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
        const p = await context.newPage();
        const t0 = Date.now();
        await p.goto(`${BASE}/`);
        await p.waitForSelector('.highlight .tok-keyword');
        tti += Date.now() - t0;
        fetchHtml += await p.evaluate(async (url) => {
          const t = performance.now();
          await (await fetch(url, { cache: 'no-store' })).text();
          return performance.now() - t;
        }, `${BASE}/index.html`);
        await context.close();
      }
      tti /= runs;
      fetchHtml /= runs;
      console.log(`bench: time to interactive ${tti.toFixed(0)} ms (cold context, localhost); fetching index.html ${fetchHtml.toFixed(1)} ms; ratio ${(tti / fetchHtml).toFixed(0)}x`);
    });
  }
} finally {
  await browser.close();
}
if (failed() > 0) {
  console.log(`e2e: ${failed()} check(s) failed; screenshots in ${ARTIFACTS}`);
  process.exit(1);
}
console.log(`e2e: all checks passed; screenshots in ${ARTIFACTS}`);
