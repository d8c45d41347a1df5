import { skipToken, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiPath, type PathsFor } from '../../lib/api';
import { ApiError, apiClient } from '../../lib/api-client';
import { downloadBatch, downloadFile } from '../../lib/download';
import { fileStatusKeys, fileStatusQuery } from '../../lib/file-status';
import type { FileRecord } from '../../lib/types';
import { historyKeys } from '../history/api';

export { fetchFileStatus, fileStatusKeys, fileStatusQuery, statusRefetchInterval } from '../../lib/file-status';

/** The status page's and download page's query: polled while in progress unless `poll` is false. */
export function useFileStatus(id: string | undefined, poll = true) {
  const options = fileStatusQuery(id ?? '', { poll });
  return useQuery(id ? options : { ...options, queryFn: skipToken });
}

/** The job's percent, capped to 0..100. */
export function jobPercent(progress: number | null | undefined): number {
  if (progress === null || progress === undefined || !Number.isFinite(progress)) return 0;
  return Math.max(0, Math.min(100, Math.round(progress)));
}

/** The PNG preview of a sanitized file's first page or picture; null when the file has none
 * (404 `preview_unavailable`: office documents, text, archives...). */
export async function fetchPreview(fileId: string): Promise<Blob | null> {
  const path: PathsFor<'get'> = '/api/process/preview/{file_id}';
  try {
    const res = await apiClient.get<Blob>(apiPath(path, { file_id: fileId }), { responseType: 'blob' });
    return res.data;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404 && error.code === 'preview_unavailable') return null;
    throw error;
  }
}

/** Downloads change the files' download counts: the status, download and history screens
 * read them again afterwards. */
function useRefreshDownloadCounts() {
  const client = useQueryClient();
  return () => Promise.all([
    client.invalidateQueries({ queryKey: fileStatusKeys.all }),
    client.invalidateQueries({ queryKey: historyKeys.all }),
  ]);
}

/** One file in one click (the saved name: the server's, else the sanitized name). */
export function useDownloadFile() {
  const refresh = useRefreshDownloadCounts();
  return useMutation({
    mutationFn: (file: Pick<FileRecord, 'id' | 'sanitizedName' | 'originalName'>) => downloadFile(file),
    onSettled: () => refresh(),
  });
}

/** "Download all": several files as one ZIP; the error's server message names refused ids. */
export function useDownloadBatch() {
  const refresh = useRefreshDownloadCounts();
  return useMutation({
    mutationFn: (fileIds: string[]) => downloadBatch(fileIds),
    onSettled: () => refresh(),
  });
}

export { downloadFile, downloadName } from '../../lib/download';
