import type { components } from '../../src/lib/api-schema';
import type { Role, User } from '../../src/lib/types';

type Schemas = components['schemas'];
export type Plan = Schemas['Plan'];
export type Capability = Schemas['Capability'];

const MB = 1024 * 1024;
const GB = 1024 * MB;
const EVERYTHING: Capability[] = ['apiKeys', 'webhooks', 'policyAuthoring', 'reports', 'charts', 'advancedMode', 'highPriority'];

/** The backend's default plan table (backend/src/sanitas/plans.py), as GET /api/plans sends it: test data only,
 * the web app itself reads plans from the API. */
export const PLANS: Plan[] = [
  {
    role: 'GUEST', label: 'Free', description: 'Guest Account - Limited access', listed: true, price: '$0', period: 'forever',
    popular: false, features: ['5 files per month', 'Up to 10MB per file', 'Basic sanitization', 'Email support', '24h processing'],
    limitations: ['Limited file formats', 'Standard priority'], button: 'Get Started', action: 'signUp',
    limits: { uploadsPerMonth: 5, maxFileSize: 10 * MB, storageQuota: 100 * MB, maxFilesPerUpload: 5 }, capabilities: [],
  },
  {
    role: 'USER', label: 'Pro', description: 'Standard User Account', listed: true, price: '$19', period: 'per month', popular: true,
    features: ['100 files per month', 'Up to 100MB per file', 'Advanced sanitization', 'Priority email support', '1h processing',
      'All file formats', 'API access', 'Batch processing'],
    limitations: [], button: 'Start Free Trial', action: 'signUp',
    limits: { uploadsPerMonth: 100, maxFileSize: 100 * MB, storageQuota: 5 * GB, maxFilesPerUpload: 10 },
    capabilities: ['apiKeys', 'webhooks', 'advancedMode'],
  },
  {
    role: 'ENTERPRISE', label: 'Enterprise', description: 'Enterprise Account - Enhanced limits', listed: true, price: 'Custom',
    period: '', popular: false,
    features: ['Unlimited files', 'Unlimited file size', 'Custom sanitization rules', 'Dedicated support', 'Instant processing',
      'On-premise deployment', 'SLA guarantee', 'Custom integrations', 'Advanced analytics', 'Compliance reports'],
    limitations: [], button: 'Contact Sales', action: 'contact',
    limits: { uploadsPerMonth: -1, maxFileSize: GB, storageQuota: -1, maxFilesPerUpload: 50 }, capabilities: EVERYTHING,
  },
  {
    role: 'ADMIN', label: 'Administrator', description: 'Administrator Account', listed: false, price: '', period: '', popular: false,
    features: [], limitations: [], button: '', action: 'contact',
    limits: { uploadsPerMonth: -1, maxFileSize: GB, storageQuota: -1, maxFilesPerUpload: 50 }, capabilities: EVERYTHING,
  },
];

export const FAQ = [
  { question: 'What file formats are supported?', answer: 'PDF, Office documents (Word, Excel, PowerPoint), JPEG/PNG/GIF images and more. Enterprise plans support all file types.' },
  { question: 'Can I cancel my subscription anytime?', answer: 'Yes. You can cancel at any time and keep access until the end of your billing period.' },
];

/** The GET /api/plans answer's data, with `overrides` on top. */
export const aPlanTable = (overrides: Partial<Schemas['PlanTable']> = {}): Schemas['PlanTable'] =>
  ({ plans: PLANS, faq: FAQ, newAccountRole: 'USER', ...overrides });

/** The `plan` of a user's answer for `role` (the default table's entry). */
export function planOf(role: Role, capabilities?: Capability[]): User['plan'] {
  const plan = PLANS.find((p) => p.role === role) ?? PLANS[0];
  return { role: plan.role, label: plan.label, limits: plan.limits, capabilities: capabilities ?? plan.capabilities };
}

/** A user as the API sends one, with `overrides` on top (the plan follows the role unless given). */
export function aUser(overrides: Partial<User> = {}): User {
  const role = overrides.role ?? 'USER';
  return {
    id: 'u1', email: 'ada@example.org', username: null, firstName: null, lastName: null,
    role, isActive: true, isEmailVerified: true, lastLogin: null,
    createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z', fileCount: 0,
    sessionCount: 1, plan: planOf(role), ...overrides,
  };
}
