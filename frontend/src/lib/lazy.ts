import { lazy, type ComponentType } from 'react';
import { CHUNK_LOAD_TIMEOUT_MS } from './constants';

export class ChunkLoadError extends Error {
  constructor() {
    super('Loading chunk failed: timed out after 120 s');
    this.name = 'ChunkLoadError';
  }
}

/** React.lazy with the 120 s chunk-load limit (docs/product-rules.md, Constants). */
export function lazyPage<T extends ComponentType<object>>(loader: () => Promise<{ default: T }>) {
  return lazy(() => Promise.race([
    loader(),
    new Promise<never>((_, reject) => setTimeout(() => reject(new ChunkLoadError()), CHUNK_LOAD_TIMEOUT_MS)),
  ]));
}
