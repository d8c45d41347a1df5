// End-to-end: webhooks. A receiver listens on 127.0.0.1 (the e2e server allows loopback
// webhooks: SANITAS_WEBHOOK_ALLOW_PRIVATE=true) and checks every request's Standard Webhooks
// signature itself. A new Pro (USER) account, registered on the page, sees its URL field refuse "ftp://x" with the server's
// reason, adds an endpoint for the receiver on its profile page, copies the signing secret with
// the page's button, sends a test event and sees it delivered in the delivery log. A file it
// uploads reaches the receiver as a signed file.completed (and a broken one as file.failed),
// which the log then shows too. Switched off, the endpoint gets no event for the next upload;
// then it is deleted after confirming. The scenario signs in no one: the suite already uses all
// the sign-ins per address the server allows in 15 minutes, so the Free plan's notice is left
// to the unit tests (a GUEST needs an admin's sign-in to be made).
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';

import { checkA11y } from './a11y.mjs';
import { api } from './lib.mjs';

const TEXT = 'Webhook e2e\nTotal: 3\n';
const BROKEN_PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from(Array.from({ length: 256 * 20 }, (_, i) => i % 256))]);

/** Whether `signatureHeader` (space-separated `v1,<base64>` entries) signs `${id}.${timestamp}.${body}`
 * with `secret` (`whsec_` + base64 key), as the Standard Webhooks specification says. */
export function verifySignature(secret, id, timestamp, body, signatureHeader) {
  if (!secret.startsWith('whsec_') || !id || !timestamp || !signatureHeader) return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return signatureHeader.split(' ').some((entry) => {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** A loopback HTTP server that keeps every request it is sent and answers 204. */
async function startReceiver() {
  const received = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json = null;
      try { json = JSON.parse(body); } catch { /* kept as text */ }
      received.push({ method: req.method, path: req.url, headers: req.headers, body, json });
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/hooks/sanitas`, received, close: () => new Promise((r) => { server.close(r); server.closeAllConnections(); }) };
}

async function waitFor(what, check, assert, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    assert(Date.now() < until, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A new account registered on the page, which signs it in (no separate sign-in: the suite
 * shares the server's limit of sign-ins per address), then verified through the emailed link.
 * It registers as USER, the Pro plan; its token is the one registering answered. */
async function registerOnPage(page, { base, readOutboxLink, dataDir, assert }) {
  const email = `hooks${Date.now()}@e2e-sanitas.org`;
  const password = 'Hooks-e2e-pass-1';
  await page.goto(`${base}/register`);
  await page.getByLabel('First name').fill('Hook');
  await page.locator('#email').fill(email);
  await page.locator('#password').fill(password);
  await page.locator('#confirmPassword').fill(password);
  const answer = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/auth/register');
  await page.getByRole('button', { name: 'Create account' }).click();
  const reg = await answer;
  assert(reg.status() === 201 || reg.status() === 200, `register answered ${reg.status()}`);
  const { data } = await reg.json();
  await page.waitForURL(`${base}/login`);
  const link = await waitFor('the verification link', () => readOutboxLink(dataDir, email, '/verify-email'), assert, 5000);
  const verified = await api(base, 'POST', '/api/auth/verify-email', { json: { token: new URL(link).searchParams.get('token') } });
  assert(verified.status === 200, `verify answered ${verified.status}`);
  // registration leaves nobody signed in: sign in on the page it sent us to
  await page.goto(`${base}/login`);
  await page.getByLabel('Email address').fill(email);
  await page.getByLabel('Password').fill(password);
  const login = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/auth/login');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  const signedIn = await (await login).json();
  await page.waitForURL((url) => url.pathname !== '/login');
  return { email, role: data.user.role, token: signedIn.data.tokens.accessToken };
}

/** Upload one file through the API and wait until it is COMPLETED or FAILED; returns its id. */
async function uploadAndWait(base, token, bytes, name, type, assert) {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type }), name);
  const up = await api(base, 'POST', '/api/upload/single', { token, form });
  assert(up.status === 201, `upload answered ${up.status}: ${JSON.stringify(up.body)}`);
  const fileId = up.body.data.fileId;
  await waitFor(`${name} to finish`, async () => {
    const st = await api(base, 'GET', `/api/process/status/${fileId}`, { token });
    return ['COMPLETED', 'FAILED'].includes(st.body?.data?.file?.status);
  }, assert, 120_000);
  return fileId;
}

export async function webhooks({ newPage, base, readOutboxLink, dataDir, toast, shots, assert }) {
  const receiver = await startReceiver();
  try {
    /** The receiver's requests of one event type, each with its signature checked against `secret`. */
    const got = (type, secret) => receiver.received.filter((r) => r.json?.type === type).map((r) => ({
      ...r,
      valid: verifySignature(secret, r.headers['webhook-id'], r.headers['webhook-timestamp'], r.body, r.headers['webhook-signature']),
    }));

    // --- the URL field shows the server's refusal; an endpoint for the receiver --------------
    const page = await newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    const user = await registerOnPage(page, { base, readOutboxLink, dataDir, assert });
    assert(user.role === 'USER', `a new account is ${user.role}, not USER (Pro)`);
    await page.goto(`${base}/profile`);
    const section = page.getByTestId('webhooks-section');
    await section.getByTestId('webhooks-empty').waitFor();
    for (const event of ['file.completed', 'file.failed', 'file.expired']) {
      assert(await section.getByRole('checkbox', { name: event }).isChecked(), `${event} is not chosen to begin with`);
    }
    await section.getByLabel('Endpoint URL').fill('ftp://x');
    await section.getByRole('button', { name: 'Add webhook' }).click();
    const urlError = section.getByTestId('webhook-url-error');
    await urlError.getByText('Must start with https:// (or http://)').waitFor();
    assert(await section.getByLabel('Endpoint URL').getAttribute('aria-invalid') === 'true', 'the refused URL field is not marked invalid');

    await section.getByLabel('Endpoint URL').fill(receiver.url);
    assert(await urlError.count() === 0, 'the URL error stays after the URL changed');
    await section.getByRole('button', { name: 'Add webhook' }).click();
    await toast(page, 'Webhook created').waitFor();
    const panel = section.getByTestId('new-webhook');
    await panel.getByText('you won’t see it again', { exact: false }).waitFor();
    await panel.getByRole('button', { name: 'Copy secret' }).click();
    await toast(page, 'Signing secret copied').waitFor();
    const secret = await page.evaluate(() => navigator.clipboard.readText());
    assert(/^whsec_[A-Za-z0-9+/]{43}=$/.test(secret), `the clipboard holds ${JSON.stringify(secret.slice(0, 10))}…, not a signing secret`);
    assert(secret === (await panel.getByTestId('webhook-secret').innerText()).trim(), 'the copied secret is not the one shown');
    const row = section.getByTestId('webhook-row').filter({ hasText: receiver.url });
    await row.waitFor();
    assert(await row.getAttribute('data-enabled') === 'true', 'a new endpoint is not enabled');
    assert((await row.innerText()).includes('file.expired'), 'the endpoint lacks its events');
    await panel.getByRole('button', { name: 'I have saved it' }).click();

    // --- the test event arrives signed and shows as delivered -------------------------------
    await row.getByRole('button', { name: `Send test event to ${receiver.url}` }).click();
    await toast(page, 'Test event queued').waitFor();
    const log = row.getByTestId('delivery-log');
    const testDelivery = log.locator('[data-testid="delivery"][data-event-type="webhook.test"][data-state="succeeded"]');
    await testDelivery.waitFor({ timeout: 30_000 });
    assert((await testDelivery.getByTestId('delivery-attempt').innerText()).includes('HTTP 204'), 'the log does not show the 204 answer');
    const [test] = got('webhook.test', secret);
    assert(test, 'the receiver got no test event');
    assert(test.valid, `the test event's signature does not verify: ${test.headers['webhook-signature']}`);
    assert(!verifySignature(secret, test.headers['webhook-id'], test.headers['webhook-timestamp'], `${test.body} `, test.headers['webhook-signature']),
      'the signature check accepts a changed body');
    assert(Math.abs(Date.now() / 1000 - Number(test.headers['webhook-timestamp'])) < 300, 'the webhook-timestamp is off');
    assert(test.method === 'POST' && test.path === '/hooks/sanitas', `the test event came as ${test.method} ${test.path}`);
    assert((await testDelivery.innerText()).includes(test.headers['webhook-id']), 'the log does not show the event id the receiver got');
    // The row itself says how the newest delivery went (the list follows it while pending).
    const lastDelivery = row.getByTestId('webhook-last-delivery');
    await lastDelivery.getByTestId('webhook-last-delivery-state').getByText('Delivered').waitFor({ timeout: 10_000 });
    assert((await lastDelivery.innerText()).includes('webhook.test'), 'the row does not name the newest delivery');
    await page.evaluate(() => window.scrollTo(0, 0));
    await shots(page, 'profile-webhooks');

    // --- a finished file and a refused one reach the receiver, and the log --------------------
    const fileId = await uploadAndWait(base, user.token, Buffer.from(TEXT), 'hooked.txt', 'text/plain', assert);
    const completed = await waitFor('file.completed at the receiver',
      () => got('file.completed', secret).find((r) => r.json?.data?.file?.id === fileId), assert);
    assert(completed.valid, 'the file.completed signature does not verify');
    assert(completed.json.data.file.status === 'COMPLETED', `file.completed carries status ${completed.json.data.file.status}`);
    const brokenId = await uploadAndWait(base, user.token, BROKEN_PDF, 'broken-hook.pdf', 'application/pdf', assert);
    const failed = await waitFor('file.failed at the receiver',
      () => got('file.failed', secret).find((r) => r.json?.data?.file?.id === brokenId), assert);
    assert(failed.valid, 'the file.failed signature does not verify');
    await log.getByRole('button', { name: 'Refresh' }).click();
    await log.locator('[data-testid="delivery"][data-event-type="file.completed"][data-state="succeeded"]').waitFor();
    await log.locator('[data-testid="delivery"][data-event-type="file.failed"][data-state="succeeded"]').waitFor();
    assert((await log.getByTestId('delivery').first().getAttribute('data-event-type')) === 'file.failed', 'the log is not newest first');

    // --- switched off, the endpoint gets no event -------------------------------------------
    await row.getByRole('switch', { name: `Send events to ${receiver.url}` }).click();
    await toast(page, 'Webhook disabled').waitFor();
    await page.locator('[data-testid="webhook-row"][data-enabled="false"]').waitFor();
    const listed = await api(base, 'GET', '/api/webhooks', { token: user.token });
    assert(listed.body.data.length === 1 && listed.body.data[0].enabled === false, `the API lists ${JSON.stringify(listed.body.data)}`);
    const before = receiver.received.length;
    await uploadAndWait(base, user.token, Buffer.from(TEXT), 'unheard.txt', 'text/plain', assert);
    await page.waitForTimeout(3000); // longer than the sender's poll interval (2 s)
    assert(receiver.received.length === before, `a disabled endpoint got ${receiver.received.length - before} more request(s)`);

    // --- deleted after confirming -----------------------------------------------------------
    await row.getByRole('button', { name: `Delete ${receiver.url}` }).click();
    await row.getByText('Its delivery log goes with it', { exact: false }).waitFor();
    await checkA11y(page, 'webhook delete confirmation');
    await row.getByRole('button', { name: 'Delete webhook' }).click();
    await toast(page, 'Webhook deleted').waitFor();
    await section.getByTestId('webhooks-empty').waitFor();
    await page.context().close();
  } finally {
    await receiver.close();
  }
}
