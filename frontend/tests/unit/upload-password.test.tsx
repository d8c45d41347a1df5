import { afterEach, describe, expect, it } from 'vitest';
import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { apiClient } from '../../src/lib/api-client';
import { storeAuth } from '../../src/lib/auth/storage';
import UploadPage from '../../src/features/upload/components/UploadPage';
import { calls, renderApp, serve } from './harness';
import { aUser } from './fixtures';

const adapter = apiClient.defaults.adapter;
afterEach(() => { apiClient.defaults.adapter = adapter; });

const user = aUser({ id: 'u1', email: 'ada@example.org', firstName: 'Ada', role: 'USER' });
const tokens = { accessToken: 'tok', refreshToken: 'ref', expiresIn: 900 };
const ok = (data: unknown, message = 'ok') => ({ success: true, message, data });
const info = ok({ maxFiles: 3, maxFileSize: 100000, maxFileSizeMB: 0.1, supportedFormats: ['pdf', 'docx', 'zip'], modes: ['basic'] });

function setUp() {
  storeAuth(user, tokens);
  serve([
    { method: 'GET', url: /\/api\/upload\/info$/, body: info },
    { method: 'POST', url: /\/api\/upload\/single$/, status: 201, body: ok({ fileId: 'f1', originalName: 'a.docx', size: 3, status: 'PENDING' }) },
  ]);
  return renderApp(<UploadPage />, { path: '/upload', at: '/upload' });
}

describe('upload password', () => {
  it('is an optional masked field sent with every file of the upload', async () => {
    const { container } = setUp();
    const field = await screen.findByLabelText('Password (for encrypted files)');
    expect(field).toHaveAttribute('type', 'password');
    expect(field).toHaveAttribute('autocomplete', 'off');
    await userEvent.type(field, 'S3cret pass');
    const input = container.querySelector('input[type="file"]') as HTMLInputElement;
    await userEvent.upload(input, [new File(['abc'], 'a.docx'), new File(['def'], 'b.zip')]);
    await screen.findByText('Successfully uploaded 2 file(s). Files are being processed. You can check their status below.');
    const uploads = calls.filter((c) => c.url === '/api/upload/single');
    expect(uploads).toHaveLength(2);
    for (const call of uploads) {
      const form = call.data as FormData;
      expect(form.get('password')).toBe('S3cret pass');
      expect(call.url).not.toContain('S3cret');
    }
    expect(screen.queryByText(/S3cret/)).not.toBeInTheDocument();
  });

  it('is left out of the form when empty', async () => {
    const { container } = setUp();
    await screen.findByLabelText('Password (for encrypted files)');
    const input = container.querySelector('input[type="file"]') as HTMLInputElement;
    await userEvent.upload(input, [new File(['abc'], 'a.pdf')]);
    await screen.findByText('Successfully uploaded 1 file(s). Files are being processed. You can check their status below.');
    const form = calls.filter((c) => c.url === '/api/upload/single')[0].data as FormData;
    expect(form.has('password')).toBe(false);
    expect(form.get('mode')).toBe('basic');
  });
});
