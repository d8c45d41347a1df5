import { Link } from 'react-router-dom';
import { useAuth } from '../../../lib/auth/AuthProvider';
import { Container } from '../../../components/Layout';
import { Alert, PageSpinner } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { listedPlans, planTarget, usePlans } from '../../../lib/plans';

function Check({ ok = true }: { ok?: boolean }) {
  return ok ? (
    <svg className="mt-0.5 h-5 w-5 shrink-0 text-brand-600" viewBox="0 0 20 20" fill="currentColor" aria-hidden="true"><path fillRule="evenodd" d="M16.7 5.3a1 1 0 010 1.4l-8 8a1 1 0 01-1.4 0l-4-4a1 1 0 011.4-1.4L8 12.6l7.3-7.3a1 1 0 011.4 0z" clipRule="evenodd" /></svg>
  ) : (
    <svg className="mt-0.5 h-5 w-5 shrink-0 text-slate-400" viewBox="0 0 20 20" fill="currentColor" aria-hidden="true"><path fillRule="evenodd" d="M4.3 4.3a1 1 0 011.4 0L10 8.6l4.3-4.3a1 1 0 111.4 1.4L11.4 10l4.3 4.3a1 1 0 01-1.4 1.4L10 11.4l-4.3 4.3a1 1 0 01-1.4-1.4L8.6 10 4.3 5.7a1 1 0 010-1.4z" clipRule="evenodd" /></svg>
  );
}

export default function PricingPage() {
  const { isAuthenticated } = useAuth();
  // Every plan fact (labels, prices, features, buttons, the FAQ) comes from GET /api/plans.
  const table = usePlans();
  const plans = listedPlans(table.data);
  const columns = plans.length >= 3 ? 'lg:grid-cols-3' : plans.length === 2 ? 'lg:grid-cols-2' : '';
  return (
    <Container>
      <div className="mx-auto max-w-2xl text-center">
        <h1 className="text-3xl font-bold tracking-tight text-slate-900 sm:text-4xl">Simple, transparent pricing</h1>
        <p className="mt-4 text-lg text-slate-600">Start free. Upgrade when your team needs more files, bigger files and faster processing.</p>
      </div>
      {table.isPending ? <div className="mt-12"><PageSpinner label="Loading plans" /></div> : table.isError ? (
        <div className="mx-auto mt-12 max-w-2xl">
          <Alert tone="error" title="Failed to load the plans">{messageOf(table.error, 'Please try again.')}</Alert>
          <button type="button" className="btn-secondary mt-3" onClick={() => void table.refetch()}>Retry</button>
        </div>
      ) : (
        <>
          <div className={`mt-12 grid gap-6 ${columns}`}>
            {plans.map((plan) => (
              <section key={plan.role} aria-labelledby={`plan-${plan.role}`} data-testid="plan"
                className={`card relative flex flex-col p-8 ${plan.popular ? 'border-brand-600 ring-2 ring-brand-600' : ''}`}>
                {plan.popular && <span className="absolute -top-3 left-1/2 -translate-x-1/2 rounded-full bg-brand-700 px-3 py-1 text-xs font-semibold text-white">Most Popular</span>}
                <h2 id={`plan-${plan.role}`} className="text-lg font-semibold text-slate-900">{plan.label}</h2>
                <p className="mt-4 flex items-baseline gap-1">
                  <span className="text-4xl font-extrabold text-slate-900">{plan.price}</span>
                  {plan.period && <span className="text-sm text-slate-500">{plan.period}</span>}
                </p>
                <ul className="mt-6 flex-1 space-y-3 text-sm">
                  {plan.features.map((f) => <li key={f} className="flex gap-2 text-slate-700"><Check />{f}</li>)}
                  {(plan.limitations ?? []).map((f) => <li key={f} className="flex gap-2 text-slate-500"><Check ok={false} />{f}</li>)}
                </ul>
                {plan.button && (
                  <Link to={planTarget(plan, isAuthenticated)}
                    className={`mt-8 w-full ${plan.popular ? 'btn-primary' : 'btn-secondary'}`}>{plan.button}</Link>
                )}
              </section>
            ))}
          </div>
          {table.data.faq.length > 0 && (
            <section className="mx-auto mt-20 max-w-3xl" aria-labelledby="faq">
              <h2 id="faq" className="text-2xl font-bold text-slate-900">Frequently asked questions</h2>
              <dl className="mt-6 divide-y divide-slate-200 rounded-2xl border border-slate-200 bg-white">
                {table.data.faq.map((item) => (
                  <div key={item.question} className="p-6">
                    <dt className="font-semibold text-slate-900">{item.question}</dt>
                    <dd className="mt-2 text-slate-600">{item.answer}</dd>
                  </div>
                ))}
              </dl>
            </section>
          )}
        </>
      )}
    </Container>
  );
}
