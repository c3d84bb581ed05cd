import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../../config/env';

describe('config: AWS Bedrock (BEDROCK_*)', () => {
  const keys = { BEDROCK_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE', BEDROCK_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };

  it('accepts a region alone (the default chain), static keys, or a role with its STS endpoint', () => {
    expect(() => loadConfig({ BEDROCK_REGION: 'us-east-1' })).not.to.throw();
    expect(() => loadConfig({ BEDROCK_REGION: 'eu-central-1', ...keys, BEDROCK_SESSION_TOKEN: 'FwoGZXIvYXdzEXAMPLE//token', BEDROCK_BASE_URL: 'https://bedrock-runtime.eu-central-1.amazonaws.com' })).not.to.throw();
    expect(() => loadConfig({
      BEDROCK_REGION: 'us-gov-west-1', BEDROCK_ROLE_ARN: 'arn:aws-us-gov:iam::123456789012:role/path/gateway', BEDROCK_ROLE_SESSION_NAME: 'gw',
      BEDROCK_ROLE_EXTERNAL_ID: 'ext-1', BEDROCK_STS_ENDPOINT: 'https://sts.us-gov-west-1.amazonaws.com', BEDROCK_TIMEOUT_MS: '90000',
    })).not.to.throw();
  });

  it('refuses malformed values and half a configuration at boot, naming the variable', () => {
    const bad: Array<[NodeJS.ProcessEnv, RegExp]> = [
      [{ BEDROCK_REGION: 'US East' }, /BEDROCK_REGION/],
      [{ BEDROCK_REGION: 'us-east-1', BEDROCK_BASE_URL: 'bedrock-runtime.us-east-1.amazonaws.com' }, /BEDROCK_BASE_URL/],
      [{ BEDROCK_REGION: 'us-east-1', BEDROCK_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE' }, /BEDROCK_SECRET_ACCESS_KEY/],
      [{ BEDROCK_REGION: 'us-east-1', BEDROCK_SECRET_ACCESS_KEY: keys.BEDROCK_SECRET_ACCESS_KEY }, /BEDROCK_ACCESS_KEY_ID/],
      [keys, /BEDROCK_REGION/],
      [{ BEDROCK_REGION: 'us-east-1', BEDROCK_ROLE_ARN: 'gateway-bedrock' }, /BEDROCK_ROLE_ARN/],
      [{ BEDROCK_REGION: 'us-east-1', BEDROCK_STS_ENDPOINT: 'http://127.0.0.1:9999' }, /BEDROCK_ROLE_ARN/],
      [{ BEDROCK_REGION: 'us-east-1', BEDROCK_TIMEOUT_MS: '0' }, /BEDROCK_TIMEOUT_MS/],
    ];
    for (const [env, named] of bad) {
      expect(() => loadConfig(env), JSON.stringify(env)).to.throw(ConfigError, named);
    }
  });
});
