import { afterEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { apiClient } from '../../src/lib/api-client';
import { storeAuth } from '../../src/lib/auth/storage';
import ProfilePage from '../../src/features/profile/components/ProfilePage';
import AdminPage from '../../src/features/admin/components/AdminPage';
import { curlExample, expiryFromDay, isKeyExpired, localDay, type ApiKey } from '../../src/features/profile/api';
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

function aKey(overrides: Partial<ApiKey> = {}): ApiKey {
  return {
    id: 'k1', name: 'Nightly import', prefix: 'sk_live_Ab12Cd', scopes: ['files:write', 'files:read'],
    createdAt: '2026-03-01T10:00:00Z', lastUsedAt: null, expiresAt: null, ...overrides,
  };
}
const expiredKey = aKey({ id: 'k2', name: 'Old laptop', prefix: 'sk_live_Zz99Yy', scopes: ['files:read'], lastUsedAt: '2026-03-02T08:00:00Z', expiresAt: '2026-03-03T00:00:00Z' });
const SECRET = 'sk_live_Ab12CdEfGhIjKlMnOpQrStUvWxYz0123456789';

function renderProfile(role: 'USER' | 'GUEST', keys: ApiKey[] = [aKey(), expiredKey], extra: Parameters<typeof serve>[0] = []) {
  const user = aUser({ role });
  storeAuth(user, tokens);
  serve([
    ...extra,
    { method: 'GET', url: /\/api\/auth\/profile$/, body: ok(user) },
    { method: 'GET', url: /\/api\/plans$/, body: ok(aPlanTable()) },
    { method: 'GET', url: /\/api\/keys$/, body: ok(keys) },
  ]);
  renderApp(<ProfilePage />, { path: '/profile', at: '/profile' });
}
const section = async () => within(await screen.findByTestId('api-keys-section'));

describe('API key helpers', () => {
  it('expires a key at the end of the chosen local day', () => {
    expect(expiryFromDay('2026-12-31')).toBe(new Date(2027, 0, 1).toISOString());
    expect(expiryFromDay('')).toBeUndefined();
    expect(expiryFromDay('31/12/2026')).toBeUndefined();
  });
  it('gives local calendar days for the date input', () => {
    expect(localDay(0, new Date(2026, 1, 28, 23, 30))).toBe('2026-02-28');
    expect(localDay(1, new Date(2026, 1, 28, 23, 30))).toBe('2026-03-01');
  });
  it('tells expired keys apart', () => {
    const now = Date.parse('2026-06-01T00:00:00Z');
    expect(isKeyExpired({ expiresAt: null }, now)).toBe(false);
    expect(isKeyExpired({ expiresAt: '2026-05-31T23:59:59Z' }, now)).toBe(true);
    expect(isKeyExpired({ expiresAt: '2026-06-01T00:00:01Z' }, now)).toBe(false);
  });
  it('builds the curl example on the given origin with the key in X-API-Key', () => {
    const text = curlExample('https://sanitas.example.org');
    expect(text).toContain('"https://sanitas.example.org/api/v1/sanitize"');
    expect(text).toContain('-H "X-API-Key: $SANITAS_API_KEY"');
    expect(text).toContain('-F "file=@');
  });
});

describe('profile: API keys', () => {
  it('lists the keys with prefix, scopes and dates, and marks the expired one', async () => {
    renderProfile('USER');
    const s = await section();
    const rows = await s.findAllByTestId('api-key-row');
    expect(rows).toHaveLength(2);
    expect(rows[0]).toHaveTextContent('Nightly import');
    expect(rows[0]).toHaveTextContent('sk_live_Ab12Cd…');
    expect(rows[0]).toHaveTextContent('files:write');
    expect(rows[0]).toHaveTextContent('files:read');
    expect(within(rows[0]).getByTestId('api-key-last-used')).toHaveTextContent('Never');
    expect(rows[0]).toHaveAttribute('data-expired', 'false');
    expect(within(rows[0]).queryByTestId('api-key-expired')).not.toBeInTheDocument();
    expect(rows[1]).toHaveAttribute('data-expired', 'true');
    expect(within(rows[1]).getByTestId('api-key-expired')).toHaveTextContent('Expired');
    expect(within(rows[1]).getByTestId('api-key-last-used')).not.toHaveTextContent('Never');
    // The usage example names this page's origin.
    expect(s.getByTestId('api-keys-how-to')).toHaveTextContent(`${window.location.origin}/api/v1/sanitize`);
  });

  it('creates a key with the chosen scopes and expiry, then shows its secret once and copies it', async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText } });
    const created = aKey({ id: 'k9', name: 'CI pipeline', scopes: ['files:write'] });
    renderProfile('USER', [], [{ method: 'POST', url: /\/api\/keys$/, status: 201, body: ok({ key: created, secret: SECRET }) }]);
    const s = await section();
    await s.findByTestId('api-keys-empty');
    await userEvent.type(s.getByLabelText('Key name'), '  CI pipeline ');
    await userEvent.click(s.getByRole('checkbox', { name: 'files:read' }));
    expect(s.getByRole('checkbox', { name: 'files:write' })).toBeChecked();
    expect(s.getByRole('checkbox', { name: 'files:write' })).toHaveAccessibleDescription(/Upload files and sanitize them/);
    fireEvent.change(s.getByLabelText('Expires on (optional)'), { target: { value: '2099-12-31' } });
    await userEvent.click(s.getByRole('button', { name: 'Create key' }));

    const panel = await s.findByTestId('new-api-key');
    const post = calls.find((c) => c.method === 'POST' && c.url === '/api/keys');
    expect(JSON.parse(String(post?.data))).toEqual({ name: 'CI pipeline', scopes: ['files:write'], expiresAt: new Date(2100, 0, 1).toISOString() });
    expect(within(panel).getByTestId('api-key-secret')).toHaveTextContent(SECRET);
    expect(panel).toHaveTextContent('you won’t see it again');
    expect(await screen.findByText('API key created')).toBeInTheDocument();
    // The form is reset for the next key.
    expect(s.getByLabelText('Key name')).toHaveValue('');
    expect(s.getByRole('checkbox', { name: 'files:read' })).toBeChecked();

    await userEvent.click(within(panel).getByRole('button', { name: 'Copy key' }));
    expect(writeText).toHaveBeenCalledWith(SECRET);
    expect(await within(panel).findByRole('button', { name: 'Copied' })).toBeInTheDocument();

    await userEvent.click(within(panel).getByRole('button', { name: 'I have saved it' }));
    expect(s.queryByTestId('new-api-key')).not.toBeInTheDocument();
    expect(screen.queryByText(SECRET)).not.toBeInTheDocument();
  });

  it('says so when the clipboard refuses', async () => {
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText: vi.fn().mockRejectedValue(new Error('denied')) } });
    renderProfile('USER', [], [{ method: 'POST', url: /\/api\/keys$/, status: 201, body: ok({ key: aKey(), secret: SECRET }) }]);
    const s = await section();
    await userEvent.type(s.getByLabelText('Key name'), 'x');
    await userEvent.click(s.getByRole('button', { name: 'Create key' }));
    await userEvent.click(within(await s.findByTestId('new-api-key')).getByRole('button', { name: 'Copy key' }));
    expect(await screen.findByText('Could not copy: select the key and copy it yourself')).toBeInTheDocument();
  });

  it('checks the name and scopes before calling the API', async () => {
    renderProfile('USER', []);
    const s = await section();
    await s.findByTestId('api-keys-empty');
    await userEvent.click(s.getByRole('button', { name: 'Create key' }));
    expect(await screen.findByText('Give the key a name')).toBeInTheDocument();
    await userEvent.type(s.getByLabelText('Key name'), 'Backup');
    await userEvent.click(s.getByRole('checkbox', { name: 'files:read' }));
    await userEvent.click(s.getByRole('checkbox', { name: 'files:write' }));
    await userEvent.click(s.getByRole('button', { name: 'Create key' }));
    expect(await screen.findByText('Choose at least one scope')).toBeInTheDocument();
    expect(calls.some((c) => c.method === 'POST')).toBe(false);
  });

  it('revokes a key only after confirming', async () => {
    renderProfile('USER', [aKey(), expiredKey], [{ method: 'DELETE', url: /\/api\/keys\/k2$/, body: ok({ id: 'k2' }, 'API key revoked') }]);
    const s = await section();
    const row = (await s.findAllByTestId('api-key-row'))[1];
    await userEvent.click(within(row).getByRole('button', { name: 'Revoke Old laptop' }));
    const confirm = within(row).getByRole('group', { name: 'Confirm revoking Old laptop' });
    await userEvent.click(within(confirm).getByRole('button', { name: 'Cancel' }));
    expect(calls.some((c) => c.method === 'DELETE')).toBe(false);
    await userEvent.click(within(row).getByRole('button', { name: 'Revoke Old laptop' }));
    await userEvent.click(within(row).getByRole('button', { name: 'Revoke key' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'DELETE' && c.url === '/api/keys/k2')).toBe(true));
    expect(await screen.findByText('API key revoked')).toBeInTheDocument();
    // The list is fetched again.
    await waitFor(() => expect(calls.filter((c) => c.method === 'GET' && c.url === '/api/keys')).toHaveLength(2));
  });

  it('shows the server’s reason when creating fails', async () => {
    renderProfile('USER', [], [{ method: 'POST', url: /\/api\/keys$/, status: 409, body: fail('too_many_keys', 'This account has 25 keys already.') }]);
    const s = await section();
    await userEvent.type(s.getByLabelText('Key name'), 'One more');
    await userEvent.click(s.getByRole('button', { name: 'Create key' }));
    expect(await screen.findByText('This account has 25 keys already.')).toBeInTheDocument();
    expect(s.queryByTestId('new-api-key')).not.toBeInTheDocument();
    expect(s.getByLabelText('Key name')).toHaveValue('One more');
  });

  it('tells a Free (GUEST) account that API access comes with Pro, with no form', async () => {
    renderProfile('GUEST');
    const s = await section();
    const notice = s.getByTestId('api-keys-plan-notice');
    await waitFor(() => expect(notice).toHaveTextContent('API access is part of the Pro plan'));
    expect(notice).toHaveTextContent('Your account is on the Free plan. Upgrade to Pro or Enterprise');
    expect(within(notice).getByRole('link', { name: 'See the plans' })).toHaveAttribute('href', '/pricing');
    expect(s.queryByLabelText('Key name')).not.toBeInTheDocument();
    await screen.findByDisplayValue('ada@example.org');
    expect(calls.some((c) => c.url === '/api/keys')).toBe(false);
  });

  it('switches to the plan notice when the server answers plan_required', async () => {
    renderProfile('USER', [], [{ method: 'POST', url: /\/api\/keys$/, status: 403, body: fail('plan_required', 'API access is part of the Pro plan and above.') }]);
    const s = await section();
    await userEvent.type(s.getByLabelText('Key name'), 'Script');
    await userEvent.click(s.getByRole('button', { name: 'Create key' }));
    expect(await s.findByTestId('api-keys-plan-notice')).toBeInTheDocument();
    expect(s.queryByLabelText('Key name')).not.toBeInTheDocument();
  });
});

describe('admin: a user’s API keys', () => {
  const ada = aUser({ id: 'u7', email: 'ada@example.org' });
  const usersPage = { users: [ada], pagination: { page: 1, limit: 10, total: 1, pages: 1, hasPrev: false, hasNext: false } };

  it('opens the panel from the Users tab and revokes a key after confirming', async () => {
    storeAuth(aUser({ id: 'a1', email: 'admin@example.org', role: 'ADMIN' }), tokens);
    serve([
      { method: 'GET', url: /\/api\/users$/, body: ok(usersPage) },
      { method: 'GET', url: /\/api\/users\/u7\/keys$/, body: ok([aKey(), expiredKey]) },
      { method: 'DELETE', url: /\/api\/users\/u7\/keys\/k1$/, body: ok({ id: 'k1' }) },
    ]);
    renderApp(<AdminPage />, { path: '/admin', at: '/admin' });
    await userEvent.click(await screen.findByRole('tab', { name: 'User Management' }));
    await userEvent.click(within(await screen.findByTestId('user-row-ada@example.org')).getByRole('button', { name: 'API keys of ada@example.org' }));
    const panel = await screen.findByRole('dialog', { name: 'API keys of ada@example.org' });
    const rows = await within(panel).findAllByTestId('api-key-row');
    expect(rows).toHaveLength(2);
    expect(rows[1]).toHaveAttribute('data-expired', 'true');
    await userEvent.click(within(rows[0]).getByRole('button', { name: 'Revoke Nightly import' }));
    expect(rows[0]).toHaveTextContent('Revoke ada@example.org’s key “Nightly import”?');
    await userEvent.click(within(rows[0]).getByRole('button', { name: 'Revoke key' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'DELETE' && c.url === '/api/users/u7/keys/k1')).toBe(true));
    expect(await screen.findByText('API key revoked: Nightly import')).toBeInTheDocument();
    await waitFor(() => expect(calls.filter((c) => c.url === '/api/users/u7/keys')).toHaveLength(2));
    await userEvent.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('says when the user has no keys', async () => {
    storeAuth(aUser({ id: 'a1', email: 'admin@example.org', role: 'ADMIN' }), tokens);
    serve([
      { method: 'GET', url: /\/api\/users$/, body: ok(usersPage) },
      { method: 'GET', url: /\/api\/users\/u7\/keys$/, body: ok([]) },
    ]);
    renderApp(<AdminPage />, { path: '/admin', at: '/admin' });
    await userEvent.click(await screen.findByRole('tab', { name: 'User Management' }));
    await userEvent.click(within(await screen.findByTestId('user-row-ada@example.org')).getByRole('button', { name: 'API keys of ada@example.org' }));
    const panel = await screen.findByRole('dialog');
    expect(await within(panel).findByTestId('api-keys-empty')).toHaveTextContent('This user has no API keys.');
    await userEvent.click(within(panel).getByRole('button', { name: 'Close' }));
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });
});
