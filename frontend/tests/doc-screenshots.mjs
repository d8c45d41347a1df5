#!/usr/bin/env node
// Copies the screenshots the docs show from the last e2e run (frontend/test-results/screenshots,
// written by tests/run-e2e.mjs in Debian's Chromium) to docs/screenshots/ as web-<name>.png.
//   node tests/doc-screenshots.mjs            copy every picture the docs use
//   node tests/doc-screenshots.mjs --to DIR   copy them to DIR instead
// A picture missing from the run (a scenario left out with E2E_ONLY) is reported and skipped;
// the exit status is 1 when nothing was copied.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FRONTEND = path.resolve(HERE, '..');
const FROM = path.join(FRONTEND, 'test-results/screenshots');

/** The e2e pictures the docs and the README show (docs/web-*.md, README's screenshot table):
 * [e2e name, docs name]. */
export const DOC_SHOTS = [
  ['home-desktop', 'home-desktop'],
  ['upload-results-verdicts-desktop', 'upload-results-desktop'], // a batch: verdicts, Download all
  ['upload-refused-desktop', 'upload-refused-desktop'], // a refused type in words
  ['status-jpeg-desktop', 'status-jpeg-desktop'], // verdict, counts and the preview
  ['status-jpeg-mobile', 'status-jpeg-mobile'],
  ['status-office-desktop', 'status-office-desktop'],
  ['status-partial-desktop', 'status-partial-desktop'],
  ['status-paused-desktop', 'status-paused-desktop'], // "Paused by the administrator"
  ['dashboard-mobile', 'dashboard-mobile'],
  ['admin-users-desktop', 'admin-users-desktop'],
  ['admin-files-mobile', 'admin-files-mobile'], // the Files tab's cards at 390 px
];

function main() {
  const at = process.argv.indexOf('--to');
  const to = at > 0 ? path.resolve(process.argv[at + 1]) : path.resolve(FRONTEND, '../docs/screenshots');
  fs.mkdirSync(to, { recursive: true });
  let copied = 0;
  for (const [name, target] of DOC_SHOTS) {
    const source = path.join(FROM, `${name}.png`);
    if (!fs.existsSync(source)) {
      console.log(`[shots] missing ${name}.png (not in the last e2e run)`);
      continue;
    }
    fs.copyFileSync(source, path.join(to, `web-${target}.png`));
    copied += 1;
  }
  console.log(`[shots] ${copied} of ${DOC_SHOTS.length} copied to ${to}`);
  process.exit(copied ? 0 : 1);
}

main();
