/** A file's processing status, polled while it is in progress: used by the upload, status,
 * download and admin screens, so it lives here rather than in one feature. */
import { queryOptions } from '@tanstack/react-query';
import { api } from './api';
import { STATUS_POLL_MS } from './constants';
import type { FileStatus } from './types';

export const fileStatusKeys = {
  all: ['file-status'] as const,
  detail: (id: string | undefined) => [...fileStatusKeys.all, id] as const,
};

export const fetchFileStatus = async (id: string) =>
  (await api('get', '/api/process/status/{file_id}', { path: { file_id: id } })).data;

/** Re-fetch every 3000 ms while PENDING or PROCESSING; stop otherwise (docs/product-rules.md, File statuses). */
export function statusRefetchInterval(status: FileStatus | undefined | null): number | false {
  return status === 'PENDING' || status === 'PROCESSING' ? STATUS_POLL_MS : false;
}

/** A file's status, polled while in progress (`fallbackStatus`: what is known before the first answer). */
export function fileStatusQuery(id: string, { poll = true, fallbackStatus }: { poll?: boolean; fallbackStatus?: FileStatus } = {}) {
  return queryOptions({
    queryKey: fileStatusKeys.detail(id),
    queryFn: () => fetchFileStatus(id),
    staleTime: 0,
    refetchInterval: (query) => (poll ? statusRefetchInterval(query.state.data?.file?.status ?? fallbackStatus) : false),
  });
}
