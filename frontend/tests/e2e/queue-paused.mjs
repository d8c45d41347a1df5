// End-to-end: waiting is explained. An admin pauses the processing queue (POST
// /api/process/queue/pause); a user's two uploads wait; the second one's status page says
// "Paused by the administrator" (never "Processing... 0%"), with no percentage; the API counts
// the job ahead of it. The admin resumes the queue; the same page, still open, follows the job
// to its end and announces it. The queue is resumed whatever happens, so later scenarios run.
import { checkA11y } from './a11y.mjs';
import { api } from './lib.mjs';

const TEXT = (n) => Buffer.from(`Quarterly notes ${n}\nNothing active in here.\n`);

export async function pausedQueue({ newPage, base, admin, login, shots, assert }) {
  const signIn = await api(base, 'POST', '/api/auth/login', { json: admin });
  assert(signIn.status === 200, `admin sign-in answered ${signIn.status}`);
  const adminToken = signIn.body.data.tokens.accessToken;
  const user = { email: `paused${Date.now()}@e2e-sanitas.org`, password: 'Paused-e2e-pass-1' };
  const reg = await api(base, 'POST', '/api/auth/register', { json: user });
  assert(reg.status === 201 || reg.status === 200, `register answered ${reg.status}: ${JSON.stringify(reg.body)}`);
  const token = reg.body.data.tokens.accessToken;

  const paused = await api(base, 'POST', '/api/process/queue/pause', { token: adminToken });
  assert(paused.status === 200 && paused.body.data.paused === true, `pause answered ${paused.status}: ${JSON.stringify(paused.body)}`);
  let resumed = false;
  const resume = async () => {
    if (resumed) return;
    const r = await api(base, 'POST', '/api/process/queue/resume', { token: adminToken });
    assert(r.status === 200 && r.body.data.paused === false, `resume answered ${r.status}`);
    resumed = true;
  };
  try {
    const ids = [];
    for (const n of [1, 2]) {
      const form = new FormData();
      form.append('file', new Blob([TEXT(n)], { type: 'text/plain' }), `waiting-${n}.txt`);
      const up = await api(base, 'POST', '/api/upload/single', { token, form });
      assert(up.status === 201, `upload answered ${up.status}: ${JSON.stringify(up.body)}`);
      ids.push(up.body.data.fileId);
    }
    const second = ids[1];
    const status = await api(base, 'GET', `/api/process/status/${second}`, { token });
    const { job, queuePaused } = status.body.data;
    assert(queuePaused === true, 'the status call does not say the queue is paused');
    assert(job?.state === 'waiting' && job.ahead >= 1, `the second upload's job: ${JSON.stringify(job)}`);

    const page = await newPage();
    await login(page, base, user);
    await page.goto(`${base}/status/${second}`);
    const state = page.getByTestId('progress-state');
    await state.filter({ hasText: 'Paused by the administrator' }).waitFor();
    assert(await page.getByTestId('progress-percent').count() === 0, 'a paused job shows a percentage');
    assert((await state.innerText()).trim() === 'Paused by the administrator', `waiting text: ${await state.innerText()}`);
    assert(await page.getByTestId('status-badge').first().getAttribute('data-status') === 'PENDING', 'the paused file is not PENDING');
    await shots(page, 'status-paused');

    // Resumed: the open page follows the job to its end (it polls every 3 s) and says so.
    await resume();
    await page.getByTestId('status-badge').first().and(page.locator('[data-status="COMPLETED"]')).waitFor({ timeout: 120_000 });
    await state.filter({ hasText: 'Done' }).waitFor();
    await page.getByTestId('status-announcement').filter({ hasText: /^Processing finished/ }).waitFor({ state: 'attached' });
    await checkA11y(page, 'status page after the queue resumed');
    await page.context().close();
  } finally {
    await resume();
  }
}
