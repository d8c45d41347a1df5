/** The server's upload limits and formats: read by the home and upload pages. */
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from './api';
import { FALLBACK_MAX_FILES, FALLBACK_MAX_FILE_SIZE } from './constants';
import type { UploadInfo } from './types';

export const uploadInfoKeys = { detail: ['upload-info'] as const };

export async function fetchUploadInfo(): Promise<UploadInfo> {
  return (await api('get', '/api/upload/info')).data;
}

export const uploadInfoQuery = queryOptions({ queryKey: uploadInfoKeys.detail, queryFn: fetchUploadInfo, staleTime: 5 * 60_000 });

export function useUploadInfo(enabled = true) {
  return useQuery({ ...uploadInfoQuery, enabled });
}

/** Normalised extensions ('.pdf') from the server's supportedFormats ('pdf' or '.pdf'). */
export function normaliseExtensions(formats: string[] | undefined | null): string[] {
  const seen = new Set<string>();
  for (const raw of formats ?? []) {
    const ext = String(raw).trim().toLowerCase().replace(/^\.*/, '');
    if (ext) seen.add(`.${ext}`);
  }
  return [...seen];
}

export interface DropLimits {
  maxFiles: number;
  maxSize: number;
  extensions: string[];
}

/** Limits from the server, else 10 files and 100MB (docs/product-rules.md, Upload limits). */
export function dropLimits(info: UploadInfo | undefined | null): DropLimits {
  return {
    maxFiles: info?.maxFiles && info.maxFiles > 0 ? info.maxFiles : FALLBACK_MAX_FILES,
    maxSize: info?.maxFileSize && info.maxFileSize > 0 ? info.maxFileSize : FALLBACK_MAX_FILE_SIZE,
    extensions: normaliseExtensions(info?.supportedFormats),
  };
}
