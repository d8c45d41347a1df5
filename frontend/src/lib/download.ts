import { apiPath, type PathsFor } from './api';
import { apiClient } from './api-client';
import type { FileRecord } from './types';

/** The name a download is saved under: the server's Content-Disposition, else the sanitized name, else 'sanitized_' + original. */
export function downloadName(disposition: string | undefined | null, file?: Pick<FileRecord, 'sanitizedName' | 'originalName'>): string {
  if (disposition) {
    const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(disposition);
    if (star) {
      try {
        return decodeURIComponent(star[1].trim().replace(/^"|"$/g, ''));
      } catch { /* fall through */ }
    }
    const plain = /filename\s*=\s*"?([^";]+)"?/.exec(disposition);
    if (plain) return plain[1].trim();
  }
  if (file?.sanitizedName) return file.sanitizedName;
  return `sanitized_${file?.originalName ?? 'file'}`;
}

export async function downloadFile(file: Pick<FileRecord, 'id' | 'sanitizedName' | 'originalName'>): Promise<string> {
  // A file, not an envelope: the calls that go around `api()`, with the same typed paths.
  const path: PathsFor<'get'> = '/api/process/download/{file_id}';
  const res = await apiClient.get<Blob>(apiPath(path, { file_id: file.id }), { responseType: 'blob' });
  return saveBlob(res.data, downloadName(res.headers['content-disposition'] as string | undefined, file));
}

/** "Download all": the caller's completed files as one ZIP the server streams; saved under the
 * server's name. A refusal (404/409/410/422) rejects with the server's message, which names the
 * ids it refused. */
export async function downloadBatch(fileIds: string[]): Promise<string> {
  const path: PathsFor<'post'> = '/api/process/download-batch';
  const res = await apiClient.post<Blob>(path, { fileIds }, { responseType: 'blob' });
  const disposition = res.headers['content-disposition'] as string | undefined;
  return saveBlob(res.data, disposition ? downloadName(disposition) : 'sanitized_files.zip');
}

/** Download an attachment the API answers at `path` (a report, an export) and save it under
 * the server's name, else `fallbackName`. */
export async function downloadAttachment(path: PathsFor<'get'>, fallbackName: string,
  { params, query }: { params?: Record<string, string>; query?: Record<string, string | undefined> } = {}): Promise<string> {
  const res = await apiClient.get<Blob>(apiPath(path, params), { responseType: 'blob', params: query });
  const disposition = res.headers['content-disposition'] as string | undefined;
  return saveBlob(res.data, disposition ? downloadName(disposition) : fallbackName);
}

function saveBlob(blob: Blob, name: string): string {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return name;
}

