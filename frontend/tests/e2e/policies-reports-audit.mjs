// End-to-end: custom policies, compliance reports and the audit log. A new user, promoted to
// ENTERPRISE by the admin through the API, creates a policy that removes hyperlinks in the
// Policies page, uploads an HTML page with a link under it through the upload page's picker,
// and sees the policy and both SHA-256 digests on the status page (checked against the bytes
// sent). The user then asks for a CSV report and downloads it once generated; it lists the file
// with its hashes and policy. Finally the admin finds the policy's creation in the Audit tab and
// exports the log as CSV.
import { createHash } from 'node:crypto';
import fs from 'node:fs';

import { enterpriseUser } from './lib.mjs';

const PAGE_WITH_LINK = Buffer.from('<!doctype html><html><head><title>Links</title></head>'
  + '<body><p>Read the <a href="https://example.org/terms">terms</a> first.</p></body></html>');

/** A verified ENTERPRISE account, made through the API (register, emailed link, admin's role change). */
export async function policiesReportsAudit({ newPage, base, admin, readOutboxLink, dataDir, login, toast, shots, shot, assert }) {
  const user = await enterpriseUser({ base, admin, readOutboxLink, dataDir, assert },
    { prefix: 'policies', password: 'Policies-e2e-pass-1', firstName: 'Erin' });
  const policyName = `No hyperlinks ${Date.now() % 100000}`;
  const page = await newPage();
  await login(page, base, user);

  // --- the policy ------------------------------------------------------------------------
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Policies' }).click();
  await page.getByRole('heading', { name: 'Policies', level: 1 }).waitFor();
  const rows = page.getByTestId('policy-row');
  await rows.filter({ hasText: 'Built-in' }).first().waitFor();
  await page.getByRole('button', { name: 'New policy' }).click();
  const macros = page.getByRole('group', { name: 'Macros and scripts' });
  assert(await macros.getByRole('radio', { name: 'Keep', exact: true }).count() === 0, 'macros offer Keep');
  await page.getByLabel('Name', { exact: true }).fill(policyName);
  await page.getByLabel('Description (optional)').fill('Links go; everything else as basic.');
  await page.getByRole('group', { name: 'Hyperlinks' }).getByRole('radio', { name: 'Remove' }).check();
  await page.getByTestId('policy-preview').waitFor();
  await shot(page, 'policy-editor-desktop');
  await page.getByRole('button', { name: 'Save policy' }).click();
  await toast(page, 'Policy created').waitFor();
  const row = rows.filter({ hasText: policyName });
  await row.waitFor();
  // The list's summary names the decisions other than removal: hyperlinks is not among them.
  assert(!(await row.innerText()).includes('hyperlinks:'), `the new policy does not remove hyperlinks: ${await row.innerText()}`);
  await shots(page, 'policies');

  // --- upload with it ----------------------------------------------------------------------
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Upload' }).click();
  const picker = page.getByLabel('Sanitization policy');
  await picker.waitFor();
  const options = await picker.locator('option').allInnerTexts();
  assert(options.some((o) => o.startsWith(policyName)), `the picker lacks the new policy: ${options.join(', ')}`);
  await picker.selectOption({ label: options.find((o) => o.startsWith(policyName)) });
  await shot(page, 'upload-policy-picker-desktop');
  await page.getByTestId('file-input').setInputFiles({ name: 'links.html', mimeType: 'text/html', buffer: PAGE_WITH_LINK });
  await toast(page, 'Successfully uploaded 1 file(s).').waitFor();
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await page.getByRole('link', { name: 'View Status' }).first().click();
  await page.getByRole('heading', { name: 'File Status' }).waitFor();
  // The status page opens at its top, not at the upload page's scroll position.
  assert(await page.evaluate(() => window.scrollY) === 0, `the status page opened scrolled to ${await page.evaluate(() => window.scrollY)}`);
  await page.locator('[data-testid="status-badge"][data-status="COMPLETED"]').first().waitFor({ timeout: 90_000 });
  assert((await page.getByTestId('file-policy').innerText()) === policyName, 'the status page does not show the policy');
  await page.getByText('(version 1)').waitFor();
  const original = (await page.getByTestId('hash-original').innerText()).trim();
  const sanitized = (await page.getByTestId('hash-sanitized').innerText()).trim();
  assert(original === createHash('sha256').update(PAGE_WITH_LINK).digest('hex'), `original hash ${original} is not the upload's`);
  assert(/^[0-9a-f]{64}$/.test(sanitized) && sanitized !== original, `sanitized hash ${sanitized}`);
  await shots(page, 'status-policy-hashes');

  // --- the editor's preview now reads that file's findings -----------------------------------
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Policies' }).click();
  await page.getByRole('button', { name: `Edit ${policyName}` }).click();
  const preview = page.getByTestId('policy-preview');
  await preview.getByTestId('preview-rule-hyperlinks').waitFor();
  // Removed 1, kept 0, refused 0 under this policy; refusing hyperlinks would refuse the file.
  assert((await preview.getByTestId('preview-rule-hyperlinks').innerText()).replace(/\s+/g, ' ').trim() === 'Hyperlinks 1 0 0',
    `preview: ${await preview.innerText()}`);
  await page.getByRole('group', { name: 'Hyperlinks' }).getByRole('radio', { name: 'Refuse the file' }).check();
  await preview.getByText('1 of 1 files would have been refused.').waitFor();
  await page.getByRole('group', { name: 'Hyperlinks' }).getByRole('radio', { name: 'Remove' }).check();
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'policy-editor-preview-desktop');
  await page.getByRole('button', { name: 'Cancel' }).click();

  // --- a CSV report --------------------------------------------------------------------------
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Reports' }).click();
  await page.getByRole('heading', { name: 'Compliance reports' }).waitFor();
  await page.getByRole('radio', { name: 'CSV' }).check();
  await page.getByRole('button', { name: 'Request report' }).click();
  await toast(page, 'Report requested').waitFor();
  const report = page.getByTestId('report-row').first();
  await page.locator('[data-testid="report-row"][data-status="COMPLETED"]').first().waitFor({ timeout: 60_000 });
  await shots(page, 'reports');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    report.getByRole('button', { name: /Download CSV report/ }).click(),
  ]);
  const csv = fs.readFileSync(await download.path(), 'utf8');
  for (const expected of ['links.html', original, sanitized, policyName]) {
    assert(csv.includes(expected), `the CSV report lacks ${expected}`);
  }
  await page.context().close();

  // --- the admin's audit tab -----------------------------------------------------------------
  const adminPage = await newPage();
  await login(adminPage, base, admin);
  await adminPage.goto(`${base}/admin`);
  await adminPage.getByRole('tab', { name: 'Audit' }).click();
  await adminPage.getByLabel('Action').selectOption('policy.created');
  const created = adminPage.getByTestId('audit-row').filter({ hasText: user.email }).filter({ hasText: policyName });
  await created.first().waitFor();
  await shots(adminPage, 'admin-audit');
  const [exported] = await Promise.all([
    adminPage.waitForEvent('download'),
    adminPage.getByRole('button', { name: 'Export CSV' }).click(),
  ]);
  const auditCsv = fs.readFileSync(await exported.path(), 'utf8');
  assert(auditCsv.includes('policy.created') && auditCsv.includes(user.email), 'the audit export lacks the policy creation');
  await adminPage.context().close();
}
