import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../src/lib/api-client';
import { dropLimits, normaliseExtensions } from '../../src/lib/upload-info';
import { UPLOAD_PARALLELISM, extensionValidator, failureReason, normaliseUploadResult, uploadAll } from '../../src/features/upload/api';

describe('upload limits', () => {
  it('use the server values', () => {
    expect(dropLimits({ maxFiles: 3, maxFileSize: 5 * 1048576, maxFileSizeMB: 5, supportedFormats: ['pdf', '.DOCX', 'jpg', 'pdf'], modes: ['basic'], role: 'USER', defaultPolicyId: 'basic' }))
      .toEqual({ maxFiles: 3, maxSize: 5 * 1048576, extensions: ['.pdf', '.docx', '.jpg'] });
  });
  it('fall back to 10 files and 100MB', () => {
    expect(dropLimits(undefined)).toEqual({ maxFiles: 10, maxSize: 104857600, extensions: [] });
    expect(dropLimits({ maxFiles: 0, maxFileSize: 0, maxFileSizeMB: 0, supportedFormats: [], modes: ['basic'], role: 'USER', defaultPolicyId: 'basic' }).maxSize).toBe(104857600);
  });
  it('normalise extensions', () => {
    expect(normaliseExtensions([' PDF ', '..png', '', 'tar.gz'])).toEqual(['.pdf', '.png', '.tar.gz']);
    expect(normaliseExtensions(null)).toEqual([]);
  });
  it('reject other types with the dropzone wording', () => {
    const one = extensionValidator(['.pdf']);
    const many = extensionValidator(['.pdf', '.docx']);
    expect(one(new File(['x'], 'report.PDF'))).toBeNull();
    expect(one(new File(['x'], 'notes.xyz'))).toEqual({ code: 'file-invalid-type', message: 'File type must be .pdf. .xyz files are not among them.' });
    expect(many(new File(['x'], 'evil.exe'))?.message).toBe('File type must be one of .pdf, .docx. .exe files are not among them.');
    expect(many(new File(['x'], 'ok.docx'))).toBeNull();
  });
});

describe('upload results', () => {
  const item = { fileId: 'f1', originalName: 'a.pdf', size: 10, status: 'PENDING' };
  it('accept a single item or a list', () => {
    expect(normaliseUploadResult(item)).toEqual([item]);
    expect(normaliseUploadResult([item, { ...item, fileId: 'f2' }])).toHaveLength(2);
    expect(normaliseUploadResult(null)).toEqual([]);
    expect(normaliseUploadResult({ nope: 1 })).toEqual([]);
  });
  it('upload one call per file, in parallel, keeping failures per file', async () => {
    let inFlight = 0;
    let peak = 0;
    const modes: (string | undefined)[] = [];
    const upload = vi.fn(async (file: File, mode?: string) => {
      modes.push(mode);
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, 10));
      inFlight -= 1;
      if (file.name === 'bad.pdf') throw new ApiError('API Error: Monthly upload quota exceeded (403)', 'api', { serverMessage: 'Monthly upload quota exceeded', status: 403 });
      return [{ fileId: file.name, originalName: file.name, size: file.size, status: 'PENDING' as const }];
    });
    const files = [new File(['1'], 'a.pdf'), new File(['22'], 'bad.pdf'), new File(['333'], 'c.pdf')];
    const outcomes = await uploadAll(files, 'advanced', upload);
    expect(upload).toHaveBeenCalledTimes(3);
    expect(peak).toBe(3);
    expect(outcomes.map((o) => o.items.length)).toEqual([1, 0, 1]);
    expect(outcomes[1].error).toBe('Monthly upload quota exceeded');
    expect(outcomes[2].items[0].fileId).toBe('c.pdf');
    expect(modes).toEqual(['advanced', 'advanced', 'advanced']);
  });
  it('keep at most UPLOAD_PARALLELISM uploads under way and the outcomes in file order', async () => {
    let inFlight = 0;
    let peak = 0;
    const upload = vi.fn(async (file: File) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, 5 + (file.size % 3) * 5));
      inFlight -= 1;
      return [{ fileId: file.name, originalName: file.name, size: file.size, status: 'PENDING' as const }];
    });
    const files = Array.from({ length: 11 }, (_, i) => new File(['x'.repeat(i + 1)], `f${i}.pdf`));
    const outcomes = await uploadAll(files, undefined, upload);
    expect(upload).toHaveBeenCalledTimes(11);
    expect(peak).toBe(UPLOAD_PARALLELISM);
    expect(outcomes.map((o) => o.file.name)).toEqual(files.map((f) => f.name));
    expect(outcomes.every((o) => o.items[0].fileId === o.file.name)).toBe(true);
  });
  it('name the reason or Unknown error occurred', () => {
    expect(failureReason(new ApiError('API Error: Server error (500)', 'api', { status: 500 }))).toBe('API Error: Server error (500)');
    expect(failureReason(new Error('Network error: No response from server'))).toBe('Network error: No response from server');
    expect(failureReason('weird')).toBe('Unknown error occurred');
  });
});
