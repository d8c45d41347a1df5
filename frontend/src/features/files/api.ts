import { useQuery } from '@tanstack/react-query';
import { get } from '../../lib/api-client';
import { STATUS_POLL_MS } from '../../lib/constants';
import type { FileStatusData } from '../../lib/types';

export const fetchFileStatus = async (id: string) => (await get<FileStatusData>(`/api/process/status/${encodeURIComponent(id)}`)).data;

/** Re-fetch every 3000 ms while PENDING or PROCESSING; stop otherwise (SPEC section 2). */
export function statusRefetchInterval(status: string | undefined | null): number | false {
  return status === 'PENDING' || status === 'PROCESSING' ? STATUS_POLL_MS : false;
}

export function useFileStatus(id: string | undefined, poll = true) {
  return useQuery({
    queryKey: ['file-status', id],
    queryFn: () => fetchFileStatus(id!),
    enabled: !!id,
    staleTime: 0,
    refetchInterval: (query) => (poll ? statusRefetchInterval(query.state.data?.file?.status) : false),
  });
}

/** The job's percent, capped to 0..100. */
export function jobPercent(progress: number | null | undefined): number {
  if (progress === null || progress === undefined || !Number.isFinite(progress)) return 0;
  return Math.max(0, Math.min(100, Math.round(progress)));
}

export { downloadFile, downloadName } from '../../lib/download';
