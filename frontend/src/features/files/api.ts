import { skipToken, useQuery } from '@tanstack/react-query';
import { fileStatusQuery } from '../../lib/file-status';

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

export { downloadFile, downloadName } from '../../lib/download';
