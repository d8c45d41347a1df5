import { afterEach, describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { apiClient } from '../../src/lib/api-client';
import { storeAuth } from '../../src/lib/auth/storage';
import { normaliseExtensions } from '../../src/lib/upload-info';
import UploadPage from '../../src/features/upload/components/UploadPage';
import { acceptedFamilies, refusedReasons, typeRefusal } from '../../src/features/upload/formats';
import { calls, renderApp, serve, type Route_ } from './harness';
import { aUser } from './fixtures';

const adapter = apiClient.defaults.adapter;
afterEach(() => { apiClient.defaults.adapter = adapter; });

const MB = 1024 * 1024;
/** The backend's supportedFormats (engine/formats.py: supported_extensions), issue 22's families included. */
const SERVER_FORMATS = `7z aif aifc aiff avi avif bmp bz2 cfg conf csv cur dat dib doc docm docx dot dotm dotx emf eml epub flac gif gz heic
  heif hif htm html ico ini jfif jpe jpeg jpg json jxl log m4a m4b m4v markdown md mdown mk3d mka mkd mkv mov mp3 mp4 msg odf odg odp ods odt
  oga ogg opus otg otp ots ott oxps pdf png pot potm potx pps ppsm ppsx ppt pptm pptx qt rar rst rtf srt svg tar tbz tbz2 text tgz tif tiff
  tnef toml tsv txt txz vsdm vsdx vssm vssx vstm vstx vtt wav wave webm webp wmf xhtml xls xlsb xlsm xlsx xlt xltm xltx xml xps xz yaml yml
  zip`.split(/\s+/);
const REFUSED = [{ extensions: ['bat', 'exe', 'js', 'ps1', 'sh'], reason: 'Executables and scripts are not accepted.' }];
const ALL_KINDS = 'documents, spreadsheets, presentations, images, audio, video, archives, e-mail, e-books and text files';

const ok = (data: unknown, message = 'ok') => ({ success: true, message, data });
const info = ok({ maxFiles: 5, maxFileSize: MB, maxFileSizeMB: 1, supportedFormats: SERVER_FORMATS, modes: ['basic'], role: 'USER',
  defaultPolicyId: 'basic', refusedFormats: REFUSED });

function renderUpload(routes: Route_[] = []) {
  storeAuth(aUser(), { accessToken: 'tok', refreshToken: 'ref', expiresIn: 900 });
  serve([{ method: 'GET', url: /\/api\/upload\/info$/, body: info }, ...routes]);
  return renderApp(<UploadPage />, { path: '/upload', at: '/upload' });
}
const input = (container: HTMLElement) => container.querySelector('input[type="file"]') as HTMLInputElement;
const uploaded = (name: string) => ({ method: 'POST', url: /\/api\/upload\/single$/, status: 201, body: ok({ fileId: `id-${name}`, originalName: name, size: 3, status: 'PENDING' }) });

describe('refusals in words', () => {
  const extensions = normaliseExtensions(SERVER_FORMATS);

  it('names the accepted kinds, not a hundred extensions', () => {
    const families = acceptedFamilies(extensions);
    expect(families.map((f) => f.label).join(', ')).toBe(ALL_KINDS.replace(' and ', ', '));
    // Every extension the server accepts is in exactly one kind.
    expect(families.flatMap((f) => f.extensions).sort()).toEqual([...extensions].sort());
    // A format the table does not know is still named, on its own.
    expect(acceptedFamilies(['.pdf', '.xyz']).map((f) => f.label)).toEqual(['documents', 'other formats (.xyz)']);
  });

  it('keeps the SPEC’s opening and gives the server’s reason for a name it refuses', () => {
    const refused = refusedReasons({ refusedFormats: REFUSED });
    expect(typeRefusal('Tool.EXE', extensions, refused)).toBe(`File type must be one of the supported kinds: ${ALL_KINDS}. Executables and scripts are not accepted (.exe).`);
    expect(typeRefusal('notes.xyz', extensions, refused)).toBe(`File type must be one of the supported kinds: ${ALL_KINDS}. .xyz files are not among them.`);
    expect(typeRefusal('README', extensions, refused)).toMatch(/^File type must be .* This file’s name has no extension\.$/);
  });
});

describe('upload screen refusals', () => {
  it('lists a refused type in the box without painting the drop zone red when the other file was accepted', async () => {
    const { container } = renderUpload([uploaded('a.pdf')]);
    await screen.findByText('Upload guidelines');
    await userEvent.upload(input(container), [new File(['MZ'], 'tool.exe'), new File(['abc'], 'a.pdf')], { applyAccept: false });
    const box = within(await screen.findByTestId('upload-refusals'));
    expect(box.getByRole('status')).toHaveTextContent('Some files were not accepted');
    expect(box.getByRole('status')).toHaveTextContent(`tool.exe: File type must be one of the supported kinds: ${ALL_KINDS}. Executables and scripts are not accepted (.exe).`);
    await screen.findByText('Successfully uploaded 1 file(s). Files are being processed. You can check their status below.');
    const zone = screen.getByTestId('dropzone');
    expect(zone.className).not.toMatch(/red/);
    expect(zone).not.toHaveAttribute('data-refused');
    expect(screen.getByText('Drag & drop files here, or click to select')).toBeInTheDocument();
    // Only the accepted file was sent.
    expect(calls.filter((c) => c.url === '/api/upload/single')).toHaveLength(1);
  });

  it('gives the size in MB beside the bytes and the file’s own size', async () => {
    const { container } = renderUpload();
    await screen.findByText('Upload guidelines');
    await userEvent.upload(input(container), [new File(['x'.repeat(2 * MB)], 'scan.pdf')], { applyAccept: false });
    const alert = within(await screen.findByTestId('upload-refusals')).getByRole('alert');
    expect(alert).toHaveTextContent('The file was not accepted');
    expect(alert).toHaveTextContent('scan.pdf: File is larger than 1048576 bytes (1 MB), the most your account allows per file; this one is 2 MB.');
  });

  it('shows the monthly quota refusal in the box, once for the files it refused, with the way to the usage', async () => {
    const message = 'Monthly upload quota exceeded: your account allows 5 uploads per month and no uploads are left this month.';
    const { container } = renderUpload([{ method: 'POST', url: /\/api\/upload\/single$/, status: 403, body: { success: false, message, error: 'quota_exceeded' } }]);
    await screen.findByText('Upload guidelines');
    await userEvent.upload(input(container), [new File(['1'], 'a.pdf'), new File(['2'], 'b.pdf')], { applyAccept: false });
    const box = within(await screen.findByTestId('upload-refusals'));
    const alert = await box.findByRole('alert');
    expect(alert).toHaveTextContent('No files were accepted');
    expect(alert).toHaveTextContent(`a.pdf, b.pdf: ${message}`);
    expect(box.getAllByRole('listitem')).toHaveLength(1);
    expect(box.getByRole('link', { name: 'See your usage on the dashboard' })).toHaveAttribute('href', '/dashboard');
  });

  it('shows the server’s own reason for a file it refuses by its content', async () => {
    const message = 'Unsupported file "report.pdf": The file is a Windows executable; executables are not accepted.';
    const { container } = renderUpload([{ method: 'POST', url: /\/api\/upload\/single$/, status: 415, body: { success: false, message, error: 'unsupported_type' } }]);
    await screen.findByText('Upload guidelines');
    await userEvent.upload(input(container), [new File(['MZ'], 'report.pdf')], { applyAccept: false });
    await waitFor(() => expect(screen.getByTestId('upload-refusals')).toHaveTextContent(`report.pdf: ${message}`));
    expect(screen.queryByRole('link', { name: 'See your usage on the dashboard' })).not.toBeInTheDocument();
  });

  it('names the kinds in the guidelines, with every extension one click away', async () => {
    renderUpload();
    const panel = within(await screen.findByTestId('supported-families'));
    expect(panel.getAllByRole('listitem').map((li) => li.textContent)).toEqual(
      ['Documents', 'Spreadsheets', 'Presentations', 'Images', 'Audio', 'Video', 'Archives', 'E-mail', 'E-books', 'Text files']);
    expect(panel.getByText(`All ${SERVER_FORMATS.length} file extensions`)).toBeInTheDocument();
  });
});
