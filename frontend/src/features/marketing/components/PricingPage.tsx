import { Link } from 'react-router-dom';
import { useAuth } from '../../../lib/auth/AuthProvider';
import { Container } from '../../../components/Layout';

interface Plan {
  name: string;
  price: string;
  period: string;
  popular?: boolean;
  features: string[];
  limitations?: string[];
  button: string;
  to: 'app' | '/contact';
}

export const PLANS: Plan[] = [
  {
    name: 'Free', price: '$0', period: 'forever',
    features: ['5 files per month', 'Up to 10MB per file', 'Basic sanitization', 'Email support', '24h processing'],
    limitations: ['Limited file formats', 'Standard priority'],
    button: 'Get Started', to: 'app',
  },
  {
    name: 'Pro', price: '$19', period: 'per month', popular: true,
    features: ['100 files per month', 'Up to 100MB per file', 'Advanced sanitization', 'Priority email support', '1h processing', 'All file formats', 'API access', 'Batch processing'],
    button: 'Start Free Trial', to: 'app',
  },
  {
    name: 'Enterprise', price: 'Custom', period: '',
    features: ['Unlimited files', 'Unlimited file size', 'Custom sanitization rules', 'Dedicated support', 'Instant processing', 'On-premise deployment', 'SLA guarantee', 'Custom integrations', 'Advanced analytics', 'Compliance reports'],
    button: 'Contact Sales', to: '/contact',
  },
];

const FAQ = [
  { q: 'What file formats are supported?', a: 'PDF, Office documents (Word, Excel, PowerPoint), JPEG/PNG/GIF images and more. Enterprise plans support all file types.' },
  { q: 'How secure is the sanitization process?', a: 'Files are processed in isolated containers without network access and deleted after processing. We maintain SOC 2 compliance.' },
  { q: 'Can I cancel my subscription anytime?', a: 'Yes. You can cancel at any time and keep access until the end of your billing period.' },
  { q: 'Do you offer refunds?', a: 'We offer a 30-day money-back guarantee on all paid plans.' },
];

function Check({ ok = true }: { ok?: boolean }) {
  return ok ? (
    <svg className="mt-0.5 h-5 w-5 shrink-0 text-brand-600" viewBox="0 0 20 20" fill="currentColor" aria-hidden="true"><path fillRule="evenodd" d="M16.7 5.3a1 1 0 010 1.4l-8 8a1 1 0 01-1.4 0l-4-4a1 1 0 011.4-1.4L8 12.6l7.3-7.3a1 1 0 011.4 0z" clipRule="evenodd" /></svg>
  ) : (
    <svg className="mt-0.5 h-5 w-5 shrink-0 text-slate-400" viewBox="0 0 20 20" fill="currentColor" aria-hidden="true"><path fillRule="evenodd" d="M4.3 4.3a1 1 0 011.4 0L10 8.6l4.3-4.3a1 1 0 111.4 1.4L11.4 10l4.3 4.3a1 1 0 01-1.4 1.4L10 11.4l-4.3 4.3a1 1 0 01-1.4-1.4L8.6 10 4.3 5.7a1 1 0 010-1.4z" clipRule="evenodd" /></svg>
  );
}

export default function PricingPage() {
  const { isAuthenticated } = useAuth();
  return (
    <Container>
      <div className="mx-auto max-w-2xl text-center">
        <h1 className="text-3xl font-bold tracking-tight text-slate-900 sm:text-4xl">Simple, transparent pricing</h1>
        <p className="mt-4 text-lg text-slate-600">Start free. Upgrade when your team needs more files, bigger files and faster processing.</p>
      </div>
      <div className="mt-12 grid gap-6 lg:grid-cols-3">
        {PLANS.map((plan) => (
          <section key={plan.name} aria-labelledby={`plan-${plan.name}`}
            className={`card relative flex flex-col p-8 ${plan.popular ? 'border-brand-600 ring-2 ring-brand-600' : ''}`}>
            {plan.popular && <span className="absolute -top-3 left-1/2 -translate-x-1/2 rounded-full bg-brand-700 px-3 py-1 text-xs font-semibold text-white">Most Popular</span>}
            <h2 id={`plan-${plan.name}`} className="text-lg font-semibold text-slate-900">{plan.name}</h2>
            <p className="mt-4 flex items-baseline gap-1">
              <span className="text-4xl font-extrabold text-slate-900">{plan.price}</span>
              {plan.period && <span className="text-sm text-slate-500">{plan.period}</span>}
            </p>
            <ul className="mt-6 flex-1 space-y-3 text-sm">
              {plan.features.map((f) => <li key={f} className="flex gap-2 text-slate-700"><Check />{f}</li>)}
              {plan.limitations?.map((f) => <li key={f} className="flex gap-2 text-slate-500"><Check ok={false} />{f}</li>)}
            </ul>
            <Link to={plan.to === 'app' ? (isAuthenticated ? '/dashboard' : '/register') : '/contact'}
              className={`mt-8 w-full ${plan.popular ? 'btn-primary' : 'btn-secondary'}`}>{plan.button}</Link>
          </section>
        ))}
      </div>
      <section className="mx-auto mt-20 max-w-3xl" aria-labelledby="faq">
        <h2 id="faq" className="text-2xl font-bold text-slate-900">Frequently asked questions</h2>
        <dl className="mt-6 divide-y divide-slate-200 rounded-2xl border border-slate-200 bg-white">
          {FAQ.map((item) => (
            <div key={item.q} className="p-6">
              <dt className="font-semibold text-slate-900">{item.q}</dt>
              <dd className="mt-2 text-slate-600">{item.a}</dd>
            </div>
          ))}
        </dl>
      </section>
    </Container>
  );
}
