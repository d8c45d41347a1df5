/** What the analytics feature offers the others: the charts panel, loaded on demand so the chart
 * library stays out of the pages' own chunks (with the same 120 s limit as a lazy page). */
import { lazy } from 'react';
import { CHUNK_LOAD_TIMEOUT_MS } from '../../lib/constants';
import { ChunkLoadError } from '../../lib/lazy';

export const ChartsPanel = lazy(() => Promise.race([
  import('./components/ChartsPanel'),
  new Promise<never>((_, reject) => setTimeout(() => reject(new ChunkLoadError()), CHUNK_LOAD_TIMEOUT_MS)),
]));

export { TIMEFRAMES } from './api';
