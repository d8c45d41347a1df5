import { useMutation } from '@tanstack/react-query';
import { api } from '../../lib/api';
import { ApiError } from '../../lib/api-client';
import type { UploadResultItem } from '../../lib/types';
import { typeRefusal } from './formats';

/** The server answers one item or a list of items; both become a list. */
export function normaliseUploadResult(data: unknown): UploadResultItem[] {
  if (Array.isArray(data)) return data.filter(isItem);
  return isItem(data) ? [data] : [];
}

function isItem(value: unknown): value is UploadResultItem {
  return !!value && typeof value === 'object' && typeof (value as UploadResultItem).fileId === 'string';
}

/** `password` (optional) opens encrypted PDF, Office and ZIP files; it goes in the form body
 * only (never the URL), and the server never stores it in clear nor sends it back.
 * `policyId` (optional) names the policy the file is cleaned with; the server ignores `mode`
 * when it is given. */
export async function uploadSingle(file: File, mode?: string, password?: string, policyId?: string): Promise<UploadResultItem[]> {
  const form = new FormData();
  form.append('file', file, file.name);
  if (policyId) form.append('policyId', policyId);
  else if (mode) form.append('mode', mode);
  if (password) form.append('password', password);
  const body = await api('post', '/api/upload/single', { body: form });
  const items = normaliseUploadResult(body?.data);
  if (!items.length) throw new ApiError(body?.message || 'Unknown error occurred', 'api', { serverMessage: body?.message });
  return items;
}

export interface UploadOutcome {
  file: File;
  items: UploadResultItem[];
  error?: string;
  /** The server's error code when it refused the file (`quota_exceeded`, `unsupported_type`...). */
  code?: string;
}

/** Uploads under way at once: the server refuses (429) more than a few calls at a time from
 * one account, and a big batch gains nothing from more parallel streams on one link. */
export const UPLOAD_PARALLELISM = 4;

/** One call per file, several in parallel; every file gets an outcome, success or failure,
 * in the order of `files`. */
export async function uploadAll(files: File[], mode?: string, upload = uploadSingle,
  parallelism = UPLOAD_PARALLELISM, password?: string, policyId?: string): Promise<UploadOutcome[]> {
  const outcomes: UploadOutcome[] = new Array<UploadOutcome>(files.length);
  let next = 0;
  async function lane() {
    while (next < files.length) {
      const i = next++;
      try {
        outcomes[i] = { file: files[i], items: await upload(files[i], mode, password, policyId) };
      } catch (reason) {
        outcomes[i] = { file: files[i], items: [], error: failureReason(reason), code: reason instanceof ApiError ? reason.code : undefined };
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(parallelism, files.length) }, lane));
  return outcomes;
}

export function failureReason(error: unknown): string {
  if (error instanceof ApiError) return error.serverMessage || error.message || 'Unknown error occurred';
  if (error instanceof Error && error.message) return error.message;
  return 'Unknown error occurred';
}

export function useUploadFiles() {
  return useMutation({
    mutationFn: ({ files, mode, password, policyId }: { files: File[]; mode?: string; password?: string; policyId?: string }) =>
      uploadAll(files, mode, uploadSingle, UPLOAD_PARALLELISM, password || undefined, policyId || undefined),
  });
}

/** react-dropzone validator: the server's extensions; a refusal opens with the SPEC's "File type
 * must be ..." and goes on in words (./formats.ts: the accepted kinds, the server's reason for a
 * name it refuses). */
export function extensionValidator(extensions: string[], refused: ReadonlyMap<string, string> = new Map()) {
  return (file: File) => {
    if (!extensions.length || !(file instanceof File)) return null;
    const name = (file.name || '').toLowerCase();
    if (extensions.some((ext) => name.endsWith(ext))) return null;
    return { code: 'file-invalid-type', message: typeRefusal(file.name, extensions, refused) };
  };
}
