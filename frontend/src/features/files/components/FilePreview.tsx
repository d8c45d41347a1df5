import { useEffect, useState } from 'react';
import { Spinner } from '../../../components/ui';
import { fetchPreview } from '../api';

type PreviewState = { kind: 'loading' } | { kind: 'none' } | { kind: 'error' } | { kind: 'shown'; url: string };

/** The sanitized file's first page or picture, as the server drew it (never the original).
 * The call needs the access token, so the PNG is fetched and shown through an object URL,
 * revoked when the preview goes away. No preview (office documents, text) shows nothing. */
export function FilePreview({ fileId, name }: { fileId: string; name: string }) {
  const [state, setState] = useState<PreviewState>({ kind: 'loading' });

  useEffect(() => {
    let url: string | null = null;
    let live = true;
    setState({ kind: 'loading' });
    fetchPreview(fileId).then((blob) => {
      if (!live) return;
      if (!blob) {
        setState({ kind: 'none' });
        return;
      }
      url = URL.createObjectURL(blob);
      setState({ kind: 'shown', url });
    }, () => {
      if (live) setState({ kind: 'error' });
    });
    return () => {
      live = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [fileId]);

  if (state.kind === 'none') return null;
  return (
    <section className="card p-5" aria-labelledby="preview-heading" data-testid="file-preview">
      <h2 id="preview-heading" className="mb-3 font-semibold text-slate-900">Preview</h2>
      {state.kind === 'loading' && <Spinner label="Loading preview" className="h-6 w-6 text-brand-700" />}
      {state.kind === 'error' && <p className="text-sm text-slate-600" data-testid="preview-error">The preview could not be loaded.</p>}
      {state.kind === 'shown' && (
        <img src={state.url} alt={`Preview of the first page of the sanitized file ${name}`}
          className="max-h-[32rem] w-auto max-w-full rounded-lg border border-slate-200 bg-white" />
      )}
    </section>
  );
}
