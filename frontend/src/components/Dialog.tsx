/**
 * Modal dialogs and side panels: focus moves in when one opens, Tab and Shift+Tab stay inside,
 * Escape closes it, and on closing focus returns to the control that opened it. While one is
 * open the page says so (`data-modal-open` on <body>), and the toasts move to the bottom left,
 * off the panel's header and buttons (index.css).
 */
import { useEffect, useId, useRef, type ReactNode, type RefObject } from 'react';

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

let openModals = 0;

/** Keeps focus inside `ref` while mounted (see the module's comment); `initial` is focused first,
 * else the first focusable element inside. */
export function useModalFocus(ref: RefObject<HTMLElement | null>, onClose: () => void, initial?: RefObject<HTMLElement | null>) {
  const closeRef = useRef(onClose);
  useEffect(() => {
    closeRef.current = onClose;
  }, [onClose]);

  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const box = ref.current;
    openModals += 1;
    document.body.dataset.modalOpen = 'true';
    (initial?.current ?? box?.querySelector<HTMLElement>(FOCUSABLE) ?? box)?.focus();

    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.stopPropagation();
        closeRef.current();
        return;
      }
      if (e.key !== 'Tab' || !box) return;
      const all = [...box.querySelectorAll<HTMLElement>(FOCUSABLE)];
      // The ones laid out (a layout for another screen width is display: none); with no layout
      // at all (a test's DOM) every one counts.
      const shown = all.filter((el) => el.getClientRects().length > 0);
      const items = shown.length ? shown : all;
      if (!items.length) {
        e.preventDefault();
        return;
      }
      const first = items[0];
      const last = items[items.length - 1];
      const inside = box.contains(document.activeElement);
      if (e.shiftKey && (document.activeElement === first || !inside)) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && (document.activeElement === last || !inside)) {
        e.preventDefault();
        first.focus();
      }
    };
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('keydown', onKey);
      openModals -= 1;
      if (!openModals) delete document.body.dataset.modalOpen;
      // Back to the control that opened it; when that is gone or now disabled (a role applied),
      // to the first control beside it.
      const back = opener?.isConnected && !opener.matches(':disabled') ? opener
        : opener?.parentElement?.querySelector<HTMLElement>(FOCUSABLE);
      back?.focus();
    };
    // Runs once per opening: the panel's own re-renders must not move focus.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
}

/** A panel on the right, full height (full width on a phone), with a title and a Close button. */
export function SidePanel({ title, onClose, width = 'max-w-xl', testId, children }: {
  title: ReactNode;
  onClose: () => void;
  width?: string;
  testId?: string;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const closeRef = useRef<HTMLButtonElement>(null);
  const headingId = useId();
  useModalFocus(ref, onClose, closeRef);
  return (
    <div className="fixed inset-0 z-40 flex justify-end bg-slate-900/40">
      <div ref={ref} role="dialog" aria-modal="true" aria-labelledby={headingId} data-testid={testId}
        className={`flex h-full w-full ${width} flex-col overflow-y-auto bg-white shadow-xl`}>
        <div className="flex items-center justify-between gap-3 border-b border-slate-200 px-5 py-4">
          <h2 id={headingId} className="min-w-0 truncate text-lg font-semibold text-slate-900">{title}</h2>
          <button ref={closeRef} type="button" className="btn-ghost px-3 py-1.5" onClick={onClose}>Close</button>
        </div>
        {/* Room at the bottom for the toasts a phone shows there. */}
        <div className="space-y-5 p-5 pb-28 sm:pb-5">{children}</div>
      </div>
    </div>
  );
}

/** A question before an admin action takes effect: the action's button and Cancel (focused first,
 * so Enter pressed twice does not confirm). */
export function ConfirmDialog({ title, children, confirmLabel, danger = false, busy = false, onConfirm, onCancel }: {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const titleId = useId();
  const textId = useId();
  useModalFocus(ref, onCancel, cancelRef);
  return (
    <div className="fixed inset-0 z-50 flex items-center justify-center bg-slate-900/40 p-4">
      <div ref={ref} role="alertdialog" aria-modal="true" aria-labelledby={titleId} aria-describedby={textId}
        className="w-full max-w-md rounded-2xl bg-white p-6 shadow-xl">
        <h2 id={titleId} className="text-lg font-semibold text-slate-900">{title}</h2>
        <div id={textId} className="mt-2 text-sm text-slate-700">{children}</div>
        <div className="mt-5 flex flex-wrap justify-end gap-2">
          <button ref={cancelRef} type="button" className="btn-secondary" disabled={busy} onClick={onCancel}>Cancel</button>
          <button type="button" className={danger ? 'btn-danger' : 'btn-primary'} disabled={busy} onClick={onConfirm}>{confirmLabel}</button>
        </div>
      </div>
    </div>
  );
}

/** An inline confirmation (inside a panel or a list): it scrolls into view when it appears and
 * takes focus, so its question is read out and its buttons are the next Tab stops. */
export function InlineConfirm({ label, children, className = '', testId }: { label: string; children: ReactNode; className?: string; testId?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.scrollIntoView?.({ block: 'nearest' });
    el.focus({ preventScroll: true });
  }, []);
  return (
    <div ref={ref} role="group" aria-label={label} tabIndex={-1} data-testid={testId}
      className={`scroll-my-4 rounded-xl border border-red-200 bg-red-50 p-4 ${className}`}>{children}</div>
  );
}
