#!/usr/bin/env node
// End-to-end: the built web app (frontend/dist) served by `sanitas serve` on a temporary data
// dir, driven in Debian's Chromium through playwright-core. No mocks: the real API, executor,
// sandbox and engine. Prints "N passed, N failed" and exits non-zero on any failure.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { a11yLog, assertFocusVisible, checkA11y } from './e2e/a11y.mjs';
import { adminFileManagement } from './e2e/admin-files.mjs';
import { analyticsCharts } from './e2e/analytics-charts.mjs';
import { mailHeld } from './e2e/mail-held.mjs';
import { apiKeys } from './e2e/api-keys.mjs';
import { policiesReportsAudit } from './e2e/policies-reports-audit.mjs';
import { pausedQueue } from './e2e/queue-paused.mjs';
import { webhooks } from './e2e/webhooks.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FRONTEND = path.resolve(HERE, '..');
const ROOT = path.resolve(FRONTEND, '..');
const SANITAS = path.join(ROOT, 'backend/.venv/bin/sanitas');
const PYTHON = path.join(ROOT, 'backend/.venv/bin/python');
const SHOTS = path.join(FRONTEND, 'test-results/screenshots');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const CHROME_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ADMIN = { email: 'admin@e2e-sanitas.org', password: 'Admin-e2e-password-1' };
const USER = { email: `user${Date.now()}@e2e-sanitas.org`, password: 'User-e2e-pass-1', firstName: 'Ada', lastName: 'Lovelace' };
const DESKTOP = { width: 1280, height: 860 };
const MOBILE = { width: 390, height: 844 };
const ONLY = process.env.E2E_ONLY ? new RegExp(process.env.E2E_ONLY, 'i') : null;

const results = [];
const apiTrail = [];
/** Keeps the last API answers of a page, printed when a scenario fails. */
function watch(page) {
  page.on('response', (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/api/')) apiTrail.push(`${r.request().method()} ${url.pathname} ${r.status()}`);
    if (apiTrail.length > 30) apiTrail.shift();
  });
  page.on('pageerror', (e) => apiTrail.push(`pageerror ${e.message}`));
}
let lastPage = null;
const log = (...a) => console.log('[e2e]', ...a);

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function waitForHealth(base, proc, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (proc.exitCode !== null) throw new Error(`sanitas serve exited with ${proc.exitCode}`);
    try {
      const res = await fetch(`${base}/health`);
      if (res.ok) return;
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error('server did not become healthy in time');
}

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

async function test(name, fn) {
  if (ONLY && !ONLY.test(name)) return;
  const started = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    log(`PASS ${name} (${((Date.now() - started) / 1000).toFixed(1)}s)`);
  } catch (error) {
    results.push({ name, ok: false, error });
    log(`FAIL ${name}: ${error?.stack || error}`);
    log(`  last API calls: ${apiTrail.join(' | ')}`);
    if (lastPage && !lastPage.isClosed()) {
      const file = `FAILED-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}.png`;
      log(`  at ${lastPage.url()}; screenshot ${file}`);
      await lastPage.screenshot({ path: path.join(SHOTS, file), fullPage: true }).catch(() => {});
    }
  }
}

/** Checks the page with axe (failing on any violation), then takes its screenshot. */
async function shot(page, name) {
  await page.waitForTimeout(150);
  await checkA11y(page, name);
  // Toasts are checked by the tests; keep them out of the pictures.
  await page.evaluate(() => document.querySelectorAll('.Toastify').forEach((el) => { el.style.visibility = 'hidden'; }));
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true, animations: 'disabled' });
  await page.evaluate(() => document.querySelectorAll('.Toastify').forEach((el) => { el.style.visibility = ''; }));
}

/** Screenshot at desktop width and at 390 px, then restore the desktop viewport. */
async function shots(page, name) {
  await page.setViewportSize(DESKTOP);
  await shot(page, `${name}-desktop`);
  await page.setViewportSize(MOBILE);
  await shot(page, `${name}-mobile`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  await page.setViewportSize({ width: 360, height: 780 });
  const overflow360 = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  await page.setViewportSize(DESKTOP);
  assert(overflow <= 1, `${name}: page is ${overflow}px wider than a 390px screen`);
  assert(overflow360 <= 1, `${name}: page is ${overflow360}px wider than a 360px screen`);
}

const toast = (page, text) => page.locator('.Toastify').getByText(text, { exact: false }).first();

async function login(page, base, { email, password }) {
  await page.goto(`${base}/login`);
  await page.getByLabel('Email address').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await toast(page, 'Login successful!').waitFor({ timeout: 15_000 });
}

function readOutboxLink(dataDir, email, pathPart) {
  const dir = path.join(dataDir, 'outbox');
  if (!fs.existsSync(dir)) return null;
  const files = fs.readdirSync(dir).map((f) => path.join(dir, f)).sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  for (const file of files) {
    let text = fs.readFileSync(file, 'utf8');
    if (!text.toLowerCase().includes(email.toLowerCase())) continue;
    // Undo quoted-printable soft breaks and =3D so the link reads whole.
    text = text.replace(/=\r?\n/g, '').replace(/=3D/gi, '=');
    const m = text.match(new RegExp(`https?://[^\\s"'<>]*${pathPart}\\?token=[A-Za-z0-9_\\-.%~]+`));
    if (m) return m[0];
  }
  return null;
}

async function main() {
  assert(fs.existsSync(path.join(FRONTEND, 'dist/index.html')), 'frontend/dist is missing: run `npm run build` (make test builds it)');
  assert(fs.existsSync(SANITAS), `missing ${SANITAS}: run make install`);
  assert(fs.existsSync(CHROMIUM), `missing Chromium at ${CHROMIUM}`);
  fs.rmSync(SHOTS, { recursive: true, force: true });
  fs.mkdirSync(SHOTS, { recursive: true });

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sanitas-e2e-'));
  const fixtures = path.join(dataDir, 'fixtures');
  const downloads = path.join(dataDir, 'downloads');
  fs.mkdirSync(downloads, { recursive: true });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // The Mail scenario's sink (for Postfix's re-injection listener) and filter ports.
  const mailSinkPort = await freePort();
  const mailFilterPort = await freePort();
  // Webhooks: the scenario's receiver listens on 127.0.0.1, which only this development switch
  // allows; retries come after a second instead of 30 s.
  const env = { ...process.env, SANITAS_DATA_DIR: dataDir, SANITAS_PUBLIC_URL: base, SANITAS_LOG_LEVEL: 'WARNING',
    SANITAS_WEBHOOK_ALLOW_PRIVATE: 'true', SANITAS_WEBHOOK_RETRY_BASE_SECONDS: '1',
    // Every scenario signs in from 127.0.0.1; the default (20 per address per 15 minutes) is
    // about what the whole suite needs. The limit itself is tested by the backend's API tests.
    SANITAS_RATE_LIMIT_LOGIN_PER_IP: '200', SANITAS_MAIL_NEXT_HOP: `127.0.0.1:${mailSinkPort}` };
  delete env.SANITAS_DATABASE_URL;

  const fx = spawnSync(PYTHON, [path.join(HERE, 'e2e/make_fixtures.py'), fixtures], { encoding: 'utf8' });
  assert(fx.status === 0, `fixture generation failed: ${fx.stderr}`);
  // create-admin acts on an installation: `migrate` makes this one (serve would too).
  const migrated = spawnSync(SANITAS, ['migrate'], { env, encoding: 'utf8' });
  assert(migrated.status === 0, `migrate failed: ${migrated.stderr}`);
  const admin = spawnSync(SANITAS, ['create-admin', ADMIN.email], { env: { ...env, SANITAS_ADMIN_PASSWORD: ADMIN.password }, encoding: 'utf8' });
  assert(admin.status === 0, `create-admin failed: ${admin.stderr}`);

  const serverLog = fs.openSync(path.join(dataDir, 'server.log'), 'w');
  const server = spawn(SANITAS, ['serve', '--port', String(port), '--host', '127.0.0.1'], { env, stdio: ['ignore', serverLog, serverLog] });
  let browser;
  try {
    await waitForHealth(base, server);
    log(`server up at ${base} (data ${dataDir})`);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROME_ARGS });
    const newPage = async () => {
      const context = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      watch(page);
      lastPage = page;
      return page;
    };

    await test('unknown path shows the 404 page', async () => {
      const page = await newPage();
      await page.goto(`${base}/no/such/page`);
      await page.getByRole('heading', { name: '404 - Page Not Found' }).waitFor();
      await page.getByRole('link', { name: 'Go Home' }).click();
      await page.waitForURL(`${base}/`);
      await page.goto(`${base}/no/such/page`);
      await shots(page, '404');
      await page.context().close();
    });

    await test('public screens render (home, pricing, about, help, privacy, terms, contact)', async () => {
      const page = await newPage();
      await page.goto(base);
      await page.getByRole('heading', { name: 'Secure File Sanitization' }).waitFor();
      await page.getByRole('link', { name: 'Get Started Free' }).waitFor();
      await shots(page, 'home');
      await page.goto(`${base}/pricing`);
      await page.getByRole('link', { name: 'Contact Sales' }).waitFor();
      await shots(page, 'pricing');
      for (const [route, heading] of [['about', 'About Sanitas'], ['help', 'Help Center'], ['privacy', 'Privacy Policy'], ['terms', 'Terms of Service']]) {
        await page.goto(`${base}/${route}`);
        await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
        if (route === 'help') await shots(page, 'help');
        else await checkA11y(page, route);
      }
      assert((await page.locator('footer').innerText()).includes(String(new Date().getFullYear())), 'footer lacks the current year');
      await page.context().close();
    });

    await test('contact form is stored by the API', async () => {
      const page = await newPage();
      await page.goto(`${base}/contact`);
      await page.getByLabel('Name').fill('Grace Hopper');
      await page.getByLabel('Email').fill('grace@e2e-sanitas.org');
      await page.getByLabel('Subject').fill('Enterprise pricing');
      await page.getByLabel('Message').fill('We would like on-premise deployment for 200 seats.');
      await page.getByRole('button', { name: 'Send message' }).click();
      await page.getByRole('status').getByText('Thank you for your message').waitFor();
      await shots(page, 'contact');
      await page.context().close();
    });

    const userPage = await newPage();
    let registered = false;
    await test('register, verify via the emailed link, sign in', async () => {
      const page = userPage;
      lastPage = page;
      await page.goto(`${base}/register`);
      await page.getByRole('heading', { name: 'Create your account' }).waitFor();
      await shots(page, 'register');
      await page.getByLabel('First name').fill(USER.firstName);
      await page.getByLabel('Last name').fill(USER.lastName);
      await page.locator('#email').fill(USER.email);
      await page.locator('#password').fill('short');
      await page.locator('#confirmPassword').fill('short');
      await page.getByRole('button', { name: 'Create account' }).click();
      // shown under the password field (and announced), not only in a toast
      await page.locator('#password-error').getByText('Password must be at least 6 characters long').first().waitFor();
      await checkA11y(page, 'register with an error');
      await page.locator('#password').fill(USER.password);
      await page.locator('#confirmPassword').fill(USER.password);
      await page.getByRole('button', { name: 'Create account' }).click();
      await toast(page, 'Registration successful! Please check your email to verify your account.').waitFor();
      await page.waitForURL(`${base}/login`);
      registered = true;
      let link = null;
      for (let i = 0; i < 20 && !link; i++) {
        link = readOutboxLink(dataDir, USER.email, '/verify-email');
        if (!link) await page.waitForTimeout(250);
      }
      assert(link, 'no verification link in the outbox');
      assert(link.startsWith(base), `verification link ${link} does not use SANITAS_PUBLIC_URL`);
      await page.goto(link);
      await page.getByText('Email verified', { exact: false }).waitFor();
      await shots(page, 'verify-email');
      // A fresh sign-in: clear the session the registration opened.
      await page.evaluate(() => localStorage.clear());
      await page.goto(`${base}/login`);
      await page.getByRole('heading', { name: 'Sign in to your account' }).waitFor();
      await shots(page, 'login');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await toast(page, 'Please fill in all fields').waitFor();
      await checkA11y(page, 'login with an error');
      await assertFocusVisible(page.getByLabel('Email address'), 'login email input');
      await login(page, base, USER);
      await page.waitForURL(`${base}/dashboard`);
      await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
      await page.getByTestId('quota-usage').waitFor();
      assert((await page.getByTestId('user-menu-name').innerText()) === USER.firstName, 'user menu does not show the first name');
      await shots(page, 'dashboard');
      await page.getByTestId('user-menu-name').click();
      await page.getByRole('menu').waitFor();
      await checkA11y(page, 'user menu open');
      await page.keyboard.press('Escape');
    });

    const uploaded = {};
    await test('upload a macro .docm and a GPS JPEG, watch COMPLETED, download clean files', async () => {
      assert(registered, 'needs the registered user');
      const page = userPage;
      lastPage = page;
      await page.getByRole('link', { name: 'Upload', exact: true }).first().click();
      await page.waitForURL(`${base}/upload`);
      await page.getByText('Upload guidelines').waitFor();
      await shots(page, 'upload');
      // A type the server does not accept is refused in the page, next to the drop zone.
      await page.getByTestId('file-input').setInputFiles({ name: 'tool.exe', mimeType: 'application/octet-stream', buffer: Buffer.from('MZ') });
      // The refusal says the accepted kinds and the server's own reason for the name (its
      // refusedFormats), and the drop zone is not left painted as an error.
      const refusal = page.getByTestId('upload-refusals').getByRole('alert');
      await refusal.filter({ hasText: 'The file was not accepted' }).getByText('tool.exe').waitFor();
      const refusalText = await refusal.innerText();
      assert(/File type must be one of the supported kinds: documents, .*images.* Executables and scripts are not accepted \(\.exe\)\./.test(refusalText), `refusal: ${refusalText}`);
      assert(!/red/.test(await page.getByTestId('dropzone').getAttribute('class')), 'the drop zone is painted red after the drop');
      await shots(page, 'upload-refused');
      await page.getByTestId('file-input').setInputFiles([path.join(fixtures, 'invoice-macro.docm'), path.join(fixtures, 'holiday-gps.jpg'),
        path.join(fixtures, 'bundle-with-tool.zip')]);
      await toast(page, 'Successfully uploaded 3 file(s). Files are being processed. You can check their status below.').waitFor({ timeout: 30_000 });
      const links = page.getByTestId('upload-results').getByRole('link', { name: 'View Status' });
      assert((await links.count()) === 3, 'expected three View Status links');
      await shots(page, 'upload-results');
      for (const href of await links.evaluateAll((els) => els.map((e) => e.getAttribute('href')))) {
        const row = page.locator('li', { has: page.locator(`a[href="${href}"]`) });
        const name = (await row.locator('p').first().innerText()).trim();
        uploaded[name] = href.split('/').pop();
      }
      assert(uploaded['invoice-macro.docm'] && uploaded['holiday-gps.jpg'] && uploaded['bundle-with-tool.zip'], `unexpected upload rows ${JSON.stringify(uploaded)}`);

      // Each finished row shows its verdict (a macro removed is never "clean") and a one-click
      // Download; "Download all" saves the batch as one ZIP, counted per file.
      const results = page.getByTestId('upload-results');
      await results.getByTestId('verdict-badge').nth(2).waitFor({ timeout: 150_000 });
      const verdicts = {};
      for (const name of Object.keys(uploaded)) {
        const row = results.getByTestId('upload-row').filter({ hasText: name });
        verdicts[name] = await row.getByTestId('verdict-badge').getAttribute('data-verdict');
        await row.getByRole('button', { name: `Download ${name}` }).waitFor();
      }
      assert(verdicts['invoice-macro.docm'] === 'cleaned', `docm verdict ${verdicts['invoice-macro.docm']}`);
      assert(verdicts['holiday-gps.jpg'] === 'cleaned', `jpeg verdict ${verdicts['holiday-gps.jpg']}`);
      // The ZIP lost its program: partial, never an all-clear, and the summary names it.
      assert(verdicts['bundle-with-tool.zip'] === 'partial', `zip verdict ${verdicts['bundle-with-tool.zip']}`);
      await results.getByTestId('upload-row').filter({ hasText: 'bundle-with-tool.zip' }).getByText(/tool\.exe/).waitFor();
      await shots(page, 'upload-results-verdicts');
      const [zipped] = await Promise.all([
        page.waitForEvent('download', { timeout: 30_000 }),
        page.getByRole('button', { name: 'Download all (3)' }).click(),
      ]);
      const zipPath = path.join(downloads, zipped.suggestedFilename());
      await zipped.saveAs(zipPath);
      assert(zipped.suggestedFilename().endsWith('.zip'), `Download all saved ${zipped.suggestedFilename()}`);
      const listing = spawnSync(PYTHON, ['-c', 'import sys, zipfile; print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))', zipPath], { encoding: 'utf8' });
      const entries = listing.stdout.trim().split('\n').sort();
      assert(listing.status === 0 && entries.length === 3 && entries.includes('sanitized_invoice-macro.docx'), `Download all ZIP holds ${listing.stdout}${listing.stderr}`);
      log(`  Download all → ${zipped.suggestedFilename()}: ${entries.join(', ')}`);

      await page.goto(`${base}/status/${uploaded['bundle-with-tool.zip']}`);
      const partial = page.getByTestId('verdict-summary');
      await partial.waitFor({ timeout: 150_000 });
      assert(await partial.getAttribute('data-verdict') === 'partial', 'zip status page verdict');
      await partial.getByText('Partially cleaned – some content was dropped').waitFor();
      await partial.getByText('tool.exe', { exact: true }).waitFor();
      assert(await page.getByText('Your file is clean').count() === 0, 'zip: "Your file is clean" for a partial file');
      await page.waitForFunction(() => !document.querySelector('[aria-label="Loading preview"]'));
      await shots(page, 'status-partial');

      for (const [name, kind] of [['invoice-macro.docm', 'office'], ['holiday-gps.jpg', 'jpeg']]) {
        const id = uploaded[name];
        await page.goto(`${base}/status/${id}`);
        await page.getByRole('heading', { name: 'File Status' }).waitFor();
        const badge = page.getByTestId('status-badge').first();
        await page.waitForFunction(() => {
          const s = document.querySelector('[data-testid="status-badge"]')?.getAttribute('data-status');
          return s === 'COMPLETED' || s === 'FAILED';
        }, null, { timeout: 150_000 });
        const summary = page.getByTestId('verdict-summary');
        await summary.waitFor();
        assert(await summary.getAttribute('data-verdict') === 'cleaned', `${name}: status page verdict ${await summary.getAttribute('data-verdict')}`);
        assert(await page.getByText('Your file is clean').count() === 0, `${name}: "Your file is clean" for a file that was cleaned`);
        // The preview (a picture's) is shown; an office file has none. Wait until it settled.
        if (kind === 'jpeg') await page.getByRole('img', { name: /^Preview of the first page of the sanitized file/ }).waitFor();
        await page.waitForFunction(() => !document.querySelector('[aria-label="Loading preview"]'));
        const status = await badge.getAttribute('data-status');
        if (status !== 'COMPLETED') {
          const err = await page.locator('[role="alert"]').allInnerTexts();
          throw new Error(`${name} ended ${status}: ${err.join(' | ')}`);
        }
        const report = page.getByTestId('findings-report');
        await report.waitFor();
        const reportText = await report.innerText();
        assert(/removed/i.test(reportText), `${name}: report lists nothing removed: ${reportText}`);
        if (kind === 'jpeg') assert(/GPS/i.test(reportText), 'JPEG report does not mention GPS');
        if (kind === 'office') assert(/macro/i.test(reportText), 'docm report does not mention the macro');
        await shots(page, `status-${kind}`);
        await page.getByRole('link', { name: 'Download', exact: true }).click();
        await page.waitForURL(`${base}/download/${id}`);
        await page.getByText('File sanitized successfully').waitFor();
        await shots(page, `download-${kind}`);
        const [download] = await Promise.all([
          page.waitForEvent('download', { timeout: 30_000 }),
          page.getByRole('button', { name: 'Download Sanitized File' }).click(),
        ]);
        await toast(page, 'Download started').waitFor();
        const saved = path.join(downloads, download.suggestedFilename());
        await download.saveAs(saved);
        assert(download.suggestedFilename() !== name || kind === 'jpeg', `docm kept its macro-enabled name ${download.suggestedFilename()}`);
        const verdict = spawnSync(PYTHON, [path.join(HERE, 'e2e/check_clean.py'), kind, saved], { encoding: 'utf8' });
        assert(verdict.status === 0, `${name} → ${download.suggestedFilename()} is not clean: ${verdict.stdout}${verdict.stderr}`);
        log(`  ${name} → ${download.suggestedFilename()}: ${verdict.stdout.trim()}`);
        // One download in the ZIP above, one here.
        await page.getByTestId('download-count').filter({ hasText: '2' }).waitFor();
      }
    });

    await test('history lists the uploads with filters and empty states', async () => {
      assert(registered, 'needs the registered user');
      const page = userPage;
      lastPage = page;
      await page.goto(`${base}/history`);
      await page.getByRole('heading', { name: 'File History' }).waitFor();
      await page.getByRole('link', { name: 'invoice-macro.docm' }).waitFor();
      await shots(page, 'history');
      // A selection (ticked from the keyboard) downloads as one ZIP; the verdict filter narrows the list.
      const table = page.getByRole('table');
      await table.getByRole('checkbox', { name: 'Select invoice-macro.docm' }).focus();
      await page.keyboard.press('Space');
      await table.getByRole('checkbox', { name: 'Select holiday-gps.jpg' }).check();
      const [selection] = await Promise.all([
        page.waitForEvent('download', { timeout: 30_000 }),
        page.getByRole('button', { name: 'Download selected (2)' }).click(),
      ]);
      assert(selection.suggestedFilename().endsWith('.zip'), `Download selected saved ${selection.suggestedFilename()}`);
      await checkA11y(page, 'history with a selection');
      await page.getByLabel('Verdict').selectOption('clean');
      await page.getByTestId('history-empty').filter({ hasText: 'No files match your current filters.' }).waitFor();
      await page.getByLabel('Verdict').selectOption('cleaned');
      await page.getByRole('link', { name: 'invoice-macro.docm' }).waitFor();
      await page.getByLabel('Verdict').selectOption('');
      await assertFocusVisible(page.getByLabel('Status'), 'history status select');
      await page.getByLabel('Status').selectOption('FAILED');
      await page.getByTestId('history-empty').filter({ hasText: 'No files match your current filters.' }).waitFor();
      await page.getByLabel('Status').selectOption('ALL');
      await page.getByLabel('Search by file name').fill('holiday');
      await page.getByRole('link', { name: 'invoice-macro.docm' }).waitFor({ state: 'detached' });
      await page.getByRole('link', { name: 'holiday-gps.jpg' }).waitFor();
      await page.goto(`${base}/profile`);
      await page.getByText('Email cannot be changed').waitFor();
      await shots(page, 'profile');
    });

    await test('home shows the upload-info panel; profile edits send only changes', async () => {
      assert(registered, 'needs the registered user');
      const page = userPage;
      await page.goto(base);
      const panel = page.getByTestId('upload-info-panel');
      await panel.waitFor();
      const text = await panel.innerText();
      assert(/Maximum File Size[\s\S]*MB/.test(text) && /Supported Formats[\s\S]*\d+\+/.test(text) && /Batch Upload[\s\S]*\d+ files/.test(text), `panel: ${text}`);
      await page.getByRole('link', { name: 'Upload Files' }).first().waitFor();
      await page.goto(`${base}/profile`);
      const lastName = page.getByLabel('Last name');
      await page.waitForFunction(() => document.querySelector('#lastName')?.value === 'Lovelace');
      const sent = [];
      page.on('request', (r) => { if (r.url().endsWith('/api/auth/profile') && r.method() === 'PUT') sent.push(r.postDataJSON()); });
      await lastName.fill('King');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await toast(page, 'Profile updated successfully').waitFor();
      assert(JSON.stringify(sent) === JSON.stringify([{ lastName: 'King' }]), `profile update sent ${JSON.stringify(sent)}`);
      await page.getByLabel('Current password').fill(USER.password);
      await page.getByLabel('New password', { exact: true }).fill('short');
      await page.getByLabel('Confirm new password').fill('short');
      await page.getByRole('button', { name: 'Update password' }).click();
      // Errors stand under their fields: the client's check, then the server's wrong password.
      const newPassword = page.getByLabel('New password', { exact: true });
      await page.locator('#newPassword-error').filter({ hasText: 'New password must be at least 8 characters' }).waitFor();
      assert(await newPassword.getAttribute('aria-invalid') === 'true', 'the short new password is not marked invalid');
      await page.getByLabel('Current password').fill('not-the-password');
      await newPassword.fill('Long-enough-1');
      await page.getByLabel('Confirm new password').fill('Long-enough-1');
      await page.getByRole('button', { name: 'Update password' }).click();
      await page.locator('#currentPassword-error').filter({ hasText: 'Current password is incorrect' }).waitFor();
      await checkA11y(page, 'profile with password errors');
    });

    await test('a USER sees Access Denied on /admin', async () => {
      assert(registered, 'needs the registered user');
      const page = userPage;
      lastPage = page;
      await page.goto(`${base}/admin`);
      await page.getByText('Access Denied - You need admin privileges to access this page.').waitFor();
      await checkA11y(page, 'admin refused to a USER');
      assert(await page.getByRole('link', { name: 'Admin', exact: true }).count() === 0, 'a USER sees the Admin nav link');
    });

    await test('a 401 mid-session signs out to /login', async () => {
      assert(registered, 'needs the registered user');
      const page = userPage;
      lastPage = page;
      await page.goto(`${base}/dashboard`);
      await page.getByTestId('quota-usage').waitFor();
      const before = await page.evaluate(() => history.length);
      await page.evaluate(() => {
        const tokens = JSON.parse(localStorage.getItem('sanitas.tokens'));
        tokens.accessToken = 'revoked.or.forged.token';
        localStorage.setItem('sanitas.tokens', JSON.stringify(tokens));
      });
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'History' }).click();
      await page.waitForURL(`${base}/login`);
      const stored = await page.evaluate(() => [localStorage.getItem('sanitas.tokens'), localStorage.getItem('sanitas.user')]);
      assert(stored[0] === null && stored[1] === null, 'stored auth data was not removed');
      await page.getByRole('link', { name: 'Sign in', exact: true }).first().waitFor();
      const after = await page.evaluate(() => history.length);
      assert(after <= before + 1, `history grew by ${after - before}: the redirect did not replace the entry`);
      await page.goto(`${base}/upload`);
      await page.waitForURL(`${base}/login`);
      // Signing in again returns to the page the user came from.
      await page.getByLabel('Email address').fill(USER.email);
      await page.getByLabel('Password').fill(USER.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(`${base}/upload`);
    });

    await test('an admin changes a role, resets a quota, sees analytics', async () => {
      assert(registered, 'needs the registered user');
      const page = await newPage();
      await login(page, base, ADMIN);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).click();
      await page.waitForURL(`${base}/admin`);
      await page.getByTestId('success-rate').waitFor();
      // Both uploads completed: completed / recent = 100%.
      assert((await page.getByTestId('success-rate').innerText()).trim() === '100%', `success rate ${await page.getByTestId('success-rate').innerText()}`);
      await shots(page, 'admin-overview');
      await page.getByRole('button', { name: 'Pause queue' }).click();
      await toast(page, 'Queue paused').waitFor();
      await page.getByRole('button', { name: 'Resume queue' }).click();
      await toast(page, 'Queue resumed').waitFor();
      await page.getByRole('button', { name: 'Pause queue' }).waitFor();
      await page.getByRole('tab', { name: 'User Management' }).click();
      await page.getByLabel('Search users').fill(USER.email);
      const row = page.getByTestId(`user-row-${USER.email}`);
      await row.waitFor();
      await page.waitForFunction(() => document.querySelectorAll('[data-testid^="user-row-"]').length === 1);
      // An arrow key in the focused select only prepares a change: nothing is sent.
      const roleWrites = [];
      page.on('request', (r) => { if (r.method() === 'PUT' && /\/api\/users\/[^/]+$/.test(new URL(r.url()).pathname)) roleWrites.push(r.postDataJSON()); });
      const select = row.getByLabel(`Role of ${USER.email}`, { exact: true });
      await select.focus();
      await page.keyboard.press('ArrowDown');
      await page.waitForTimeout(500);
      assert(roleWrites.length === 0, `an arrow key in the role select sent ${JSON.stringify(roleWrites)}`);
      await select.selectOption('ENTERPRISE');
      await row.getByRole('button', { name: `Change role of ${USER.email}` }).click();
      const confirm = page.getByRole('alertdialog', { name: 'Change the role?' });
      await confirm.getByText(`from USER to ENTERPRISE`, { exact: false }).waitFor();
      await checkA11y(page, 'admin role change confirmation');
      // Focus stays in the dialog: Tab cycles between its two buttons.
      for (let i = 0; i < 3; i++) await page.keyboard.press('Tab');
      assert(await confirm.evaluate((el) => el.contains(document.activeElement)), 'Tab left the confirmation dialog');
      await confirm.getByRole('button', { name: 'Change role' }).click();
      await toast(page, 'User role updated successfully').waitFor();
      await page.waitForFunction((email) => document.querySelector(`[data-testid="user-row-${email}"] select`)?.value === 'ENTERPRISE', USER.email);
      assert(roleWrites.length === 1 && roleWrites[0].role === 'ENTERPRISE', `role writes ${JSON.stringify(roleWrites)}`);
      const reset = row.getByRole('button', { name: `Reset quota of ${USER.email}` });
      await reset.click();
      await page.getByRole('alertdialog', { name: 'Reset the quota?' }).getByRole('button', { name: 'Reset quota' }).click();
      await toast(page, 'User quota reset successfully').waitFor();
      await page.getByRole('alertdialog').waitFor({ state: 'detached' });
      assert(await reset.evaluate((el) => document.activeElement === el), 'focus did not return to the Reset quota button');
      await row.getByRole('button', { name: `Deactivate ${USER.email}` }).click();
      await page.getByRole('alertdialog', { name: 'Deactivate the user?' }).getByRole('button', { name: 'Cancel' }).click();
      assert((await row.innerText()).includes('Active'), 'cancelling the deactivation changed the account');
      await shots(page, 'admin-users');
      await page.getByRole('tab', { name: 'Analytics' }).click();
      await page.getByLabel('Timeframe').selectOption('week');
      await page.getByText('Files by status').waitFor();
      await shots(page, 'admin-analytics');
      await page.getByRole('tab', { name: 'File Management' }).click();
      await page.getByRole('search', { name: 'File filters' }).waitFor();
      await checkA11y(page, 'admin files tab');
      await page.getByRole('tab', { name: 'Messages' }).click();
      await page.getByTestId('contact-message').filter({ hasText: 'Enterprise pricing' }).filter({ hasText: 'grace@e2e-sanitas.org' }).waitFor();
      await checkA11y(page, 'admin messages tab');
      // The promotion is real: the user's next sign-in is ENTERPRISE.
      const res = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: USER.email, password: USER.password }) });
      const body = await res.json();
      assert(body?.data?.user?.role === 'ENTERPRISE', `role after change is ${body?.data?.user?.role}`);
      await page.context().close();
    });

    await test('Mail: a hostile message through sanitas mail; the admin sees it on the Mail tab and releases the original', async () => {
      await mailHeld({ newPage, base, admin: ADMIN, login, toast, shots, assert, env, python: PYTHON, dataDir,
        sinkPort: mailSinkPort, filterPort: mailFilterPort });
    });

    await test('an admin filters to a user\'s FAILED file, opens its report, re-queues and deletes it', async () => {
      const page = await newPage();
      await adminFileManagement({ page, base, admin: ADMIN, login, toast, shots, assert });
      await page.context().close();
    });

    await test('an admin pauses the queue: the status page says "Paused by the administrator", then follows the job once resumed', async () => {
      await pausedQueue({ newPage, base, admin: ADMIN, login, shots, assert });
    });

    await test('charts on an ENTERPRISE dashboard and the admin Analytics tab', async () => {
      await analyticsCharts({ newPage, base, admin: ADMIN, fixtures, readOutboxLink, dataDir, login, shots, assert });
    });

    await test('an ENTERPRISE user\'s policy, upload with it, CSV report; the admin\'s audit tab', async () => {
      await policiesReportsAudit({ newPage, base, admin: ADMIN, readOutboxLink, dataDir, login, toast, shots, shot, assert });
    });

    await test('API keys: a Pro user creates, uses and revokes a key; a GUEST sees the plan notice; an admin revokes a user\'s key', async () => {
      await apiKeys({ newPage, base, admin: ADMIN, readOutboxLink, dataDir, login, toast, shots, shot, assert });
    });

    await test('Webhooks: a Pro user adds an endpoint, copies its secret, sees a signed test event and file events delivered, switches it off and deletes it', async () => {
      await webhooks({ newPage, base, readOutboxLink, dataDir, toast, shots, assert });
    });

    await test('Google sign-in: button goes to the backend; errors come back to /login', async () => {
      const page = await newPage();
      await page.goto(`${base}/login`);
      await page.getByRole('button', { name: 'Sign in with Google' }).click();
      await page.waitForURL((url) => url.pathname === '/login' && url.searchParams.has('error'));
      // Without Google credentials configured the server says so; with them it would have left for Google.
      await page.getByRole('alert').filter({ hasText: /Google sign-in/ }).waitFor();
      await checkA11y(page, 'login with a Google sign-in error');
      await page.goto(`${base}/auth/callback?code=not-a-real-code`);
      await page.waitForURL((url) => url.pathname === '/login' && url.searchParams.has('error'));
      await page.getByRole('alert').filter({ hasText: 'invalid or has expired' }).waitFor();
      assert(await page.evaluate(() => localStorage.getItem('sanitas.tokens')) === null, 'a failed exchange stored tokens');
      await page.context().close();
    });

    await test('forgot password: emailed link resets the password', async () => {
      assert(registered, 'needs the registered user');
      const page = await newPage();
      await page.goto(`${base}/login`);
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await page.waitForURL(`${base}/forgot-password`);
      // The URL changes before the lazily loaded page replaces the sign-in form, which has an
      // "Email address" field too: wait for the new page before filling.
      await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
      await page.getByLabel('Email address').fill(USER.email);
      await page.getByRole('button', { name: 'Send reset link' }).click();
      await page.getByText('password reset link has been sent', { exact: false }).waitFor();
      await shots(page, 'forgot-password');
      let link = null;
      for (let i = 0; i < 20 && !link; i++) {
        link = readOutboxLink(dataDir, USER.email, '/reset-password');
        if (!link) await page.waitForTimeout(250);
      }
      assert(link, 'no reset link in the outbox');
      await page.goto(link);
      await page.getByRole('button', { name: 'Reset password' }).waitFor();
      await checkA11y(page, 'reset password');
      USER.password = 'Brand-new-pass-2';
      await page.getByLabel('New password', { exact: true }).fill(USER.password);
      await page.getByLabel('Confirm new password').fill(USER.password);
      await page.getByRole('button', { name: 'Reset password' }).click();
      await page.getByText('Your password has been reset', { exact: false }).waitFor();
      await login(page, base, USER);
      await page.waitForURL(`${base}/dashboard`);
      await page.context().close();
    });

    await test('mobile menu mirrors the navigation and shows the email', async () => {
      const page = await newPage();
      await page.setViewportSize(MOBILE);
      await login(page, base, ADMIN);
      await page.getByRole('button', { name: 'Open menu' }).click();
      const menu = page.locator('#mobile-menu');
      await menu.getByText(ADMIN.email).waitFor();
      for (const name of ['Home', 'Pricing', 'About', 'Upload', 'History', 'Dashboard', 'Admin']) {
        await menu.getByRole('link', { name, exact: true }).first().waitFor();
      }
      await shot(page, 'mobile-menu');
      await menu.getByRole('button', { name: 'Sign out' }).click();
      await toast(page, 'Logged out successfully').waitFor();
      await page.waitForURL(`${base}/`);
      await page.context().close();
    });
  } catch (error) {
    results.push({ name: 'setup', ok: false, error });
    log(`FAIL setup: ${error?.stack || error}`);
  } finally {
    if (browser) await browser.close().catch(() => {});
    server.kill('SIGTERM');
    await new Promise((r) => { if (server.exitCode !== null) r(); else { server.once('exit', r); setTimeout(r, 8000); } });
    const failed = results.filter((r) => !r.ok);
    if (failed.length) {
      const tail = fs.readFileSync(path.join(dataDir, 'server.log'), 'utf8').split('\n').slice(-30).join('\n');
      console.log(`[e2e] server log (last lines):\n${tail}`);
    }
    if (!process.env.E2E_KEEP) fs.rmSync(dataDir, { recursive: true, force: true });
    else log(`kept ${dataDir}`);
    const passed = results.length - failed.length;
    const issues = a11yLog.reduce((n, c) => n + c.violations.length, 0);
    const rules = new Set(a11yLog.flatMap((c) => c.violations.map((v) => v.rule)));
    console.log(`[e2e] accessibility: ${a11yLog.length} page states checked, ${issues} violation(s) in ${rules.size} rule(s)${rules.size ? `: ${[...rules].join(', ')}` : ''}`);
    console.log(`\n${passed} passed, ${failed.length} failed`);
    process.exit(failed.length ? 1 : 0);
  }
}

main();
