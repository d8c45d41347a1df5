// End-to-end: the analytics charts. A new user, promoted to ENTERPRISE by the admin through the
// API, uploads files the real executor cleans or refuses (a macro .docm, a GPS JPEG, an HTML
// page with a script, a PNG, a broken PDF). The user's dashboard and the admin's Analytics tab
// then show the five charts for the chosen timeframe; each chart's text alternative (its visually
// hidden table) says what the API answered, and the pictures are drawn.
import fs from 'node:fs';
import path from 'node:path';

import { api, enterpriseUser } from './lib.mjs';

const BROKEN_PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from(Array.from({ length: 256 * 20 }, (_, i) => i % 256))]);
const SCRIPTED_HTML = Buffer.from('<!doctype html><html><head><title>Offer</title><script>fetch("https://evil.example/x")</script></head>'
  + '<body onload="steal()"><p>Prices for 2027</p><a href="javascript:alert(1)">open</a></body></html>');
const TITLES = ['Threats removed by kind', 'Rejections by reason', 'Top input types', 'Processing time by family'];

/** A verified ENTERPRISE user with five processed uploads, made through the API. */
async function enterpriseUserWithFiles({ base, admin, fixtures, readOutboxLink, dataDir, assert }) {
  const { email, password, token, adminToken } = await enterpriseUser(
    { base, admin, readOutboxLink, dataDir, assert },
    { prefix: 'charts', password: 'Charts-e2e-pass-1', firstName: 'Grace' });

  const uploads = [
    [fs.readFileSync(path.join(fixtures, 'invoice-macro.docm')), 'invoice-macro.docm'],
    [fs.readFileSync(path.join(fixtures, 'holiday-gps.jpg')), 'holiday-gps.jpg'],
    [SCRIPTED_HTML, 'offer.html'],
    [fs.readFileSync(path.join(fixtures, 'holiday-gps.jpg')), 'second-photo.jpg'],
    [BROKEN_PDF, 'broken-charts.pdf'],
  ];
  const form = new FormData();
  for (const [bytes, name] of uploads) form.append('files', new Blob([bytes]), name);
  const up = await api(base, 'POST', '/api/upload/multiple', { token, form });
  assert(up.status === 201, `upload answered ${up.status}: ${JSON.stringify(up.body)}`);
  const ids = up.body.data.map((f) => f.fileId);
  assert(ids.length === uploads.length, `uploaded ${ids.length} files`);
  const until = Date.now() + 180_000;
  const ended = {};
  for (const id of ids) {
    for (;;) {
      const st = await api(base, 'GET', `/api/process/status/${id}`, { token });
      const file = st.body?.data?.file;
      if (file?.status === 'COMPLETED' || file?.status === 'FAILED') {
        ended[file.originalName] = file.status;
        break;
      }
      assert(Date.now() < until, `${file?.originalName} is still ${file?.status}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  }
  assert(ended['broken-charts.pdf'] === 'FAILED' && ended['invoice-macro.docm'] === 'COMPLETED', `results ${JSON.stringify(ended)}`);
  return { email, password, token, adminToken };
}

/** The rows of a chart's hidden table, cells joined by '|'. */
const tableRows = (scope, caption) => scope.getByRole('table', { name: caption }).locator('tbody tr')
  .evaluateAll((rows) => rows.map((r) => Array.from(r.querySelectorAll('th, td'), (c) => c.textContent).join('|')));

/** Every chart has its heading and its hidden table; returns the table of top input types. */
async function checkCharts(scope, assert, perWhat) {
  await scope.getByRole('heading', { name: `Files per ${perWhat} by result`, level: 3 }).waitFor();
  for (const title of TITLES) await scope.getByRole('heading', { name: title, level: 3 }).waitFor();
  for (const caption of [`Files per ${perWhat} by result (UTC)`, ...TITLES]) {
    const table = scope.getByRole('table', { name: caption });
    await table.waitFor({ state: 'attached' });
    assert(await table.evaluate((t) => { const clip = t.closest('.sr-only'); return !!clip && clip.getBoundingClientRect().width <= 1 && getComputedStyle(clip).overflow === 'hidden'; }), `${caption}: the text alternative is visible`);
  }
  // The pictures are drawn: bars in every chart.
  const drawn = await scope.locator('section[aria-labelledby]').evaluateAll((sections) => sections
    .filter((s) => s.querySelector('.recharts-responsive-container'))
    .map((s) => s.querySelectorAll('.recharts-bar-rectangle path, .recharts-rectangle').length));
  assert(drawn.length === 5 && drawn.every((n) => n > 0), `bars per chart: ${JSON.stringify(drawn)}`);
}

export async function analyticsCharts({ newPage, base, admin, fixtures, readOutboxLink, dataDir, login, shots, assert }) {
  const user = await enterpriseUserWithFiles({ base, admin, fixtures, readOutboxLink, dataDir, assert });

  // The ENTERPRISE dashboard: the user's own files, last 24 hours.
  let page = await newPage();
  await login(page, base, user);
  await page.waitForURL(`${base}/dashboard`);
  const section = page.getByTestId('dashboard-charts');
  await section.getByRole('heading', { name: 'Analytics', level: 2 }).waitFor();
  await section.getByLabel('Timeframe').selectOption('day');
  await checkCharts(section, assert, 'hour');
  const own = await api(base, 'GET', '/api/usage/charts?timeframe=day&scope=own', { token: user.token });
  const types = await tableRows(section, 'Top input types');
  assert(JSON.stringify(types) === JSON.stringify(own.body.data.topTypes.map((t) => `${t.label}|${t.count}`)), `types ${JSON.stringify(types)} vs ${JSON.stringify(own.body.data.topTypes)}`);
  assert(types.includes('JPEG image|2'), `types: ${JSON.stringify(types)}`);
  const threats = await tableRows(section, 'Threats removed by kind');
  assert(threats.some((row) => row.startsWith('Macro|')), `threats: ${JSON.stringify(threats)}`);
  assert(threats.length === own.body.data.threatsByKind.length, `threats: ${JSON.stringify(threats)}`);
  const rejections = await tableRows(section, 'Rejections by reason');
  assert(rejections.length === 1 && rejections[0].endsWith('|1'), `rejections: ${JSON.stringify(rejections)}`);
  const files = await tableRows(section, 'Files per hour by result (UTC)');
  const counted = files.reduce((sum, row) => sum + row.split('|').slice(1).reduce((s, n) => s + Number(n), 0), 0);
  assert(counted === 5, `files per hour add up to ${counted}: ${JSON.stringify(files)}`);
  await shots(page, 'dashboard-charts');
  await page.context().close();

  // The admin's Analytics tab: everyone's files, the last 7 days, below the figures it had.
  page = await newPage();
  await login(page, base, admin);
  await page.goto(`${base}/admin`);
  await page.getByRole('tab', { name: 'Analytics' }).click();
  await page.getByLabel('Timeframe').selectOption('week');
  await page.getByText('Files by status').waitFor();
  await page.getByText('Users by role').waitFor();
  const panel = page.getByRole('region', { name: 'Charts (all users)' });
  await checkCharts(panel, assert, 'day');
  const all = await api(base, 'GET', '/api/usage/charts?timeframe=week&scope=all', { token: user.adminToken });
  const allTypes = await tableRows(panel, 'Top input types');
  assert(JSON.stringify(allTypes) === JSON.stringify(all.body.data.topTypes.map((t) => `${t.label}|${t.count}`)), `admin types ${JSON.stringify(allTypes)}`);
  const total = all.body.data.topTypes.reduce((s, t) => s + t.count, 0) + all.body.data.otherTypes;
  assert(total >= 5, `the admin's charts count ${total} files`);
  await shots(page, 'admin-analytics-charts');
  await page.context().close();
}
