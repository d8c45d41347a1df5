import { afterEach, describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { apiClient } from '../../src/lib/api-client';
import { storeAuth } from '../../src/lib/auth/storage';
import AdminPage from '../../src/features/admin/components/AdminPage';
import { calls, renderApp, serve } from './harness';
import { aUser } from './fixtures';

const adapter = apiClient.defaults.adapter;
afterEach(() => { apiClient.defaults.adapter = adapter; });

const tokens = { accessToken: 'tok', refreshToken: 'ref', expiresIn: 900 };
const ok = (data: unknown) => ({ success: true, message: 'ok', data });
const ada = aUser({ id: 'u7', email: 'ada@example.org', role: 'USER', isActive: true });
const usersPage = { users: [ada], pagination: { page: 1, limit: 10, total: 1, pages: 1, hasPrev: false, hasNext: false } };
const writes = () => calls.filter((c) => c.method !== 'GET');

async function usersTab() {
  storeAuth(aUser({ id: 'a1', email: 'admin@example.org', role: 'ADMIN' }), tokens);
  serve([
    { method: 'GET', url: /\/api\/users$/, body: ok(usersPage) },
    { method: 'PUT', url: /\/api\/users\/u7$/, body: ok(null) },
    { method: 'POST', url: /\/api\/usage\/reset-quota\/u7$/, body: ok(null) },
  ]);
  renderApp(<AdminPage />, { path: '/admin', at: '/admin' });
  await userEvent.click(await screen.findByRole('tab', { name: 'User Management' }));
  return screen.findByTestId('user-row-ada@example.org');
}

describe('admin users: changes only on an explicit, confirmed choice', () => {
  it('an arrow key in the focused role select sends nothing; Change and the confirmation do', async () => {
    const row = await usersTab();
    const select = within(row).getByLabelText('Role of ada@example.org');
    select.focus();
    await userEvent.keyboard('{ArrowDown}');
    await userEvent.selectOptions(select, 'ENTERPRISE');
    expect(writes()).toHaveLength(0);
    await userEvent.click(within(row).getByRole('button', { name: 'Change role of ada@example.org' }));
    const dialog = screen.getByRole('alertdialog', { name: 'Change the role?' });
    expect(dialog).toHaveTextContent('from USER to ENTERPRISE');
    expect(writes()).toHaveLength(0);
    await userEvent.click(within(dialog).getByRole('button', { name: 'Change role' }));
    await waitFor(() => expect(writes()).toHaveLength(1));
    expect(writes()[0]).toMatchObject({ method: 'PUT', url: '/api/users/u7' });
    expect(JSON.parse(writes()[0].data as string)).toEqual({ role: 'ENTERPRISE' });
    expect(await screen.findByText('User role updated successfully')).toBeInTheDocument();
  });

  it('deactivation asks first; Cancel (focused first) and Escape change nothing and give focus back', async () => {
    const row = await usersTab();
    const deactivate = within(row).getByRole('button', { name: 'Deactivate ada@example.org' });
    await userEvent.click(deactivate);
    let dialog = screen.getByRole('alertdialog', { name: 'Deactivate the user?' });
    expect(within(dialog).getByRole('button', { name: 'Cancel' })).toHaveFocus();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument();
    expect(deactivate).toHaveFocus();
    await userEvent.click(deactivate);
    await userEvent.keyboard('{Escape}');
    expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument();
    expect(deactivate).toHaveFocus();
    expect(writes()).toHaveLength(0);
    await userEvent.click(deactivate);
    dialog = screen.getByRole('alertdialog', { name: 'Deactivate the user?' });
    await userEvent.click(within(dialog).getByRole('button', { name: 'Deactivate user' }));
    await waitFor(() => expect(writes()).toHaveLength(1));
    expect(JSON.parse(writes()[0].data as string)).toEqual({ isActive: false });
  });

  it('quota reset asks first, and Tab stays inside the question', async () => {
    const row = await usersTab();
    await userEvent.click(within(row).getByRole('button', { name: 'Reset quota of ada@example.org' }));
    const dialog = screen.getByRole('alertdialog', { name: 'Reset the quota?' });
    for (let i = 0; i < 4; i++) {
      await userEvent.tab();
      expect(dialog).toContainElement(document.activeElement as HTMLElement);
    }
    await userEvent.tab({ shift: true });
    expect(dialog).toContainElement(document.activeElement as HTMLElement);
    expect(writes()).toHaveLength(0);
    await userEvent.click(within(dialog).getByRole('button', { name: 'Reset quota' }));
    await waitFor(() => expect(writes()).toMatchObject([{ method: 'POST', url: '/api/usage/reset-quota/u7' }]));
    expect(await screen.findByText('User quota reset successfully')).toBeInTheDocument();
  });
});

describe('side panels', () => {
  it('keep focus inside and return it to the button that opened them', async () => {
    storeAuth(aUser({ id: 'a1', email: 'admin@example.org', role: 'ADMIN' }), tokens);
    serve([
      { method: 'GET', url: /\/api\/users$/, body: ok(usersPage) },
      { method: 'GET', url: /\/api\/users\/u7\/keys$/, body: ok([]) },
    ]);
    renderApp(<AdminPage />, { path: '/admin', at: '/admin' });
    await userEvent.click(await screen.findByRole('tab', { name: 'User Management' }));
    const opener = within(await screen.findByTestId('user-row-ada@example.org')).getByRole('button', { name: 'API keys of ada@example.org' });
    await userEvent.click(opener);
    const panel = await screen.findByRole('dialog', { name: 'API keys of ada@example.org' });
    expect(within(panel).getByRole('button', { name: 'Close' })).toHaveFocus();
    expect(document.body.dataset.modalOpen).toBe('true');
    for (let i = 0; i < 3; i++) {
      await userEvent.tab();
      expect(panel).toContainElement(document.activeElement as HTMLElement);
    }
    await userEvent.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(opener).toHaveFocus();
    expect(document.body.dataset.modalOpen).toBeUndefined();
  });
});
