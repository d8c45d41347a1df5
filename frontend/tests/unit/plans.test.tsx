import { afterEach, describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import { apiClient } from '../../src/lib/api-client';
import { storeAuth } from '../../src/lib/auth/storage';
import { can, upgradeTarget, useCan, type Capability } from '../../src/lib/plans';
import PricingPage from '../../src/features/marketing/components/PricingPage';
import { HomePage } from '../../src/features/marketing/components/HomePage';
import { ApiKeysSection } from '../../src/features/profile/components/ApiKeysSection';
import { Header } from '../../src/components/Header';
import { PLANS, aPlanTable, aUser, planOf } from './fixtures';
import { calls, renderApp, serve } from './harness';

const adapter = apiClient.defaults.adapter;
afterEach(() => { apiClient.defaults.adapter = adapter; });

const tokens = { accessToken: 'tok', refreshToken: 'ref', expiresIn: 900 };
const ok = (data: unknown) => ({ success: true, message: 'ok', data });

function Probe({ capability }: { capability: Capability }) {
  return <p data-testid="can">{String(useCan(capability))}</p>;
}

function signIn(user = aUser()) {
  storeAuth(user, tokens);
  return { method: 'GET', url: /\/api\/auth\/profile$/, body: ok(user) };
}

describe('useCan', () => {
  it('reads the signed-in account’s plan capabilities, not its role', async () => {
    // A USER whose operator gave the Pro plan compliance reports but took its API keys away.
    serve([signIn(aUser({ plan: planOf('USER', ['reports']) }))]);
    renderApp(<><Probe capability="reports" /><Probe capability="apiKeys" /></>);
    await waitFor(() => expect(screen.getAllByTestId('can').map((e) => e.textContent)).toEqual(['true', 'false']));
  });

  it('is false when nobody is signed in', async () => {
    serve([]);
    renderApp(<Probe capability="reports" />);
    expect(await screen.findByTestId('can')).toHaveTextContent('false');
  });

  it('can() and the upgrade teaser follow the plan table', () => {
    expect(can(aUser({ role: 'ENTERPRISE' }), 'policyAuthoring')).toBe(true);
    expect(can(aUser({ role: 'ADMIN', plan: planOf('ADMIN', []) }), 'policyAuthoring')).toBe(false);
    expect(can(null, 'apiKeys')).toBe(false);
    expect(upgradeTarget(aPlanTable(), planOf('USER'))?.label).toBe('Enterprise');
    expect(upgradeTarget(aPlanTable(), planOf('ENTERPRISE'))).toBeUndefined();
  });

  it('shows Policies and Reports in the header by capability', async () => {
    serve([signIn(aUser({ role: 'USER', plan: planOf('USER', ['reports']) }))]);
    renderApp(<Header />);
    const nav = within(await screen.findByRole('navigation', { name: 'Main' }));
    expect(await nav.findByRole('link', { name: 'Reports' })).toBeInTheDocument();
    expect(nav.queryByRole('link', { name: 'Policies' })).not.toBeInTheDocument();
  });
});

describe('pricing page', () => {
  it('renders the listed plans, badge, buttons and FAQ from GET /api/plans, with an operator’s price', async () => {
    const plans = PLANS.map((p) => (p.role === 'USER' ? { ...p, price: '€29', period: 'per month, billed yearly' } : p));
    serve([{ method: 'GET', url: /\/api\/plans$/, body: ok(aPlanTable({ plans })) }]);
    renderApp(<PricingPage />);
    const cards = await screen.findAllByTestId('plan');
    expect(cards.map((c) => within(c).getByRole('heading').textContent)).toEqual(['Free', 'Pro', 'Enterprise']);
    const pro = within(cards[1]);
    expect(pro.getByText('€29')).toBeInTheDocument();
    expect(pro.getByText('per month, billed yearly')).toBeInTheDocument();
    expect(screen.queryByText('$19')).not.toBeInTheDocument();
    expect(pro.getByText('Most Popular')).toBeInTheDocument();
    expect(within(cards[0]).queryByText('Most Popular')).not.toBeInTheDocument();
    expect(pro.getByRole('link', { name: 'Start Free Trial' })).toHaveAttribute('href', '/register');
    expect(within(cards[2]).getByRole('link', { name: 'Contact Sales' })).toHaveAttribute('href', '/contact');
    expect(within(cards[0]).getByText('Limited file formats')).toBeInTheDocument();
    expect(screen.getByText('Can I cancel my subscription anytime?')).toBeInTheDocument();
    expect(screen.queryByText('Administrator')).not.toBeInTheDocument();
  });

  it('sends a signed-in visitor’s sign-up buttons to the dashboard', async () => {
    serve([signIn(), { method: 'GET', url: /\/api\/plans$/, body: ok(aPlanTable()) }]);
    renderApp(<PricingPage />);
    expect(await screen.findByRole('link', { name: 'Get Started' })).toHaveAttribute('href', '/dashboard');
  });

  it('says so when the plans cannot be loaded', async () => {
    serve([]);
    renderApp(<PricingPage />);
    expect(await screen.findByText('Failed to load the plans')).toBeInTheDocument();
  });
});

describe('home page', () => {
  it('promises what the new-account plan gives', async () => {
    serve([{ method: 'GET', url: /\/api\/plans$/, body: ok(aPlanTable({ newAccountRole: 'GUEST' })) }]);
    renderApp(<HomePage />);
    await waitFor(() => expect(screen.getByTestId('new-account-promise'))
      .toHaveTextContent('5 files a month on the Free plan. No credit card required.'));
  });

  it('follows an operator’s table (new accounts are Pro by default)', async () => {
    serve([{ method: 'GET', url: /\/api\/plans$/, body: ok(aPlanTable()) }]);
    renderApp(<HomePage />);
    await waitFor(() => expect(screen.getByTestId('new-account-promise'))
      .toHaveTextContent('100 files a month on the Pro plan. No credit card required.'));
  });
});

describe('a plan-gated section', () => {
  const routes = [{ method: 'GET', url: /\/api\/plans$/, body: ok(aPlanTable()) }, { method: 'GET', url: /\/api\/keys$/, body: ok([]) }];

  it('shows the feature when the plan has the capability, whatever the role', async () => {
    serve([signIn(aUser({ role: 'GUEST', plan: planOf('GUEST', ['apiKeys']) })), ...routes]);
    renderApp(<ApiKeysSection />);
    expect(await screen.findByLabelText('Key name')).toBeInTheDocument();
    expect(screen.queryByTestId('api-keys-plan-notice')).not.toBeInTheDocument();
  });

  it('shows the notice, naming the plans that have it, when the plan lacks it', async () => {
    serve([signIn(aUser({ role: 'USER', plan: planOf('USER', []) })), ...routes]);
    renderApp(<ApiKeysSection />);
    const notice = await screen.findByTestId('api-keys-plan-notice');
    await waitFor(() => expect(notice).toHaveTextContent('Your account is on the Pro plan. Upgrade to Pro or Enterprise'));
    expect(screen.queryByLabelText('Key name')).not.toBeInTheDocument();
    expect(calls.some((c) => c.url === '/api/keys')).toBe(false);
  });
});
