import { afterEach, describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { apiClient } from '../../src/lib/api-client';
import { storeAuth } from '../../src/lib/auth/storage';
import AdminPage from '../../src/features/admin/components/AdminPage';
import type { HeldMessage } from '../../src/features/admin/api';
import { calls, renderApp, serve } from './harness';
import { aUser } from './fixtures';

const adapter = apiClient.defaults.adapter;
afterEach(() => { apiClient.defaults.adapter = adapter; });

const admin = aUser({ id: 'a1', email: 'admin@example.org', role: 'ADMIN' });
const tokens = { accessToken: 'tok', refreshToken: 'ref', expiresIn: 900 };
const ok = (data: unknown, message = 'ok') => ({ success: true, message, data });

function aMessage(overrides: Partial<HeldMessage> = {}): HeldMessage {
  return {
    id: 'm1', createdAt: '2026-11-27T10:00:00Z', updatedAt: '2026-11-27T10:00:02Z', messageId: '<q1@example.org>',
    sender: 'alice@example.org', recipients: ['bob@example.net', 'carol@example.net'], subject: 'Quarterly figures',
    size: 43_000, status: 'delivered', verdict: 'partial', verdictCounts: null, summary: '3 threats removed, 1 file dropped: tool.exe',
    attachments: [
      { name: 'macro.docm', deliveredAs: 'macro.docx', verdict: 'cleaned', summary: '2 threats removed' },
      { name: 'tool.exe', deliveredAs: 'tool.removed.txt', verdict: 'refused', summary: 'Removed: Files of type .exe are executables' },
    ],
    reason: null, refusedRecipients: [], policyId: 'basic', attempts: 1, duration: 2.6, originalKept: true,
    expiresAt: '2026-12-11T10:00:00Z', releasedAt: null, releasedBy: null, ...overrides,
  };
}
const page = (messages: HeldMessage[]) => ({
  messages, pagination: { page: 1, limit: 20, total: messages.length, pages: 1, hasPrev: false, hasNext: false },
});

async function openTab() {
  storeAuth(admin, tokens);
  renderApp(<AdminPage />, { path: '/admin', at: '/admin' });
  await userEvent.click(await screen.findByRole('tab', { name: 'Mail' }));
}

describe('admin mail tab', () => {
  it('lists held messages with their attachments and verdicts', async () => {
    serve([{ method: 'GET', url: /\/api\/admin\/mail\/held$/, body: ok(page([aMessage(), aMessage({ id: 'm2', status: 'refused', verdict: 'refused', reason: 'The message has more than 500 parts.', attachments: [], originalKept: false, subject: null })])) }]);
    await openTab();
    const cards = await screen.findAllByTestId('held-message');
    expect(cards).toHaveLength(2);
    expect(cards[0]).toHaveTextContent('Quarterly figures');
    expect(cards[0]).toHaveTextContent('alice@example.org');
    expect(cards[0]).toHaveTextContent('bob@example.net, carol@example.net');
    const attachments = within(cards[0]).getAllByTestId('held-attachment');
    expect(attachments[1]).toHaveTextContent('tool.exe');
    expect(within(attachments[1]).getByTestId('verdict-badge')).toHaveAttribute('data-verdict', 'refused');
    expect(cards[1]).toHaveTextContent('(no subject)');
    expect(cards[1]).toHaveTextContent('The message has more than 500 parts.');
    expect(cards[1]).toHaveTextContent('The original is no longer kept.');
    expect(within(cards[1]).queryByRole('button', { name: /Release/ })).toBeNull();
  });

  it('releases an original only after confirmation, then reads the list again', async () => {
    serve([
      { method: 'GET', url: /\/api\/admin\/mail\/held$/, body: ok(page([aMessage()])) },
      { method: 'POST', url: /\/api\/admin\/mail\/held\/m1\/release$/, body: ok(aMessage({ status: 'released', releasedBy: 'admin@example.org', releasedAt: '2026-11-27T11:00:00Z' })) },
    ]);
    await openTab();
    await userEvent.click(await screen.findByRole('button', { name: 'Release original…' }));
    expect(calls.filter((c) => c.method === 'POST')).toHaveLength(0);
    expect(screen.getByText('Send the original, uncleaned, to its recipients?')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Release original' }));
    await waitFor(() => expect(calls.filter((c) => c.method === 'POST' && c.url === '/api/admin/mail/held/m1/release')).toHaveLength(1));
    expect(await screen.findByText('The original was released to 2 recipient(s)')).toBeInTheDocument();
    await waitFor(() => expect(calls.filter((c) => c.method === 'GET' && c.url === '/api/admin/mail/held').length).toBeGreaterThan(1));
  });

  it('shows the server’s refusal of a release', async () => {
    serve([
      { method: 'GET', url: /\/api\/admin\/mail\/held$/, body: ok(page([aMessage()])) },
      { method: 'POST', url: /\/release$/, status: 502, body: { success: false, message: 'The original could not be re-injected: the next hop 127.0.0.1:10026 could not be reached', error: 'next_hop_failed' } },
    ]);
    await openTab();
    await userEvent.click(await screen.findByRole('button', { name: 'Release original…' }));
    await userEvent.click(screen.getByRole('button', { name: 'Release original' }));
    expect(await screen.findByText(/could not be reached/)).toBeInTheDocument();
  });

  it('filters by status', async () => {
    serve([{ method: 'GET', url: /\/api\/admin\/mail\/held$/, body: ok(page([])) }]);
    await openTab();
    expect(await screen.findByText('No messages have been filtered yet.')).toBeInTheDocument();
    await userEvent.selectOptions(screen.getByLabelText('Status'), 'refused');
    await waitFor(() => expect(calls.length).toBeGreaterThan(1));
  });
});
