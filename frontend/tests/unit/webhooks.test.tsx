import { afterEach, describe, expect, it, vi } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { ApiError, apiClient } from '../../src/lib/api-client';
import { storeAuth } from '../../src/lib/auth/storage';
import ProfilePage from '../../src/features/profile/components/ProfilePage';
import { attemptOutcome } from '../../src/features/profile/components/DeliveryLog';
import { saveProblem } from '../../src/features/profile/components/WebhookForm';
import { urlProblem, type Delivery, type Webhook } from '../../src/features/profile/api';
import { calls, renderApp, serve } from './harness';
import { aPlanTable, aUser } from './fixtures';

const adapter = apiClient.defaults.adapter;
afterEach(() => {
  apiClient.defaults.adapter = adapter;
  vi.unstubAllGlobals();
});

const tokens = { accessToken: 'tok', refreshToken: 'ref', expiresIn: 900 };
const ok = (data: unknown, message = 'ok') => ({ success: true, message, data });
const fail = (code: string, message: string) => ({ success: false, message, error: code });
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4nzqPVCFWsk=';

function aWebhook(overrides: Partial<Webhook> = {}): Webhook {
  return {
    id: 'w1', url: 'https://hooks.example.com/sanitas', events: ['file.completed', 'file.failed', 'file.expired'],
    enabled: true, createdAt: '2026-03-01T10:00:00Z', updatedAt: '2026-03-01T10:00:00Z', ...overrides,
  };
}
const disabledHook = aWebhook({ id: 'w2', url: 'https://ops.example.org/in', events: ['file.failed'], enabled: false });

function aDelivery(overrides: Partial<Delivery> = {}): Delivery {
  return {
    id: 'd1', eventId: 'msg_2Xb7', eventType: 'webhook.test', state: 'succeeded', attempts: 1, nextAttemptAt: null,
    lastStatusCode: 200, lastError: null, createdAt: '2026-03-02T09:00:00Z', finishedAt: '2026-03-02T09:00:01Z',
    attemptLog: [{ attempt: 1, at: '2026-03-02T09:00:01Z', statusCode: 200, error: null, durationMs: 42 }],
    payload: { type: 'webhook.test' }, ...overrides,
  };
}

function renderProfile(role: 'USER' | 'GUEST', hooks: Webhook[] = [aWebhook(), disabledHook], extra: Parameters<typeof serve>[0] = []) {
  const user = aUser({ role });
  storeAuth(user, tokens);
  serve([
    ...extra,
    { method: 'GET', url: /\/api\/auth\/profile$/, body: ok(user) },
    { method: 'GET', url: /\/api\/plans$/, body: ok(aPlanTable()) },
    { method: 'GET', url: /\/api\/keys$/, body: ok([]) },
    { method: 'GET', url: /\/api\/webhooks$/, body: ok(hooks) },
  ]);
  renderApp(<ProfilePage />, { path: '/profile', at: '/profile' });
}
const section = async () => within(await screen.findByTestId('webhooks-section'));
const bodyOf = (method: string, url: string) => {
  const call = calls.find((c) => c.method === method && c.url === url);
  return call ? JSON.parse(String(call.data)) as unknown : undefined;
};

describe('webhook helpers', () => {
  it('drops the server’s field prefix from a URL refusal', () => {
    expect(urlProblem('url: must start with https:// (or http://)')).toBe('Must start with https:// (or http://)');
    expect(urlProblem('Something else')).toBe('Something else');
  });
  it('tells URL problems from others', () => {
    const refused = new ApiError('x', 'api', { status: 422, code: 'webhook_url_not_allowed', serverMessage: 'url: 10.0.0.1 is a private address; webhooks may only call public addresses.' });
    expect(saveProblem(refused, 'f')).toEqual({ url: '10.0.0.1 is a private address; webhooks may only call public addresses.', message: refused.serverMessage });
    const tooMany = new ApiError('x', 'api', { status: 409, code: 'too_many_webhooks', serverMessage: 'At most 20.' });
    expect(saveProblem(tooMany, 'f')).toEqual({ message: 'At most 20.' });
    expect(saveProblem(new Error('boom'), 'Failed')).toEqual({ message: 'Failed' });
  });
  it('says what an attempt got back', () => {
    expect(attemptOutcome({ statusCode: 200, error: null })).toBe('HTTP 200');
    expect(attemptOutcome({ statusCode: 500, error: 'HTTP 500' })).toBe('HTTP 500: HTTP 500');
    expect(attemptOutcome({ statusCode: null, error: 'connection refused' })).toBe('connection refused');
    expect(attemptOutcome({ statusCode: null, error: null })).toBe('No answer');
  });
});

describe('profile: webhooks', () => {
  it('lists the endpoints with their events, state and dates', async () => {
    renderProfile('USER');
    const s = await section();
    const rows = await s.findAllByTestId('webhook-row');
    expect(rows).toHaveLength(2);
    expect(within(rows[0]).getByTestId('webhook-url')).toHaveTextContent('https://hooks.example.com/sanitas');
    for (const e of ['file.completed', 'file.failed', 'file.expired']) expect(rows[0]).toHaveTextContent(e);
    expect(within(rows[0]).getByRole('switch', { name: 'Send events to https://hooks.example.com/sanitas' })).toBeChecked();
    expect(within(rows[0]).getByTestId('webhook-state')).toHaveTextContent('Enabled');
    expect(rows[1]).toHaveTextContent('file.failed');
    expect(rows[1]).not.toHaveTextContent('file.completed');
    expect(within(rows[1]).getByRole('switch')).not.toBeChecked();
    expect(within(rows[1]).getByTestId('webhook-state')).toHaveTextContent('Disabled');
    expect(rows[0]).toHaveTextContent('Created');
  });

  it('shows each endpoint’s newest delivery, and follows it while it is pending', async () => {
    const failing = aWebhook({
      lastDelivery: { eventType: 'file.completed', state: 'failed', attempts: 11, createdAt: '2026-03-02T09:00:00Z',
        finishedAt: '2026-03-03T09:00:00Z', lastStatusCode: 503, lastError: 'HTTP 503' },
    });
    const pending = { ...disabledHook, lastDelivery: { eventType: 'webhook.test', state: 'pending' as const, attempts: 0,
      createdAt: '2026-03-04T09:00:00Z', finishedAt: null, lastStatusCode: null, lastError: null } };
    const delivered = { ...pending, lastDelivery: { ...pending.lastDelivery, state: 'succeeded' as const, attempts: 1,
      finishedAt: '2026-03-04T09:00:01Z', lastStatusCode: 204 } };
    let answer: Webhook[] = [failing, pending];
    renderProfile('USER', [], []);
    const routes = apiClient.defaults.adapter;
    // Answer the list from a variable the test changes, and the rest as before.
    apiClient.defaults.adapter = async (config) => {
      if (config.url === '/api/webhooks') {
        calls.push({ method: 'GET', url: config.url, data: undefined });
        return { data: ok(answer), status: 200, statusText: '', headers: {}, config };
      }
      return (routes as (c: typeof config) => Promise<never>)(config);
    };
    const s = await section();
    const rows = await s.findAllByTestId('webhook-row');
    const first = within(rows[0]).getByTestId('webhook-last-delivery');
    expect(within(first).getByTestId('webhook-last-delivery-state')).toHaveTextContent('Failed');
    expect(first).toHaveTextContent('file.completed');
    expect(first).toHaveTextContent('HTTP 503');
    expect(within(rows[1]).getByTestId('webhook-last-delivery-state')).toHaveTextContent('Pending');
    answer = [failing, delivered];
    await waitFor(() => expect(within(rows[1]).getByTestId('webhook-last-delivery-state')).toHaveTextContent('Delivered'), { timeout: 5000 });
    expect(within(rows[1]).getByTestId('webhook-last-delivery')).toHaveTextContent('HTTP 204');
  });

  it('says when an endpoint has had no delivery', async () => {
    renderProfile('USER', [aWebhook()]);
    const s = await section();
    expect(await s.findByTestId('webhook-last-delivery')).toHaveTextContent('None yet');
  });

  it('says when there are none', async () => {
    renderProfile('USER', []);
    const s = await section();
    expect(await s.findByTestId('webhooks-empty')).toHaveTextContent('No webhooks yet');
  });

  it('adds an endpoint with the chosen events, then shows its signing secret once and copies it', async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText } });
    const made = aWebhook({ id: 'w9', url: 'https://new.example.com/h', events: ['file.completed', 'file.failed'] });
    renderProfile('USER', [], [{ method: 'POST', url: /\/api\/webhooks$/, status: 201, body: ok({ webhook: made, secret: SECRET }) }]);
    const s = await section();
    await s.findByTestId('webhooks-empty');
    // All three file events are chosen to begin with.
    for (const e of ['file.completed', 'file.failed', 'file.expired']) expect(s.getByRole('checkbox', { name: e })).toBeChecked();
    expect(s.getByRole('checkbox', { name: 'file.expired' })).toHaveAccessibleDescription(/expired/);
    await userEvent.type(s.getByLabelText('Endpoint URL'), '  https://new.example.com/h ');
    await userEvent.click(s.getByRole('checkbox', { name: 'file.expired' }));
    await userEvent.click(s.getByRole('button', { name: 'Add webhook' }));

    const panel = await s.findByTestId('new-webhook');
    expect(bodyOf('POST', '/api/webhooks')).toEqual({ url: 'https://new.example.com/h', events: ['file.completed', 'file.failed'], enabled: true });
    expect(within(panel).getByTestId('webhook-secret')).toHaveTextContent(SECRET);
    expect(panel).toHaveTextContent('you won’t see it again');
    expect(await screen.findByText('Webhook created')).toBeInTheDocument();
    expect(s.getByLabelText('Endpoint URL')).toHaveValue('');
    expect(s.getByRole('checkbox', { name: 'file.expired' })).toBeChecked();
    // The list is fetched again.
    await waitFor(() => expect(calls.filter((c) => c.method === 'GET' && c.url === '/api/webhooks')).toHaveLength(2));

    await userEvent.click(within(panel).getByRole('button', { name: 'Copy secret' }));
    expect(writeText).toHaveBeenCalledWith(SECRET);
    expect(await within(panel).findByRole('button', { name: 'Copied' })).toBeInTheDocument();
    await userEvent.click(within(panel).getByRole('button', { name: 'I have saved it' }));
    expect(s.queryByTestId('new-webhook')).not.toBeInTheDocument();
    expect(screen.queryByText(SECRET)).not.toBeInTheDocument();
  });

  it('checks the URL and events before calling the API', async () => {
    renderProfile('USER', []);
    const s = await section();
    await s.findByTestId('webhooks-empty');
    await userEvent.click(s.getByRole('button', { name: 'Add webhook' }));
    expect(s.getByTestId('webhook-url-error')).toHaveTextContent('Enter the URL that receives the events');
    expect(s.getByLabelText('Endpoint URL')).toHaveAttribute('aria-invalid', 'true');
    expect(s.getByLabelText('Endpoint URL')).toHaveAccessibleDescription('Enter the URL that receives the events');
    await userEvent.type(s.getByLabelText('Endpoint URL'), 'https://x.example.com');
    expect(s.queryByTestId('webhook-url-error')).not.toBeInTheDocument();
    for (const e of ['file.completed', 'file.failed', 'file.expired']) await userEvent.click(s.getByRole('checkbox', { name: e }));
    await userEvent.click(s.getByRole('button', { name: 'Add webhook' }));
    expect(s.getByText('Choose at least one event')).toBeInTheDocument();
    expect(calls.some((c) => c.method === 'POST')).toBe(false);
  });

  it('shows the server’s refusal of the URL by the URL field', async () => {
    renderProfile('USER', [], [{
      method: 'POST', url: /\/api\/webhooks$/, status: 422,
      body: fail('webhook_url_not_allowed', 'url: 127.0.0.1 is a loopback address; webhooks may only call public addresses.'),
    }]);
    const s = await section();
    await userEvent.type(s.getByLabelText('Endpoint URL'), 'http://127.0.0.1:9000/h');
    await userEvent.click(s.getByRole('button', { name: 'Add webhook' }));
    const error = await s.findByTestId('webhook-url-error');
    expect(error).toHaveTextContent('127.0.0.1 is a loopback address; webhooks may only call public addresses.');
    expect(s.getByLabelText('Endpoint URL')).toHaveAttribute('aria-invalid', 'true');
    expect(s.getByLabelText('Endpoint URL')).toHaveValue('http://127.0.0.1:9000/h');
    expect(await screen.findByText('url: 127.0.0.1 is a loopback address; webhooks may only call public addresses.')).toBeInTheDocument();
    expect(s.queryByTestId('new-webhook')).not.toBeInTheDocument();
  });

  it('shows other refusals as a message, not by the URL field', async () => {
    renderProfile('USER', [], [{ method: 'POST', url: /\/api\/webhooks$/, status: 409, body: fail('too_many_webhooks', 'An account can have at most 20 webhooks; delete one you no longer use.') }]);
    const s = await section();
    await userEvent.type(s.getByLabelText('Endpoint URL'), 'https://x.example.com');
    await userEvent.click(s.getByRole('button', { name: 'Add webhook' }));
    expect(await screen.findByText('An account can have at most 20 webhooks; delete one you no longer use.')).toBeInTheDocument();
    expect(s.queryByTestId('webhook-url-error')).not.toBeInTheDocument();
  });

  it('switches an endpoint off and on with its whole settings', async () => {
    renderProfile('USER', [aWebhook(), disabledHook], [
      { method: 'PUT', url: /\/api\/webhooks\/w1$/, body: ok(aWebhook({ enabled: false })) },
      { method: 'PUT', url: /\/api\/webhooks\/w2$/, body: ok({ ...disabledHook, enabled: true }) },
    ]);
    const s = await section();
    const rows = await s.findAllByTestId('webhook-row');
    await userEvent.click(within(rows[0]).getByRole('switch'));
    await waitFor(() => expect(bodyOf('PUT', '/api/webhooks/w1')).toEqual({
      url: 'https://hooks.example.com/sanitas', events: ['file.completed', 'file.failed', 'file.expired'], enabled: false,
    }));
    expect(await screen.findByText('Webhook disabled')).toBeInTheDocument();
    await userEvent.click(within(rows[1]).getByRole('switch'));
    await waitFor(() => expect(bodyOf('PUT', '/api/webhooks/w2')).toEqual({ url: 'https://ops.example.org/in', events: ['file.failed'], enabled: true }));
    expect(await screen.findByText('Webhook enabled')).toBeInTheDocument();
    await waitFor(() => expect(calls.filter((c) => c.method === 'GET' && c.url === '/api/webhooks').length).toBeGreaterThanOrEqual(2));
  });

  it('edits the URL and events, keeping the enabled state, and shows a refused URL in the edit form', async () => {
    renderProfile('USER', [disabledHook], [
      { method: 'PUT', url: /\/api\/webhooks\/w2$/, status: 422, body: fail('invalid_webhook_url', 'url: must start with https:// (or http://)') },
    ]);
    const s = await section();
    const row = (await s.findAllByTestId('webhook-row'))[0];
    await userEvent.click(within(row).getByRole('button', { name: 'Edit https://ops.example.org/in' }));
    const url = within(row).getByLabelText('Endpoint URL');
    expect(url).toHaveValue('https://ops.example.org/in');
    expect(within(row).getByRole('checkbox', { name: 'file.failed' })).toBeChecked();
    expect(within(row).getByRole('checkbox', { name: 'file.completed' })).not.toBeChecked();
    await userEvent.clear(url);
    await userEvent.type(url, 'ftp://x');
    await userEvent.click(within(row).getByRole('checkbox', { name: 'file.completed' }));
    await userEvent.click(within(row).getByRole('button', { name: 'Save changes' }));
    expect(await within(row).findByTestId('webhook-url-error')).toHaveTextContent('Must start with https:// (or http://)');
    expect(bodyOf('PUT', '/api/webhooks/w2')).toEqual({ url: 'ftp://x', events: ['file.completed', 'file.failed'], enabled: false });
    await userEvent.click(within(row).getByRole('button', { name: 'Cancel' }));
    expect(within(row).queryByLabelText('Endpoint URL')).not.toBeInTheDocument();
  });

  it('saves an edit and closes the form', async () => {
    renderProfile('USER', [aWebhook()], [
      { method: 'PUT', url: /\/api\/webhooks\/w1$/, body: ok(aWebhook({ url: 'https://hooks.example.com/v2' })) },
    ]);
    const s = await section();
    const row = (await s.findAllByTestId('webhook-row'))[0];
    await userEvent.click(within(row).getByRole('button', { name: /^Edit / }));
    const url = within(row).getByLabelText('Endpoint URL');
    await userEvent.clear(url);
    await userEvent.type(url, 'https://hooks.example.com/v2');
    await userEvent.click(within(row).getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByText('Webhook updated')).toBeInTheDocument();
    expect(bodyOf('PUT', '/api/webhooks/w1')).toEqual({ url: 'https://hooks.example.com/v2', events: ['file.completed', 'file.failed', 'file.expired'], enabled: true });
    await waitFor(() => expect(within(row).queryByLabelText('Endpoint URL')).not.toBeInTheDocument());
  });

  it('deletes an endpoint only after confirming', async () => {
    renderProfile('USER', [aWebhook(), disabledHook], [{ method: 'DELETE', url: /\/api\/webhooks\/w2$/, body: ok({ id: 'w2' }, 'Webhook deleted') }]);
    const s = await section();
    const row = (await s.findAllByTestId('webhook-row'))[1];
    await userEvent.click(within(row).getByRole('button', { name: 'Delete https://ops.example.org/in' }));
    const confirm = within(row).getByRole('group', { name: 'Confirm deleting the webhook for https://ops.example.org/in' });
    expect(confirm).toHaveTextContent('Its delivery log goes with it');
    await userEvent.click(within(confirm).getByRole('button', { name: 'Cancel' }));
    expect(calls.some((c) => c.method === 'DELETE')).toBe(false);
    await userEvent.click(within(row).getByRole('button', { name: 'Delete https://ops.example.org/in' }));
    await userEvent.click(within(row).getByRole('button', { name: 'Delete webhook' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'DELETE' && c.url === '/api/webhooks/w2')).toBe(true));
    expect(await screen.findByText('Webhook deleted')).toBeInTheDocument();
    await waitFor(() => expect(calls.filter((c) => c.method === 'GET' && c.url === '/api/webhooks')).toHaveLength(2));
  });

  it('sends a test event and opens the delivery log, which shows every attempt', async () => {
    const retrying = aDelivery({
      id: 'd2', eventId: 'msg_9Kq', eventType: 'file.completed', state: 'pending', attempts: 2, lastStatusCode: 503,
      lastError: 'HTTP 503', finishedAt: null, nextAttemptAt: '2026-03-02T09:05:00Z', createdAt: '2026-03-02T09:01:00Z',
      attemptLog: [
        { attempt: 1, at: '2026-03-02T09:01:00Z', statusCode: null, error: 'connection refused', durationMs: 3 },
        { attempt: 2, at: '2026-03-02T09:01:31Z', statusCode: 503, error: null, durationMs: 18 },
      ],
    });
    const gaveUp = aDelivery({ id: 'd3', eventType: 'file.failed', state: 'failed', attempts: 11, lastStatusCode: null, lastError: 'timed out', attemptLog: [] });
    renderProfile('USER', [aWebhook()], [
      { method: 'POST', url: /\/api\/webhooks\/w1\/test$/, status: 202, body: ok(aDelivery({ state: 'pending', attempts: 0, attemptLog: [] })) },
      { method: 'GET', url: /\/api\/webhooks\/w1\/deliveries/, body: ok([aDelivery(), retrying, gaveUp]) },
    ]);
    const s = await section();
    const row = (await s.findAllByTestId('webhook-row'))[0];
    const logButton = within(row).getByRole('button', { name: 'Delivery log of https://hooks.example.com/sanitas' });
    expect(logButton).toHaveAttribute('aria-expanded', 'false');
    await userEvent.click(within(row).getByRole('button', { name: 'Send test event to https://hooks.example.com/sanitas' }));
    expect(await screen.findByText('Test event queued: it is sent within seconds')).toBeInTheDocument();
    expect(calls.some((c) => c.method === 'POST' && c.url === '/api/webhooks/w1/test')).toBe(true);
    expect(logButton).toHaveAttribute('aria-expanded', 'true');

    const log = await within(row).findByTestId('delivery-log');
    const items = await within(log).findAllByTestId('delivery');
    expect(calls.some((c) => c.method === 'GET' && c.url === '/api/webhooks/w1/deliveries')).toBe(true);
    expect(items).toHaveLength(3);
    expect(items[0]).toHaveAttribute('data-event-type', 'webhook.test');
    expect(within(items[0]).getByTestId('delivery-state')).toHaveTextContent('Delivered');
    expect(within(items[0]).getByTestId('delivery-attempt')).toHaveTextContent('Attempt 1');
    expect(within(items[0]).getByTestId('delivery-attempt')).toHaveTextContent('HTTP 200');
    expect(within(items[1]).getByTestId('delivery-state')).toHaveTextContent('Pending');
    expect(within(items[1]).getByTestId('delivery-next')).toHaveTextContent(new Date('2026-03-02T09:05:00Z').toLocaleString());
    const attempts = within(items[1]).getAllByTestId('delivery-attempt');
    expect(attempts[0]).toHaveTextContent('connection refused');
    expect(attempts[1]).toHaveTextContent('Attempt 2');
    expect(attempts[1]).toHaveTextContent('HTTP 503');
    expect(items[1]).toHaveTextContent('msg_9Kq');
    expect(within(items[2]).getByTestId('delivery-state')).toHaveTextContent('Failed');
    expect(items[2]).toHaveTextContent('Not sent yet.');

    await userEvent.click(logButton);
    expect(within(row).queryByTestId('delivery-log')).not.toBeInTheDocument();
  });

  it('follows a pending delivery until it is done', async () => {
    let answer = [aDelivery({ state: 'pending', attempts: 0, attemptLog: [], finishedAt: null, nextAttemptAt: '2026-03-02T09:00:00Z' })];
    renderProfile('USER', [aWebhook()], []);
    const routes = apiClient.defaults.adapter;
    // Answer the log from a variable the test changes, and the rest as before.
    apiClient.defaults.adapter = async (config) => {
      if (config.url === '/api/webhooks/w1/deliveries') {
        calls.push({ method: 'GET', url: config.url, data: undefined });
        return { data: ok(answer), status: 200, statusText: '', headers: {}, config };
      }
      return (routes as (c: typeof config) => Promise<never>)(config);
    };
    const s = await section();
    const row = (await s.findAllByTestId('webhook-row'))[0];
    await userEvent.click(within(row).getByRole('button', { name: /^Delivery log/ }));
    expect(await within(row).findByTestId('delivery-state')).toHaveTextContent('Pending');
    answer = [aDelivery()];
    await waitFor(() => expect(within(row).getByTestId('delivery-state')).toHaveTextContent('Delivered'), { timeout: 5000 });
  });

  it('explains too many test events', async () => {
    renderProfile('USER', [aWebhook()], [{
      method: 'POST', url: /\/api\/webhooks\/w1\/test$/, status: 429,
      body: fail('too_many_requests', 'At most 10 test events a minute per webhook; try again shortly.'),
    }]);
    const s = await section();
    const row = (await s.findAllByTestId('webhook-row'))[0];
    await userEvent.click(within(row).getByRole('button', { name: /^Send test event/ }));
    expect(await screen.findByText('At most 10 test events a minute per webhook; try again shortly.')).toBeInTheDocument();
    expect(within(row).queryByTestId('delivery-log')).not.toBeInTheDocument();
  });

  it('shows an empty delivery log', async () => {
    renderProfile('USER', [aWebhook()], [{ method: 'GET', url: /\/api\/webhooks\/w1\/deliveries/, body: ok([]) }]);
    const s = await section();
    const row = (await s.findAllByTestId('webhook-row'))[0];
    await userEvent.click(within(row).getByRole('button', { name: /^Delivery log/ }));
    expect(await within(row).findByTestId('deliveries-empty')).toHaveTextContent('Nothing sent yet');
  });

  it('says when the list cannot be loaded, with a retry', async () => {
    const user = aUser();
    storeAuth(user, tokens);
    serve([
      { method: 'GET', url: /\/api\/auth\/profile$/, body: ok(user) },
      { method: 'GET', url: /\/api\/keys$/, body: ok([]) },
      { method: 'GET', url: /\/api\/webhooks$/, status: 500, body: fail('internal_error', 'Database unavailable') },
    ]);
    renderApp(<ProfilePage />, { path: '/profile', at: '/profile' });
    const s = await section();
    expect(await s.findByText('Failed to load your webhooks')).toBeInTheDocument();
    expect(s.getByText(/Database unavailable/)).toBeInTheDocument();
    await userEvent.click(s.getByRole('button', { name: 'Retry' }));
    await waitFor(() => expect(calls.filter((c) => c.url === '/api/webhooks')).toHaveLength(2));
  });

  it('tells a Free (GUEST) account that webhooks come with Pro, with no form', async () => {
    renderProfile('GUEST');
    const s = await section();
    const notice = s.getByTestId('webhooks-plan-notice');
    await waitFor(() => expect(notice).toHaveTextContent('Webhooks are part of the Pro plan'));
    expect(notice).toHaveTextContent('Your account is on the Free plan. Upgrade to Pro or Enterprise');
    expect(within(notice).getByRole('link', { name: 'See the plans' })).toHaveAttribute('href', '/pricing');
    expect(s.queryByLabelText('Endpoint URL')).not.toBeInTheDocument();
    await screen.findByDisplayValue('ada@example.org');
    expect(calls.some((c) => c.url.startsWith('/api/webhooks'))).toBe(false);
  });

  it('switches to the plan notice when the server answers plan_required', async () => {
    const user = aUser();
    storeAuth(user, tokens);
    serve([
      { method: 'GET', url: /\/api\/auth\/profile$/, body: ok(user) },
      { method: 'GET', url: /\/api\/keys$/, body: ok([]) },
      { method: 'GET', url: /\/api\/webhooks$/, status: 403, body: fail('plan_required', 'Webhooks are part of the Pro plan and above; the Free plan cannot use them.') },
    ]);
    renderApp(<ProfilePage />, { path: '/profile', at: '/profile' });
    const s = await section();
    expect(await s.findByTestId('webhooks-plan-notice')).toBeInTheDocument();
    expect(s.queryByLabelText('Endpoint URL')).not.toBeInTheDocument();
  });
});
