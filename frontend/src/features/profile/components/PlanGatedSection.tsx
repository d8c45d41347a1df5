import { useState, type ReactNode } from 'react';
import { Link } from 'react-router-dom';
import { Alert } from '../../../components/ui';
import { ApiError } from '../../../lib/api-client';
import type { Role } from '../../../lib/types';

/** Whether the server refused a call because the account's plan does not include it. */
export const isPlanRequired = (error: unknown) => error instanceof ApiError && error.code === 'plan_required';

/**
 * A profile card for something the paid plans include (API keys, webhooks): its heading and
 * introduction, then either the feature or, on the Free plan (GUEST, or once the server answers
 * `plan_required`), a notice pointing to the plans. `children` gets the call that switches to it.
 */
export function PlanGatedSection({ role, id, testId, title, intro, noticeTestId, noticeTitle, notice, children }: {
  role: Role | null | undefined;
  id: string;
  testId: string;
  title: string;
  intro: ReactNode;
  noticeTestId: string;
  noticeTitle: string;
  /** The notice's text before "See the plans". */
  notice: ReactNode;
  children: (onPlanRequired: () => void) => ReactNode;
}) {
  const [planRequired, setPlanRequired] = useState(false);
  const guest = role === 'GUEST' || planRequired;
  return (
    <section className="card space-y-5 p-6" aria-labelledby={id} data-testid={testId}>
      <div>
        <h2 id={id} className="font-semibold text-slate-900">{title}</h2>
        <p className="mt-1 text-sm text-slate-600">{intro}</p>
      </div>
      {guest ? (
        <div data-testid={noticeTestId}>
          <Alert tone="info" title={noticeTitle}>
            {notice} <Link to="/pricing" className="link font-medium">See the plans</Link>
          </Alert>
        </div>
      ) : children(() => setPlanRequired(true))}
    </section>
  );
}
