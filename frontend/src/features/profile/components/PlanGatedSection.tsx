import { useState, type ReactNode } from 'react';
import { Link } from 'react-router-dom';
import { Alert } from '../../../components/ui';
import { useAuth } from '../../../lib/auth/AuthProvider';
import { listedPlans, useCan, usePlans, type Capability } from '../../../lib/plans';

/** "the Pro plan", "the Pro or Enterprise plans": the listed plans that include `capability`. */
function plansWith(labels: string[]): string {
  if (labels.length <= 1) return labels[0] ?? '';
  return `${labels.slice(0, -1).join(', ')} or ${labels[labels.length - 1]}`;
}

/**
 * A profile card for something only some plans include (API keys, webhooks): its heading and
 * introduction, then either the feature or, when the account's plan lacks `capability` (or
 * once the server answers `plan_required`), a notice naming the plans that have it (from
 * GET /api/plans) and pointing to the pricing page. `children` gets the call that switches to it.
 */
export function PlanGatedSection({ capability, feature, id, testId, title, intro, noticeTestId, upgradeFor, children }: {
  capability: Capability;
  /** The feature's name, a sentence's subject ("API access", "Webhooks"). */
  feature: { name: string; plural?: boolean };
  id: string;
  testId: string;
  title: string;
  intro: ReactNode;
  noticeTestId: string;
  /** What upgrading gives, after "Upgrade to <plans> " ("to create API keys ..."). */
  upgradeFor: string;
  children: (onPlanRequired: () => void) => ReactNode;
}) {
  const [planRequired, setPlanRequired] = useState(false);
  const allowed = useCan(capability);
  const { user } = useAuth();
  const plans = usePlans();
  const gated = !allowed || planRequired;
  const labels = listedPlans(plans.data).filter((p) => p.capabilities.includes(capability)).map((p) => p.label);
  const verb = feature.plural ? 'are' : 'is';
  const noticeTitle = labels.length ? `${feature.name} ${verb} part of the ${labels[0]} plan` : `${feature.name} ${verb} not part of your plan`;
  return (
    <section className="card space-y-5 p-6" aria-labelledby={id} data-testid={testId}>
      <div>
        <h2 id={id} className="font-semibold text-slate-900">{title}</h2>
        <p className="mt-1 text-sm text-slate-600">{intro}</p>
      </div>
      {gated ? (
        <div data-testid={noticeTestId}>
          <Alert tone="info" title={noticeTitle}>
            {user?.plan ? `Your account is on the ${user.plan.label} plan. ` : ''}
            {labels.length ? `Upgrade to ${plansWith(labels)} ${upgradeFor}` : `Upgrade ${upgradeFor}`}{' '}
            <Link to="/pricing" className="link font-medium">See the plans</Link>
          </Alert>
        </div>
      ) : children(() => setPlanRequired(true))}
    </section>
  );
}
