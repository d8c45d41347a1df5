import { useState } from 'react';

/** A SHA-256 digest in monospace with a button that copies it. */
export function HashValue({ value, label }: { value: string | null | undefined; label: string }) {
  const [copied, setCopied] = useState(false);
  if (!value) return <>—</>;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(true);
      setTimeout(() => setCopied(false), 2000);
    } catch {
      setCopied(false);
    }
  };
  return (
    <span className="flex items-start gap-2">
      <code className="break-all font-mono text-xs text-slate-800" data-testid={`hash-${label}`}>{value}</code>
      <button type="button" className="btn-ghost shrink-0 px-2 py-0.5 text-xs" onClick={() => void copy()} aria-label={`Copy the SHA-256 of the ${label} file`}>
        {copied ? 'Copied' : 'Copy'}
      </button>
    </span>
  );
}
