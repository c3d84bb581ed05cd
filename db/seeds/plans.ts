/**
 * Subscription plans (data, seeded at start). Credits are granted monthly; rpm presets fill the quotas of
 * keys that set none; higher tiers roll unused plan credits over, up to a cap.
 */
import type { Knex } from 'knex';
import { creditsToMicro } from '../../core/money';

export interface PlanSeed {
  id: string;
  name: string;
  monthlyCredits: number;
  rpmPreset: number;
  dailyTokenCap: number | null;
  storageLimitBytes: number;
  rollover: boolean;
  rolloverCapCredits: number | null;
}

const GiB = 1024 ** 3;

export const PLANS: PlanSeed[] = [
  { id: 'free', name: 'Free', monthlyCredits: 500, rpmPreset: 30, dailyTokenCap: 200_000, storageLimitBytes: 1 * GiB, rollover: false, rolloverCapCredits: null },
  { id: 'starter', name: 'Starter', monthlyCredits: 2_000, rpmPreset: 60, dailyTokenCap: 2_000_000, storageLimitBytes: 10 * GiB, rollover: false, rolloverCapCredits: null },
  { id: 'pro', name: 'Pro', monthlyCredits: 10_000, rpmPreset: 150, dailyTokenCap: null, storageLimitBytes: 50 * GiB, rollover: true, rolloverCapCredits: 5_000 },
  { id: 'business', name: 'Business', monthlyCredits: 50_000, rpmPreset: 300, dailyTokenCap: null, storageLimitBytes: 200 * GiB, rollover: true, rolloverCapCredits: 25_000 },
  { id: 'enterprise', name: 'Enterprise', monthlyCredits: 200_000, rpmPreset: 400, dailyTokenCap: null, storageLimitBytes: 1024 * GiB, rollover: true, rolloverCapCredits: 100_000 },
];

export async function seedPlans(db: Knex): Promise<void> {
  await db('plans')
    .insert(PLANS.map((p) => ({
      id: p.id, name: p.name, monthly_credits_micro: creditsToMicro(p.monthlyCredits), rpm_preset: p.rpmPreset,
      daily_token_cap: p.dailyTokenCap, storage_limit_bytes: p.storageLimitBytes, rollover: p.rollover,
      rollover_cap_micro: p.rolloverCapCredits === null ? null : creditsToMicro(p.rolloverCapCredits), updated_at: db.fn.now(),
    })))
    .onConflict('id').merge();
}
