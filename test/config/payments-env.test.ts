import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../config/env';
import { amountMinorFor } from '../../domain/payments';

describe('config: the payment processor (STRIPE_*, TOPUP_*, AUTO_TOPUP_PERIOD_SECONDS)', () => {
  const stripe = { STRIPE_SECRET_KEY: 'sk_test_abc123', STRIPE_WEBHOOK_SECRET: 'whsec_abc123' };

  it('is off without a secret key', () => {
    expect(loadConfig({}).payments).to.equal(undefined);
  });

  it('reads the key, the secret, the defaults and another API base', () => {
    expect(loadConfig({ ...stripe, STRIPE_API_BASE: 'http://127.0.0.1:12111' }).payments).to.deep.equal({
      secretKey: 'sk_test_abc123', webhookSecret: 'whsec_abc123', apiBase: { protocol: 'http', host: '127.0.0.1', port: 12111 },
      pricePerCreditMinor: '1', currency: 'usd', minCredits: 500, maxCredits: 100_000, autoTopUpPeriodSeconds: 86_400,
    });
    expect(loadConfig({ ...stripe, TOPUP_PRICE_PER_CREDIT: '0.5', TOPUP_CURRENCY: 'eur', TOPUP_MIN_CREDITS: '10', TOPUP_MAX_CREDITS: '20', AUTO_TOPUP_PERIOD_SECONDS: '60' }).payments)
      .to.deep.include({ pricePerCreditMinor: '0.5', currency: 'eur', minCredits: 10, maxCredits: 20, autoTopUpPeriodSeconds: 60, apiBase: undefined });
  });

  it('refuses half a configuration and malformed values at boot', () => {
    const bad: NodeJS.ProcessEnv[] = [
      { STRIPE_SECRET_KEY: 'sk_test_abc123' },
      { STRIPE_WEBHOOK_SECRET: 'whsec_abc123' },
      { ...stripe, STRIPE_SECRET_KEY: 'pk_test_abc' },
      { ...stripe, STRIPE_WEBHOOK_SECRET: 'secret' },
      { ...stripe, STRIPE_API_BASE: 'ftp://x' },
      { ...stripe, TOPUP_PRICE_PER_CREDIT: '1.0000001' },
      { ...stripe, TOPUP_PRICE_PER_CREDIT: '0' },
      { ...stripe, TOPUP_CURRENCY: 'USD' },
      { ...stripe, TOPUP_MIN_CREDITS: '0' },
      { ...stripe, TOPUP_MIN_CREDITS: '200', TOPUP_MAX_CREDITS: '100' },
      { ...stripe, AUTO_TOPUP_PERIOD_SECONDS: '-5' },
      { ...stripe, TOPUP_MAX_CREDITS: '100000000' },
    ];
    for (const env of bad) expect(() => loadConfig(env), JSON.stringify(env)).to.throw(ConfigError);
  });

  it('prices a purchase exactly, rounding up to a whole unit of the currency', () => {
    expect(amountMinorFor(500, '1')).to.equal(500);
    expect(amountMinorFor(101, '1.25')).to.equal(127);
    expect(amountMinorFor(3, '0.333333')).to.equal(1);
    expect(amountMinorFor(100_000, '0.000001')).to.equal(1);
    expect(amountMinorFor(99_999_999, '1')).to.equal(99_999_999);
  });
});
