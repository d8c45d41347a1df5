/**
 * Plans: what the signed-in account may do and what each plan offers, both from the API (the web
 * app holds no plan fact of its own). `useCan` reads the user's `plan.capabilities` (the profile
 * answer); the pricing and home pages render `GET /api/plans`. Admin-only screens stay a role
 * check of ADMIN: that is an admin power, not a plan.
 */
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from './api';
import { ApiError } from './api-client';
import type { components } from './api-schema';
import { useAuth } from './auth/AuthProvider';
import type { User } from './types';

type Schemas = components['schemas'];
export type Capability = Schemas['Capability'];
export type Plan = Schemas['Plan'];
export type PlanTable = Schemas['PlanTable'];
export type PlanLimits = Schemas['Limits'];

/** Whether `user`'s plan includes `capability` (no user, or no plan in the answer: no). */
export function can(user: Pick<User, 'plan'> | null | undefined, capability: Capability): boolean {
  return !!user?.plan?.capabilities.includes(capability);
}

/** Whether the signed-in account's plan includes `capability`. */
export function useCan(capability: Capability): boolean {
  const { user, isAuthenticated } = useAuth();
  return isAuthenticated && can(user, capability);
}

/** Whether the server refused a call because the account's plan does not include it (403 `plan_required`). */
export const isPlanRequired = (error: unknown) => error instanceof ApiError && error.code === 'plan_required';

export const planKeys = { table: ['plans'] as const };

export const fetchPlans = async (): Promise<PlanTable> => (await api('get', '/api/plans')).data;

/** Every plan, the pricing page's FAQ and the plan a new account gets (public). */
export const plansQuery = () => queryOptions({ queryKey: planKeys.table, queryFn: fetchPlans, staleTime: 5 * 60_000 });
export const usePlans = () => useQuery(plansQuery());

/** The plans the pricing page offers, in the table's order. */
export const listedPlans = (table: PlanTable | undefined): Plan[] => (table?.plans ?? []).filter((p) => p.listed);

/** The plan every new account gets. */
export const newAccountPlan = (table: PlanTable | undefined): Plan | undefined =>
  table?.plans.find((p) => p.role === table.newAccountRole);

/** The plan an upgrade teaser offers: the listed plan with the most capabilities, when it has
 * one the account's plan lacks (none for an account that already has everything). */
export function upgradeTarget(table: PlanTable | undefined, current: Pick<User['plan'], 'capabilities'> | undefined): Plan | undefined {
  if (!current) return undefined;
  const best = [...listedPlans(table)].sort((a, b) => b.capabilities.length - a.capabilities.length)[0];
  return best?.capabilities.some((c) => !current.capabilities.includes(c)) ? best : undefined;
}

/** Where a plan's button goes: sign up (the dashboard when signed in), or the contact page. */
export const planTarget = (plan: Pick<Plan, 'action'>, signedIn: boolean) =>
  plan.action === 'contact' ? '/contact' : signedIn ? '/dashboard' : '/register';

/** A monthly upload allowance in words ("100 files a month", "Unlimited files"). */
export const uploadsInWords = (limits: PlanLimits) =>
  limits.uploadsPerMonth < 0 ? 'Unlimited files' : `${limits.uploadsPerMonth} ${limits.uploadsPerMonth === 1 ? 'file' : 'files'} a month`;
