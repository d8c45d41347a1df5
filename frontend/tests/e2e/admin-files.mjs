// End-to-end: the admin's File Management tab. A user's upload fails (a PDF header on garbage
// passes detection, the sandboxed engine cannot rebuild it); an admin filters the tab to that
// user's FAILED files, opens the file's details and report, re-queues it (it runs again and
// fails again, one more attempt), then deletes it after confirming.
import { checkA11y } from './a11y.mjs';
import { api } from './lib.mjs';

const BROKEN_PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from(Array.from({ length: 256 * 20 }, (_, i) => i % 256))]);

/** A new user with one FAILED upload, made through the API; returns {email, fileId}. */
async function userWithFailedFile(base, assert) {
  const email = `failing${Date.now()}@e2e-sanitas.org`;
  const reg = await api(base, 'POST', '/api/auth/register', { json: { email, password: 'Failing-e2e-1' } });
  assert(reg.status === 201 || reg.status === 200, `register answered ${reg.status}: ${JSON.stringify(reg.body)}`);
  const token = reg.body.data.tokens.accessToken;
  const form = new FormData();
  form.append('file', new Blob([BROKEN_PDF], { type: 'application/pdf' }), 'broken-e2e.pdf');
  const up = await api(base, 'POST', '/api/upload/single', { token, form });
  assert(up.status === 201, `upload answered ${up.status}: ${JSON.stringify(up.body)}`);
  const fileId = up.body.data.fileId;
  const until = Date.now() + 120_000;
  for (;;) {
    const st = await api(base, 'GET', `/api/process/status/${fileId}`, { token });
    if (st.body?.data?.file?.status === 'FAILED') break;
    assert(st.body?.data?.file?.status !== 'COMPLETED', 'the broken PDF was sanitized');
    assert(Date.now() < until, `the upload is still ${st.body?.data?.file?.status}`);
    await new Promise((r) => setTimeout(r, 300));
  }
  return { email, fileId };
}

export async function adminFileManagement({ page, base, admin, login, toast, shots, assert }) {
  const { email, fileId } = await userWithFailedFile(base, assert);
  await login(page, base, admin);
  await page.goto(`${base}/admin`);
  await page.getByRole('tab', { name: 'File Management' }).click();
  await page.getByRole('search', { name: 'File filters' }).waitFor();
  await page.getByLabel('User email').fill(email);
  await page.getByLabel('File status').selectOption('FAILED');
  const row = page.getByTestId(`admin-file-row-${fileId}`);
  await row.waitFor();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="admin-file-row-"]').length === 1);
  assert((await row.innerText()).includes(email), 'the row does not name the owner');
  assert(await row.getByTestId('status-badge').getAttribute('data-status') === 'FAILED', 'the row is not FAILED');
  await shots(page, 'admin-files');

  await row.getByRole('button', { name: 'Details of broken-e2e.pdf' }).click();
  const dialog = page.getByRole('dialog', { name: 'broken-e2e.pdf' });
  await dialog.waitFor();
  await dialog.getByText('Error code').waitFor();
  await dialog.getByTestId('no-report').waitFor();
  const before = await dialog.innerText();
  assert(/damaged|cannot|could not/i.test(before), `the details show no reason: ${before}`);
  assert(before.includes('failed, attempt 1'), `job line: ${before}`);
  await checkA11y(page, 'admin file details dialog');

  // Re-queue: the job runs again (attempt 1 of the reset job) and the broken file fails again.
  await dialog.getByRole('button', { name: 'Re-queue' }).click();
  await toast(page, 'File queued for processing again').waitFor();
  const statusOf = () => dialog.getByTestId('status-badge').getAttribute('data-status');
  await page.waitForFunction(() => {
    const s = document.querySelector('[role="dialog"] [data-testid="status-badge"]')?.getAttribute('data-status');
    return s === 'PENDING' || s === 'PROCESSING';
  }, null, { timeout: 15_000 }).catch(() => {}); // it may already be done
  await page.waitForFunction(() => document.querySelector('[role="dialog"] [data-testid="status-badge"]')?.getAttribute('data-status') === 'FAILED', null, { timeout: 120_000 });
  assert(await statusOf() === 'FAILED', 'the re-queued file did not end FAILED');
  const adminToken = await page.evaluate(() => JSON.parse(localStorage.getItem('sanitas.tokens')).accessToken);
  const again = await api(base, 'GET', `/api/admin/files/${fileId}`, { token: adminToken });
  assert(again.body.data.job.state === 'failed' && again.body.data.job.attempts === 1, `job after re-queue: ${JSON.stringify(again.body.data.job)}`);

  // Delete, after the confirmation.
  await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
  await dialog.getByText('This cannot be undone.', { exact: false }).waitFor();
  await checkA11y(page, 'admin file delete confirmation');
  await dialog.getByRole('button', { name: 'Delete file' }).click();
  await toast(page, 'File deleted successfully').waitFor();
  await dialog.waitFor({ state: 'detached' });
  await page.getByTestId('admin-files-empty').waitFor();
  const gone = await api(base, 'GET', `/api/admin/files/${fileId}`, { token: adminToken });
  assert(gone.status === 404, `the deleted file answers ${gone.status}`);
}
