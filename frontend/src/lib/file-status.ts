import { get } from './api-client';
import { STATUS_POLL_MS } from './constants';
import type { FileStatusData } from './types';

export const fetchFileStatus = async (id: string) => (await get<FileStatusData>(`/api/process/status/${encodeURIComponent(id)}`)).data;

/** Re-fetch every 3000 ms while PENDING or PROCESSING; stop otherwise (SPEC section 2). */
export function statusRefetchInterval(status: string | undefined | null): number | false {
  return status === 'PENDING' || status === 'PROCESSING' ? STATUS_POLL_MS : false;
}

