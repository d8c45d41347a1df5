// End-to-end: the admin's Mail tab. A hostile message goes through a real `sanitas mail`
// (mail_chain.py: a macro .docm and tool.exe, delivered to an SMTP sink that stands for
// Postfix); the admin finds it on the Mail tab with its verdict and each attachment's, and
// releases the original after confirming: the sink receives it with X-Sanitas-Released.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkA11y } from './a11y.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

async function stateOf(file) {
  try { return JSON.parse(fs.readFileSync(file, 'utf8')); } catch { return null; }
}

async function until(check, what, assert, ms = 120_000) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    assert(Date.now() < end, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export async function mailHeld({ newPage, base, admin, login, toast, shots, assert, env, python, dataDir, sinkPort, filterPort }) {
  const state = path.join(dataDir, 'mail-state.json');
  const chain = spawn(python, [path.join(HERE, 'mail_chain.py'), String(sinkPort), String(filterPort), state],
    { env, stdio: ['pipe', 'inherit', 'inherit'] });
  try {
    await until(async () => (await stateOf(state))?.delivered === 1, 'the cleaned message at the sink', assert);
    const page = await newPage();
    await login(page, base, admin);
    await page.goto(`${base}/admin`);
    await page.getByRole('tab', { name: 'Mail' }).click();
    const card = page.getByTestId('held-message').filter({ hasText: 'Invoice e2e' });
    await card.waitFor();
    const text = await card.innerText();
    assert(text.includes('alice@example.org') && text.includes('bob@example.net'), `card: ${text}`);
    assert(await card.getByTestId('verdict-badge').first().getAttribute('data-verdict') === 'partial', 'not partial');
    const tool = card.getByTestId('held-attachment').filter({ hasText: 'tool.exe' });
    assert(await tool.getByTestId('verdict-badge').getAttribute('data-verdict') === 'refused', 'tool.exe not refused');
    const docm = card.getByTestId('held-attachment').filter({ hasText: 'invoice.docm' });
    assert(await docm.getByTestId('verdict-badge').getAttribute('data-verdict') === 'cleaned', 'docm not cleaned');
    await checkA11y(page, 'admin mail tab');
    await shots(page, 'admin-mail');

    await card.getByRole('button', { name: 'Release original…' }).click();
    await card.getByText('Send the original, uncleaned, to its recipients?').waitFor();
    assert((await stateOf(state)).released === 0, 'released before the confirmation');
    await card.getByRole('button', { name: 'Release original', exact: true }).click();
    await toast(page, 'The original was released to 1 recipient(s)').waitFor();
    await card.getByText(`Released by ${admin.email}`).waitFor();
    await until(async () => (await stateOf(state))?.released === 1, 'the released original at the sink', assert, 30_000);
    await page.context().close();
  } finally {
    chain.stdin.end();
    await new Promise((r) => { chain.once('exit', r); setTimeout(r, 40_000); });
  }
}
