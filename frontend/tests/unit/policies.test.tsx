import { afterEach, describe, expect, it, vi } from 'vitest';
import { AxiosError, type AxiosAdapter } from 'axios';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { apiClient, ApiError } from '../../src/lib/api-client';
import { storeAuth } from '../../src/lib/auth/storage';
import { Header } from '../../src/components/Header';
import PoliciesPage from '../../src/features/policies/components/PoliciesPage';
import UploadPage from '../../src/features/upload/components/UploadPage';
import StatusPage from '../../src/features/files/components/StatusPage';
import { RULES, fieldErrors, previewPolicy, usablePolicies, type Policy, type RecentFile, type RuleActions } from '../../src/features/policies/api';
import type { Role } from '../../src/lib/types';
import { calls, renderApp, serve } from './harness';
import { aUser } from './fixtures';

const adapter = apiClient.defaults.adapter;
afterEach(() => { apiClient.defaults.adapter = adapter; });

const tokens = { accessToken: 'tok', refreshToken: 'ref', expiresIn: 900 };
const ok = (data: unknown, message = 'ok') => ({ success: true, message, data });
const enterprise = aUser({ id: 'e1', email: 'erin@example.org', role: 'ENTERPRISE' });

const basicRules: RuleActions = {
  macros: 'remove', javascript: 'remove', embeddedFiles: 'remove', externalReferences: 'remove', hyperlinks: 'keep',
  reviewData: 'remove', documentMetadata: 'remove', imageMetadata: 'remove', hiddenContent: 'keep', formFields: 'keep',
  coverArt: 'remove', chapters: 'remove', encryptedContent: 'hold',
};
function aPolicy(overrides: Partial<Policy> = {}): Policy {
  return {
    id: 'basic', name: 'Basic', description: null, builtIn: true, scope: 'organisation', ownerId: null, version: 1,
    rules: basicRules, allowedTypes: null, output: 'same', maxPages: null, createdAt: null, updatedAt: null, ...overrides,
  };
}
const basic = aPolicy();
const advanced = aPolicy({ id: 'advanced', name: 'Advanced', output: 'pdf' });
const orgWide = aPolicy({ id: 'p-org', name: 'Legal team', builtIn: false, scope: 'organisation', version: 3 });
const mine = aPolicy({ id: 'p-mine', name: 'No links', builtIn: false, scope: 'personal', ownerId: 'e1', version: 2, rules: { ...basicRules, hyperlinks: 'remove' } });

describe('policy rules and errors', () => {
  it('offers each rule exactly the actions the API allows', () => {
    expect(RULES.macros.actions).not.toContain('keep');
    expect(RULES.javascript.actions).not.toContain('keep');
    for (const [rule, info] of Object.entries(RULES)) {
      expect(info.actions.includes('sanitize' as never)).toBe(rule === 'embeddedFiles');
      expect(info.actions.includes('anonymise' as never)).toBe(rule === 'reviewData');
      expect(info.risk.length).toBeGreaterThan(10);
    }
  });

  it('splits a 422 message into field errors', () => {
    const error = new ApiError('API Error', 'api', {
      status: 422, serverMessage: "Invalid request: rules.macros: Input should be 'refuse' or 'remove'; name: String should have at least 1 character; foo: Extra inputs are not permitted",
    });
    expect(fieldErrors(error)).toEqual({
      'rules.macros': "Input should be 'refuse' or 'remove'",
      name: 'String should have at least 1 character',
      form: 'foo: Extra inputs are not permitted',
    });
    expect(fieldErrors(new ApiError('x', 'api', { status: 403, serverMessage: 'no' }))).toEqual({});
  });

  it('uses the 422’s named fields, in plain words, when the server sends them', () => {
    const error = new ApiError('API Error', 'api', {
      status: 422, serverMessage: 'Invalid request: name: String should have at least 1 character; maxPages: ...',
      fields: [{ field: 'name', message: 'This field is required.', code: 'too_short' },
        { field: 'maxPages', message: 'Must be at least 1.', code: 'greater_than_equal' },
        { field: 'rules.coverArt', message: 'Must be one of remove, keep, refuse.', code: 'enum' }],
    });
    expect(fieldErrors(error)).toEqual({
      name: 'This field is required.', maxPages: 'Must be at least 1.', 'rules.coverArt': 'Must be one of remove, keep, refuse.',
    });
  });

  it('keeps only the policies the plan can use', () => {
    expect(usablePolicies([basic, advanced, orgWide, aPolicy({ id: 'px', builtIn: false, output: 'pdf+ocr' })], ['basic']).map((p) => p.id))
      .toEqual(['basic', 'p-org']);
  });

  it('previews a policy over recent findings, per rule', () => {
    const recent: RecentFile[] = [
      { id: 'f1', name: 'a.docx', kinds: { hyperlink: 3, macro: 1, structure: 2 } },
      { id: 'f2', name: 'b.pdf', kinds: { hyperlink: 1 } },
    ];
    const ruleOfKind = { hyperlink: ['hyperlinks'], macro: ['macros'], structure: [] } as const;
    const keep = previewPolicy(basicRules, recent, ruleOfKind);
    expect(keep.rules.hyperlinks).toEqual({ removed: 0, kept: 4, refusedFiles: 0 });
    expect(keep.rules.macros).toEqual({ removed: 1, kept: 0, refusedFiles: 0 });
    expect(keep.kinds.find((k) => k.kind === 'structure')).toMatchObject({ rule: null, outcome: null, count: 2 });
    const refuse = previewPolicy({ ...basicRules, hyperlinks: 'refuse' }, recent, ruleOfKind);
    expect(refuse.rules.hyperlinks).toEqual({ removed: 0, kept: 0, refusedFiles: 2 });
    expect(refuse.refusedFiles).toBe(2);
  });
});

describe('navigation', () => {
  it.each<[Role, boolean]>([['GUEST', false], ['USER', false], ['ENTERPRISE', true], ['ADMIN', true]])(
    '%s sees Policies and Reports: %s', async (role, visible) => {
      storeAuth(aUser({ role }), tokens);
      serve([]);
      renderApp(<Header />);
      await screen.findAllByRole('link', { name: 'Upload' });
      expect(screen.queryAllByRole('link', { name: 'Policies' }).length > 0).toBe(visible);
      expect(screen.queryAllByRole('link', { name: 'Reports' }).length > 0).toBe(visible);
    });
});

describe('policies page', () => {
  const listRoute = { method: 'GET', url: /\/api\/policies$/, body: ok([basic, advanced, orgWide, mine]) };
  const historyRoute = {
    method: 'GET', url: /\/api\/users\/e1\/files$/,
    body: ok({ files: [{ id: 'f1', originalName: 'memo.docx', originalSize: 10, status: 'COMPLETED', downloadCount: 0, isExpired: false }],
      stats: { total: 1, completed: 1, processing: 0, pending: 0, failed: 0 },
      pagination: { page: 1, limit: 10, total: 1, pages: 1, hasPrev: false, hasNext: false } }),
  };
  const kindsRoute = { method: 'GET', url: /\/api\/policies\/kinds$/,
    body: ok({ kinds: { hyperlink: ['hyperlinks'], macro: ['macros'], structure: [] } }) };
  const statusRoute = {
    method: 'GET', url: /\/api\/process\/status\/f1$/,
    body: ok({ file: { id: 'f1', originalName: 'memo.docx', originalSize: 10, status: 'COMPLETED', downloadCount: 0, isExpired: false,
      report: { findings: [{ kind: 'hyperlink', location: 'word/document.xml', action: 'kept' }, { kind: 'hyperlink', location: 'x', action: 'kept' }, { kind: 'structure', location: 'x', action: 'repaired' }] } } }),
  };

  it('refuses accounts whose plan has no policy authoring', async () => {
    storeAuth(aUser({ role: 'USER' }), tokens);
    serve([listRoute]);
    renderApp(<PoliciesPage />, { path: '/policies', at: '/policies' });
    expect(await screen.findByText('Custom policies are not part of your plan.')).toBeInTheDocument();
    expect(calls.some((c) => c.url === '/api/policies')).toBe(false);
  });

  it('marks built-in and organisation-wide policies and lets the owner edit only its own', async () => {
    storeAuth(enterprise, tokens);
    serve([listRoute, kindsRoute, historyRoute, statusRoute]);
    renderApp(<PoliciesPage />, { path: '/policies', at: '/policies' });
    const rows = await screen.findAllByTestId('policy-row');
    expect(rows).toHaveLength(4);
    expect(within(rows[0]).getByText('Built-in')).toBeInTheDocument();
    expect(within(rows[2]).getByText('Organisation-wide')).toBeInTheDocument();
    expect(within(rows[0]).queryByRole('button', { name: /Edit/ })).not.toBeInTheDocument();
    expect(within(rows[2]).queryByRole('button', { name: /Edit/ })).not.toBeInTheDocument();
    expect(within(rows[3]).getByRole('button', { name: 'Edit No links' })).toBeInTheDocument();
    expect(within(rows[0]).getByRole('button', { name: 'Duplicate Basic' })).toBeInTheDocument();
    expect(screen.queryByText('Default policy of each role')).not.toBeInTheDocument();
  });

  it('duplicates any policy and deletes an own one after confirmation', async () => {
    storeAuth(enterprise, tokens);
    serve([
      listRoute, historyRoute, statusRoute,
      { method: 'POST', url: /\/api\/policies\/basic\/duplicate$/, status: 201, body: ok(aPolicy({ id: 'p-copy', name: 'Basic (copy)', builtIn: false, scope: 'personal', ownerId: 'e1' })) },
      { method: 'DELETE', url: /\/api\/policies\/p-mine$/, body: ok({ id: 'p-mine' }) },
    ]);
    const confirm = vi.spyOn(window, 'confirm').mockReturnValueOnce(false).mockReturnValueOnce(true);
    renderApp(<PoliciesPage />, { path: '/policies', at: '/policies' });
    await userEvent.click(await screen.findByRole('button', { name: 'Duplicate Basic' }));
    expect(await screen.findByText('Duplicated as “Basic (copy)”')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Delete No links' }));
    expect(calls.some((c) => c.method === 'DELETE')).toBe(false);
    await userEvent.click(screen.getByRole('button', { name: 'Delete No links' }));
    expect(await screen.findByText('Policy deleted')).toBeInTheDocument();
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.url)).toEqual(['/api/policies/p-mine']);
    expect(confirm).toHaveBeenCalledTimes(2);
    confirm.mockRestore();
  });

  it('creates a policy, shows the API’s field errors next to their fields, and previews it', async () => {
    storeAuth(enterprise, tokens);
    let attempt = 0;
    serve([listRoute, kindsRoute, historyRoute, statusRoute]);
    const answer = apiClient.defaults.adapter as AxiosAdapter;
    apiClient.defaults.adapter = async (config) => {
      if (config.method === 'post' && config.url === '/api/policies') {
        attempt += 1;
        if (attempt === 1) {
          throw new AxiosError('fail', 'ERR_BAD_RESPONSE', config, {}, {
            data: { success: false, message: 'Invalid policy: rules.hyperlinks: not allowed here; name: already taken', error: 'validation_error' },
            status: 422, statusText: '', headers: {}, config,
          });
        }
        calls.push({ method: 'POST', url: config.url, data: config.data });
        return { data: ok(mine), status: 201, statusText: '', headers: {}, config };
      }
      return answer(config);
    };
    renderApp(<PoliciesPage />, { path: '/policies', at: '/policies' });
    await userEvent.click(await screen.findByRole('button', { name: 'New policy' }));

    const macros = screen.getByRole('group', { name: 'Macros and scripts' });
    expect(within(macros).getAllByRole('radio').map((r) => (r as HTMLInputElement).value)).toEqual(['remove', 'refuse']);
    const embedded = screen.getByRole('group', { name: 'Embedded files and OLE objects' });
    expect(within(embedded).getByRole('radio', { name: 'Sanitize inside' })).toBeInTheDocument();
    const review = screen.getByRole('group', { name: 'Comments and tracked changes' });
    expect(within(review).getByRole('radio', { name: 'Keep, authors anonymised' })).toBeInTheDocument();
    expect(screen.queryByLabelText(/Organisation-wide/)).not.toBeInTheDocument();

    // The preview follows the rules as they change: hyperlinks kept by basic, then refused.
    const preview = await screen.findByTestId('policy-preview');
    await waitFor(() => expect(within(preview).getByTestId('preview-rule-hyperlinks')).toHaveTextContent('Hyperlinks020'));
    expect(within(preview).getByTestId('preview-kind-structure')).toHaveTextContent('no policy rule decides this');
    const links = screen.getByRole('group', { name: 'Hyperlinks' });
    await userEvent.click(within(links).getByRole('radio', { name: 'Refuse the file' }));
    expect(within(preview).getByTestId('preview-summary')).toHaveTextContent('1 of 1 files would have been refused.');
    await userEvent.click(within(links).getByRole('radio', { name: 'Remove' }));

    await userEvent.type(screen.getByLabelText('Name'), 'No links');
    await userEvent.type(screen.getByLabelText('Allowed input types'), 'pdf, docx');
    await userEvent.click(screen.getByRole('button', { name: 'Save policy' }));
    expect(await screen.findByTestId('error-rules.hyperlinks')).toHaveTextContent('not allowed here');
    expect(screen.getByTestId('error-name')).toHaveTextContent('already taken');
    expect(screen.getByLabelText('Name')).toHaveAttribute('aria-invalid', 'true');

    await userEvent.click(screen.getByRole('button', { name: 'Save policy' }));
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Save policy' })).not.toBeInTheDocument());
    const sent = JSON.parse(calls.find((c) => c.method === 'POST')!.data as string) as Record<string, unknown>;
    expect(sent).toMatchObject({ name: 'No links', allowedTypes: ['pdf', 'docx'], output: 'same', maxPages: null, scope: 'personal', description: null });
    expect((sent.rules as RuleActions).hyperlinks).toBe('remove');
    expect((sent.rules as RuleActions).macros).toBe('remove');
  });

  it('lets an admin publish organisation-wide and change a role’s default', async () => {
    storeAuth(aUser({ id: 'a1', role: 'ADMIN' }), tokens);
    serve([
      listRoute, { method: 'GET', url: /\/api\/users\/a1\/files$/, body: historyRoute.body },
      { method: 'GET', url: /\/api\/policies\/defaults$/, body: ok({ GUEST: 'basic', USER: 'basic', ENTERPRISE: 'basic', ADMIN: 'advanced' }) },
      { method: 'PUT', url: /\/api\/policies\/defaults$/, body: ok({ GUEST: 'basic', USER: 'p-org', ENTERPRISE: 'basic', ADMIN: 'advanced' }) },
    ]);
    renderApp(<PoliciesPage />, { path: '/policies', at: '/policies' });
    const rows = await screen.findAllByTestId('policy-row');
    expect(within(rows[2]).getByRole('button', { name: 'Edit Legal team' })).toBeInTheDocument();
    const userDefault = await screen.findByLabelText('USER');
    expect(within(userDefault).getAllByRole('option').map((o) => o.textContent)).toEqual(['Basic', 'Advanced', 'Legal team']);
    await userEvent.selectOptions(userDefault, 'p-org');
    await userEvent.click(screen.getByRole('button', { name: 'Save defaults' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    expect(JSON.parse(calls.find((c) => c.method === 'PUT')!.data as string)).toEqual({ USER: 'p-org' });
    await userEvent.click(screen.getByRole('button', { name: 'New policy' }));
    expect(screen.getByLabelText(/Organisation-wide/)).not.toBeChecked();
  });
});

describe('upload policy picker', () => {
  const info = (defaultPolicyId: string, modes = ['basic', 'advanced']) =>
    ok({ maxFiles: 2, maxFileSize: 1000, maxFileSizeMB: 0.001, supportedFormats: ['pdf'], modes, role: 'ENTERPRISE', defaultPolicyId });
  const uploaded = ok({ fileId: 'f9', originalName: 'a.pdf', size: 3, status: 'PENDING' });

  it('preselects the default policy and sends the chosen one as policyId', async () => {
    storeAuth(enterprise, tokens);
    serve([
      { method: 'GET', url: /\/api\/upload\/info$/, body: info('p-org') },
      { method: 'GET', url: /\/api\/policies$/, body: ok([basic, advanced, orgWide, mine]) },
      { method: 'POST', url: /\/api\/upload\/single$/, body: uploaded },
      { method: 'GET', url: /\/api\/process\/status\/f9$/, body: ok({ file: { id: 'f9', originalName: 'a.pdf', originalSize: 3, status: 'PENDING', downloadCount: 0, isExpired: false } }) },
    ]);
    const { container } = renderApp(<UploadPage />, { path: '/upload', at: '/upload' });
    const picker = await screen.findByLabelText('Sanitization policy');
    expect(picker).toHaveValue('p-org');
    expect(screen.queryByLabelText('Sanitization mode')).not.toBeInTheDocument();
    await userEvent.selectOptions(picker, 'p-mine');
    await userEvent.upload(container.querySelector('input[type="file"]') as HTMLInputElement, [new File(['abc'], 'a.pdf')]);
    await waitFor(() => expect(calls.some((c) => c.url === '/api/upload/single')).toBe(true));
    const form = calls.find((c) => c.url === '/api/upload/single')!.data as FormData;
    expect(form.get('policyId')).toBe('p-mine');
    expect(form.get('mode')).toBeNull();
  });

  it('keeps the mode choice for accounts with only the built-ins', async () => {
    storeAuth(aUser({ role: 'USER' }), tokens);
    serve([
      { method: 'GET', url: /\/api\/upload\/info$/, body: info('basic') },
      { method: 'GET', url: /\/api\/policies$/, body: ok([basic, advanced]) },
      { method: 'POST', url: /\/api\/upload\/single$/, body: uploaded },
    ]);
    const { container } = renderApp(<UploadPage />, { path: '/upload', at: '/upload' });
    const mode = await screen.findByLabelText('Sanitization mode');
    expect(screen.queryByLabelText('Sanitization policy')).not.toBeInTheDocument();
    await userEvent.selectOptions(mode, 'advanced');
    await userEvent.upload(container.querySelector('input[type="file"]') as HTMLInputElement, [new File(['abc'], 'a.pdf')]);
    await waitFor(() => expect(calls.some((c) => c.url === '/api/upload/single')).toBe(true));
    const form = calls.find((c) => c.url === '/api/upload/single')!.data as FormData;
    expect(form.get('mode')).toBe('advanced');
    expect(form.get('policyId')).toBeNull();
  });
});

describe('status page', () => {
  it('shows the policy and both SHA-256 digests, each with a copy button', async () => {
    const original = 'a'.repeat(64);
    const sanitized = 'b'.repeat(64);
    storeAuth(enterprise, tokens);
    serve([{ method: 'GET', url: /\/api\/process\/status\/f1$/, body: ok({
      file: { id: 'f1', originalName: 'memo.docx', originalSize: 10, status: 'COMPLETED', downloadCount: 0, isExpired: false,
        policy: { id: 'p-mine', name: 'No links', version: 2 }, sha256Original: original, sha256Sanitized: sanitized, report: { findings: [] } },
      job: null,
    }) }]);
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    renderApp(<StatusPage />, { path: '/status/:fileId', at: '/status/f1' });
    expect(await screen.findByTestId('file-policy')).toHaveTextContent('No links');
    expect(screen.getByText('(version 2)')).toBeInTheDocument();
    expect(screen.getByTestId('hash-original')).toHaveTextContent(original);
    expect(screen.getByTestId('hash-sanitized')).toHaveTextContent(sanitized);
    await userEvent.click(screen.getByRole('button', { name: 'Copy the SHA-256 of the sanitized file' }));
    expect(writeText).toHaveBeenCalledWith(sanitized);
    expect(await screen.findByText('Copied')).toBeInTheDocument();
  });
});
