import { useEffect, useRef, useState, type ReactNode } from 'react';
import { toast } from 'react-toastify';

/** Copies `text`; answers whether it worked (the clipboard needs a secure page and permission). */
async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * A secret the server shows only in the answer that created it (an API key, a webhook's signing
 * secret): a heading, a plain warning that it cannot be shown again, the secret with a copy
 * button, and "I have saved it". The panel takes the focus so a screen reader announces it.
 */
export function SecretShownOnce({ id, testId, secretTestId, heading, why, secret, noun, onDone }: {
  /** The heading's element id (the region is labelled by it). */
  id: string;
  testId: string;
  secretTestId: string;
  heading: ReactNode;
  /** After "Copy it now: you won’t see it again.": why, and what to do if it is lost. */
  why: ReactNode;
  secret: string;
  /** What the secret is called on the button and in the messages: "key", "secret". */
  noun: string;
  onDone: () => void;
}) {
  const [copied, setCopied] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.focus(), []);

  const onCopy = async () => {
    if (await copyText(secret)) {
      setCopied(true);
      toast.success(`${noun === 'key' ? 'API key' : 'Signing secret'} copied`);
    } else {
      toast.error(`Could not copy: select the ${noun} and copy it yourself`);
    }
  };

  return (
    <div ref={ref} tabIndex={-1} role="region" aria-labelledby={id} data-testid={testId}
      className="space-y-3 rounded-xl border border-green-300 bg-green-50 p-4 focus:outline-none focus:ring-2 focus:ring-green-500">
      <h3 id={id} className="font-semibold text-green-900">{heading}</h3>
      <p className="text-sm text-green-900">
        <strong>Copy it now: you won’t see it again.</strong> {why}
      </p>
      <div className="flex flex-col gap-2 sm:flex-row sm:items-center">
        <code className="min-w-0 flex-1 select-all break-all rounded-lg border border-green-200 bg-white px-3 py-2 font-mono text-sm text-slate-900"
          data-testid={secretTestId}>{secret}</code>
        <button type="button" className="btn-primary shrink-0" onClick={() => void onCopy()}>{copied ? 'Copied' : `Copy ${noun}`}</button>
      </div>
      <button type="button" className="btn-secondary" onClick={onDone}>I have saved it</button>
    </div>
  );
}
