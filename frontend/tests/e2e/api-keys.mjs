// End-to-end: API keys. A Pro (USER) account creates a key on its profile page, copies the
// secret with the page's button (read back from the browser's clipboard), and sends a text
// file from Node to POST /api/v1/sanitize with it in X-API-Key: 200 and the clean text. It
// revokes the key on the page, after which the same call answers 401. A Free (GUEST) account
// sees the Pro plan notices instead of the key and webhook forms. The admin opens the user's keys from the Users
// tab and revokes one (which then answers 401 too), finds the user's key actions in the Audit
// tab through its user picker, and sees the sanitized file's SHA-256 digests in the File
// Management detail, checked against the bytes that went in and came out.
import { createHash } from 'node:crypto';

import { checkA11y } from './a11y.mjs';
import { api } from './lib.mjs';

const TEXT = 'Quarterly numbers\nRevenue: 12\nCosts: 7\n';
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

/** A verified account made through the API (register, emailed link); the role it registers
 * with is USER, the Pro plan. */
async function verifiedUser({ base, readOutboxLink, dataDir, assert }, prefix) {
  const email = `${prefix}${Date.now()}@e2e-sanitas.org`;
  const password = 'Keys-e2e-pass-1';
  const reg = await api(base, 'POST', '/api/auth/register', { json: { email, password, firstName: 'Kay' } });
  assert(reg.status === 201 || reg.status === 200, `register answered ${reg.status}: ${JSON.stringify(reg.body)}`);
  let link = null;
  for (let i = 0; i < 20 && !link; i++) {
    link = readOutboxLink(dataDir, email, '/verify-email');
    if (!link) await new Promise((r) => setTimeout(r, 250));
  }
  assert(link, 'no verification link in the outbox');
  const verified = await api(base, 'POST', '/api/auth/verify-email', { json: { token: new URL(link).searchParams.get('token') } });
  assert(verified.status === 200, `verify answered ${verified.status}`);
  const signIn = await api(base, 'POST', '/api/auth/login', { json: { email, password } });
  assert(signIn.status === 200, `sign-in answered ${signIn.status}`);
  return { email, password, id: reg.body.data.user.id, role: signIn.body.data.user.role, token: signIn.body.data.tokens.accessToken };
}

/** POST /api/v1/sanitize with a small text file and `secret` in X-API-Key. */
async function sanitizeWithKey(base, secret) {
  const form = new FormData();
  form.append('file', new Blob([TEXT], { type: 'text/plain' }), 'numbers.txt');
  const res = await fetch(`${base}/api/v1/sanitize?wait=60`, { method: 'POST', headers: { 'X-API-Key': secret }, body: form });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, bytes, fileId: res.headers.get('x-sanitas-file-id'), text: bytes.toString('utf8') };
}

export async function apiKeys({ newPage, base, admin, readOutboxLink, dataDir, login, toast, shots, shot, assert }) {
  const ctx = { base, readOutboxLink, dataDir, assert };
  const user = await verifiedUser(ctx, 'keys');
  assert(user.role === 'USER', `a new account is ${user.role}, not USER (Pro)`);

  // --- a Pro user creates a key and copies its secret ----------------------------------------
  const page = await newPage();
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  await login(page, base, user);
  await page.goto(`${base}/profile`);
  const section = page.getByTestId('api-keys-section');
  await section.getByTestId('api-keys-empty').waitFor();
  assert((await section.getByTestId('api-keys-how-to').innerText()).includes(`${base}/api/v1/sanitize`), 'the curl example does not use this origin');
  await section.getByLabel('Key name').fill('Nightly import');
  await section.getByRole('button', { name: 'Create key' }).click();
  await toast(page, 'API key created').waitFor();
  const panel = section.getByTestId('new-api-key');
  await panel.getByText('you won’t see it again', { exact: false }).waitFor();
  await panel.getByRole('button', { name: 'Copy key' }).click();
  await toast(page, 'API key copied').waitFor();
  const secret = await page.evaluate(() => navigator.clipboard.readText());
  assert(/^sk_live_[A-Za-z0-9]{40}$/.test(secret), `the clipboard holds ${JSON.stringify(secret.slice(0, 12))}…, not a key`);
  assert(secret === (await panel.getByTestId('api-key-secret').innerText()).trim(), 'the copied secret is not the one shown');
  const row = section.getByTestId('api-key-row').filter({ hasText: 'Nightly import' });
  await row.waitFor();
  const prefix = (await row.getByTestId('api-key-prefix').innerText()).replace('…', '').trim();
  assert(prefix.length >= 10 && secret.startsWith(prefix), `the listed prefix ${prefix} is not the secret's start`);
  assert((await row.innerText()).includes('files:write') && (await row.innerText()).includes('files:read'), 'the key lacks its scopes');
  assert(await row.getByTestId('api-key-last-used').innerText() === 'Never', 'a new key shows a last use');
  // The panel took the focus (and scrolled); the full-page picture starts at the top.
  await page.evaluate(() => window.scrollTo(0, 0));
  await shots(page, 'profile-api-keys');

  // --- the key works from a program -----------------------------------------------------------
  const first = await sanitizeWithKey(base, secret);
  assert(first.status === 200, `/api/v1/sanitize with the key answered ${first.status}: ${first.text.slice(0, 300)}`);
  assert(first.text.includes('Revenue: 12'), `the sanitized text lost its content: ${first.text.slice(0, 200)}`);
  assert(first.fileId, 'no X-Sanitas-File-Id on the answer');
  await page.reload();
  await row.waitFor();
  assert(await row.getByTestId('api-key-last-used').innerText() !== 'Never', 'the key\'s last use is not shown after a call');
  assert(await section.getByTestId('new-api-key').count() === 0, 'the secret is shown again after a reload');

  // --- revoking it on the page stops it -------------------------------------------------------
  await row.getByRole('button', { name: 'Revoke Nightly import' }).click();
  await row.getByText('Programs that use it are refused', { exact: false }).waitFor();
  await row.getByRole('button', { name: 'Revoke key' }).click();
  await toast(page, 'API key revoked').waitFor();
  await section.getByTestId('api-keys-empty').waitFor();
  const refused = await sanitizeWithKey(base, secret);
  assert(refused.status === 401, `a revoked key answered ${refused.status}`);
  await page.context().close();

  // --- a Free account sees the plan notice --------------------------------------------------
  const guest = await verifiedUser(ctx, 'keysguest');
  const adminSignIn = await api(base, 'POST', '/api/auth/login', { json: admin });
  const adminToken = adminSignIn.body.data.tokens.accessToken;
  const demoted = await api(base, 'PUT', `/api/users/${guest.id}`, { token: adminToken, json: { role: 'GUEST' } });
  assert(demoted.status === 200, `role change answered ${demoted.status}`);
  const guestPage = await newPage();
  await login(guestPage, base, guest);
  await guestPage.goto(`${base}/profile`);
  const notice = guestPage.getByTestId('api-keys-plan-notice');
  await notice.getByText('API access is part of the Pro plan').waitFor();
  assert(await guestPage.getByLabel('Key name').count() === 0, 'a GUEST sees the key form');
  // Webhooks, on the same page, are a Pro feature too.
  await guestPage.getByTestId('webhooks-plan-notice').getByText('Webhooks are part of the Pro plan').waitFor();
  await checkA11y(guestPage, 'profile of a GUEST (plan notices)');
  assert(await guestPage.getByLabel('Endpoint URL').count() === 0, 'a GUEST sees the webhook form');
  await notice.getByRole('link', { name: 'See the plans' }).click();
  await guestPage.waitForURL(`${base}/pricing`);
  await guestPage.context().close();
  const guestTry = await api(base, 'POST', '/api/keys', { token: guest.token, json: { name: 'x' } });
  assert(guestTry.status === 403 && guestTry.body?.error === 'plan_required', `a GUEST creating a key: ${guestTry.status} ${JSON.stringify(guestTry.body)}`);

  // --- the admin revokes the user's other key ----------------------------------------------
  const made = await api(base, 'POST', '/api/keys', { token: user.token, json: { name: 'Build server', scopes: ['files:write'] } });
  assert(made.status === 201, `creating a second key answered ${made.status}`);
  const buildSecret = made.body.data.secret;
  const adminPage = await newPage();
  await login(adminPage, base, admin);
  await adminPage.goto(`${base}/admin`);
  await adminPage.getByRole('tab', { name: 'User Management' }).click();
  await adminPage.getByLabel('Search users').fill(user.email);
  await adminPage.waitForFunction(() => document.querySelectorAll('[data-testid^="user-row-"]').length === 1);
  await adminPage.getByTestId(`user-row-${user.email}`).getByRole('button', { name: `API keys of ${user.email}` }).click();
  const keysPanel = adminPage.getByRole('dialog', { name: `API keys of ${user.email}` });
  const adminRow = keysPanel.getByTestId('api-key-row').filter({ hasText: 'Build server' });
  await adminRow.waitFor();
  assert(await keysPanel.getByTestId('api-key-row').count() === 1, 'the panel lists a revoked key');
  await adminRow.getByRole('button', { name: 'Revoke Build server' }).click();
  await adminRow.getByText(`Revoke ${user.email}’s key`, { exact: false }).waitFor();
  await shot(adminPage, 'profile-api-keys-admin-panel-desktop');
  await adminRow.getByRole('button', { name: 'Revoke key' }).click();
  await toast(adminPage, 'API key revoked: Build server').waitFor();
  await keysPanel.getByTestId('api-keys-empty').waitFor();
  const afterAdmin = await sanitizeWithKey(base, buildSecret);
  assert(afterAdmin.status === 401, `a key the admin revoked answered ${afterAdmin.status}`);
  await keysPanel.getByRole('button', { name: 'Close' }).click();
  // Focus returns to the button that opened the panel.
  assert(await adminPage.getByTestId(`user-row-${user.email}`).getByRole('button', { name: `API keys of ${user.email}` })
    .evaluate((el) => document.activeElement === el), 'closing the keys panel did not return focus to its button');

  // --- the audit tab: pick the user by email -------------------------------------------------
  await adminPage.getByRole('tab', { name: 'Audit' }).click();
  await adminPage.getByRole('combobox', { name: 'User' }).fill(user.email.slice(0, 12));
  await adminPage.getByRole('option', { name: new RegExp(user.email.replace(/[.+]/g, '\\$&')) }).click();
  await adminPage.getByTestId('picked-user').filter({ hasText: user.email }).waitFor();
  await checkA11y(adminPage, 'admin audit tab with a picked user');
  await adminPage.getByLabel('Action').selectOption('api_key.created');
  await adminPage.waitForFunction(() => {
    const rows = [...document.querySelectorAll('[data-testid="audit-row"]')];
    return rows.length > 0 && rows.every((r) => r.getAttribute('data-action') === 'api_key.created');
  });
  await adminPage.getByTestId('audit-row').filter({ hasText: 'Nightly import' }).waitFor();
  await adminPage.getByTestId('audit-row').filter({ hasText: 'Build server' }).waitFor();
  const audited = await adminPage.getByTestId('audit-row').allInnerTexts();
  assert(audited.length === 2 && audited.every((t) => t.includes(user.email)), `audit rows for the picked user: ${audited.join(' | ')}`);

  // --- the admin file detail: hashes and how it was cleaned -----------------------------------
  await adminPage.getByRole('tab', { name: 'File Management' }).click();
  const fileRow = adminPage.getByTestId(`admin-file-row-${first.fileId}`);
  await fileRow.getByRole('button', { name: 'Details of numbers.txt' }).click();
  const detail = adminPage.getByRole('dialog', { name: 'numbers.txt' });
  const shownOriginal = (await detail.getByTestId('hash-original').innerText()).trim();
  const shownSanitized = (await detail.getByTestId('hash-sanitized').innerText()).trim();
  assert(shownOriginal === sha256(Buffer.from(TEXT)), `admin detail original hash ${shownOriginal}`);
  assert(shownSanitized === sha256(first.bytes), `admin detail sanitized hash ${shownSanitized} is not the bytes received`);
  await checkA11y(adminPage, 'admin file details dialog with hashes');
  await adminPage.context().close();
}
