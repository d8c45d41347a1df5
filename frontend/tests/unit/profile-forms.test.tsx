import { afterEach, describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { apiClient } from '../../src/lib/api-client';
import { storeAuth } from '../../src/lib/auth/storage';
import ProfilePage from '../../src/features/profile/components/ProfilePage';
import { calls, renderApp, serve, type Route_ } from './harness';
import { aPlanTable, aUser } from './fixtures';

const adapter = apiClient.defaults.adapter;
afterEach(() => { apiClient.defaults.adapter = adapter; });

const ok = (data: unknown, message = 'ok') => ({ success: true, message, data });
const invalid = (fields: { field: string | null; message: string }[], message = 'Invalid request: ...') => ({
  success: false, message, error: 'validation_error', fields: fields.map((f) => ({ code: 'invalid', ...f })),
});

function renderProfile(extra: Route_[] = []) {
  const user = aUser({ role: 'GUEST', firstName: 'Ada', lastName: 'Lovelace' });
  storeAuth(user, { accessToken: 'tok', refreshToken: 'ref', expiresIn: 900 });
  serve([
    ...extra,
    { method: 'GET', url: /\/api\/auth\/profile$/, body: ok(user) },
    { method: 'GET', url: /\/api\/plans$/, body: ok(aPlanTable()) },
  ]);
  renderApp(<ProfilePage />, { path: '/profile', at: '/profile' });
}

/** The input's own message: under it, and what aria-describedby points to. */
function expectFieldError(input: HTMLElement, message: string) {
  expect(input).toHaveAttribute('aria-invalid', 'true');
  const ids = (input.getAttribute('aria-describedby') ?? '').split(' ');
  expect(ids.map((id) => document.getElementById(id)?.textContent)).toContain(message);
}
const toasts = () => document.querySelector('.Toastify')?.textContent ?? '';
const sent = (url: RegExp) => calls.filter((c) => c.method === 'PUT' && url.test(c.url));

describe('profile: personal information', () => {
  const form = async () => within(await screen.findByTestId('profile-form'));

  it('shows the server’s field error under the name it refuses, and no raw summary', async () => {
    renderProfile([{ method: 'PUT', url: /\/api\/auth\/profile$/, status: 422,
      body: invalid([{ field: 'lastName', message: 'Must be at most 100 characters.' }], 'Invalid request: lastName: String should have at most 100 characters') }]);
    const f = await form();
    await waitFor(() => expect(f.getByLabelText('Last name')).toHaveValue('Lovelace'));
    await userEvent.type(f.getByLabelText('Last name'), ' Byron');
    await userEvent.click(f.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expectFieldError(f.getByLabelText('Last name'), 'Must be at most 100 characters.'));
    expect(f.getByLabelText('First name')).not.toHaveAttribute('aria-invalid');
    expect(screen.queryByText(/Invalid request/)).not.toBeInTheDocument();
    expect(toasts()).not.toMatch(/Failed to update profile|at most/);
  });

  it('checks the length itself before sending', async () => {
    renderProfile();
    const f = await form();
    await waitFor(() => expect(f.getByLabelText('First name')).toHaveValue('Ada'));
    const input = f.getByLabelText('First name');
    await userEvent.clear(input);
    await userEvent.click(input);
    await userEvent.paste('A'.repeat(101));
    await userEvent.click(f.getByRole('button', { name: 'Save changes' }));
    expectFieldError(input, 'Must be at most 100 characters.');
    expect(sent(/\/api\/auth\/profile$/)).toHaveLength(0);
  });

  it('puts an error without fields at the top of the form; success is a toast and clears it', async () => {
    let fail = true;
    renderProfile([{ method: 'PUT', url: /\/api\/auth\/profile$/, get status() { return fail ? 503 : 200; },
      get body() { return fail ? { success: false, message: 'The database is busy; try again.', error: 'service_unavailable' } : ok(aUser({ firstName: 'Augusta' })); } }]);
    const f = await form();
    await waitFor(() => expect(f.getByLabelText('First name')).toHaveValue('Ada'));
    await userEvent.clear(f.getByLabelText('First name'));
    await userEvent.type(f.getByLabelText('First name'), 'Augusta');
    await userEvent.click(f.getByRole('button', { name: 'Save changes' }));
    expect(await f.findByTestId('form-alert')).toHaveTextContent('The database is busy; try again.');
    fail = false;
    await userEvent.click(f.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(toasts()).toContain('Profile updated successfully'));
    expect(f.queryByTestId('form-alert')).not.toBeInTheDocument();
  });
});

describe('profile: change password', () => {
  const form = async () => within(await screen.findByTestId('password-form'));
  const fill = async (f: Awaited<ReturnType<typeof form>>, current: string, next: string, confirm = next) => {
    if (current) await userEvent.type(f.getByLabelText('Current password'), current);
    if (next) await userEvent.type(f.getByLabelText('New password'), next);
    if (confirm) await userEvent.type(f.getByLabelText('Confirm new password'), confirm);
    await userEvent.click(f.getByRole('button', { name: 'Update password' }));
  };

  it('marks each missing field and says the SPEC’s sentence at the top, without sending', async () => {
    renderProfile();
    const f = await form();
    await fill(f, 'old-password', '', '');
    expect(f.getByTestId('form-alert')).toHaveTextContent('Please fill in all password fields');
    expectFieldError(f.getByLabelText('New password'), 'This field is required.');
    expectFieldError(f.getByLabelText('Confirm new password'), 'This field is required.');
    expect(f.getByLabelText('Current password')).not.toHaveAttribute('aria-invalid');
    expect(sent(/\/api\/auth\/password$/)).toHaveLength(0);
    expect(toasts()).not.toContain('Please fill in all password fields');
  });

  it('puts a mismatch under the confirmation and a short password under the new one', async () => {
    renderProfile();
    const f = await form();
    await fill(f, 'old-password', 'new-password-1', 'new-password-2');
    expectFieldError(f.getByLabelText('Confirm new password'), 'New passwords do not match');
    expect(f.getByLabelText('New password')).not.toHaveAttribute('aria-invalid');
    await userEvent.clear(f.getByLabelText('New password'));
    await userEvent.clear(f.getByLabelText('Confirm new password'));
    await fill(f, '', 'short', 'short');
    expectFieldError(f.getByLabelText('New password'), 'New password must be at least 8 characters');
    // The hint stays described too.
    expect(f.getByLabelText('New password').getAttribute('aria-describedby')).toContain('new-pw-hint');
    expect(f.getByLabelText('Confirm new password')).not.toHaveAttribute('aria-invalid');
    expect(sent(/\/api\/auth\/password$/)).toHaveLength(0);
  });

  it('shows a wrong current password under that field', async () => {
    renderProfile([{ method: 'PUT', url: /\/api\/auth\/password$/, status: 400,
      body: { success: false, message: 'Current password is incorrect', error: 'wrong_password' } }]);
    const f = await form();
    await fill(f, 'not-my-password', 'new-password-1');
    await waitFor(() => expectFieldError(f.getByLabelText('Current password'), 'Current password is incorrect'));
    expect(f.queryByTestId('form-alert')).not.toBeInTheDocument();
    expect(toasts()).not.toContain('Current password is incorrect');
  });

  it('shows the server’s field error under the new password', async () => {
    renderProfile([{ method: 'PUT', url: /\/api\/auth\/password$/, status: 422,
      body: invalid([{ field: 'newPassword', message: 'Must be at most 256 characters.' }]) }]);
    const f = await form();
    await fill(f, 'old-password', 'new-password-1');
    await waitFor(() => expectFieldError(f.getByLabelText('New password'), 'Must be at most 256 characters.'));
    expect(screen.queryByText(/Invalid request/)).not.toBeInTheDocument();
  });

  it('announces the change with a toast and empties the form', async () => {
    renderProfile([{ method: 'PUT', url: /\/api\/auth\/password$/, body: ok(null, 'Password updated') }]);
    const f = await form();
    await fill(f, 'old-password', 'new-password-1');
    await waitFor(() => expect(toasts()).toContain('Password updated successfully'));
    expect(f.getByLabelText('Current password')).toHaveValue('');
    expect(JSON.parse(String(sent(/\/api\/auth\/password$/)[0].data))).toEqual({ currentPassword: 'old-password', newPassword: 'new-password-1' });
  });
});
