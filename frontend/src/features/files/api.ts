import { useQuery } from '@tanstack/react-query';

export { fetchFileStatus, statusRefetchInterval } from '../../lib/file-status';
import { fetchFileStatus, statusRefetchInterval } from '../../lib/file-status';

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
