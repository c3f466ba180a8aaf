// What both end-to-end scripts share: where the server and the artifacts are, Chromium
// from the project-local playwright-core, and a check runner that counts failures.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

export const BASE = (process.env.BASE_URL || 'http://127.0.0.1:8080').replace(/\/$/, '');
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ARTIFACTS = process.env.ARTIFACTS_DIR || path.join(ROOT, 'tests', 'artifacts');
// playwright-core is pinned in the project-local .tools/ (cargo xtask setup).
const { chromium } = createRequire(path.join(ROOT, '.tools', 'package.json'))('playwright-core');
mkdirSync(ARTIFACTS, { recursive: true });

/** Debian's headless Chromium, without the background traffic this closed network refuses. */
export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** The selector of a test hook. */
export const $ = (id) => `[data-testid="${id}"]`;

let failures = 0;
// E2E_ONLY=regex runs only the checks whose names match (those that need no earlier check).
const only = process.env.E2E_ONLY ? new RegExp(process.env.E2E_ONLY) : null;
/** Runs one named check; a failure is printed and counted, and the next check runs. */
export async function check(name, body) {
  if (only && !only.test(name)) return;
  const started = Date.now();
  try {
    await body();
    console.log(`ok   ${name} (${Date.now() - started} ms)`);
  } catch (error) {
    failures += 1;
    console.log(`FAIL ${name}: ${error.stack || error}`);
  }
}
export const failed = () => failures;

export async function shot(page, name) {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
}
