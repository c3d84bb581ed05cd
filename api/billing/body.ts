/** JSON Schemas of `POST /v1/billing/topups` and `PUT /v1/billing/auto-topup`. */
import { compileSchema } from '../../endpoints/validate';

export const topupSchema = {
  type: 'object',
  required: ['credits'],
  properties: {
    credits: { type: 'integer', minimum: 1, maximum: 1_000_000_000 },
  },
  additionalProperties: false,
} as const;

export interface TopupBody {
  credits: number;
}

export const validateTopupBody = compileSchema<TopupBody>(topupSchema);

export const autoTopUpSchema = {
  type: 'object',
  required: ['enabled'],
  properties: {
    enabled: { type: 'boolean' },
    threshold: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
    credits: { type: 'integer', minimum: 1, maximum: 1_000_000_000 },
  },
  additionalProperties: false,
} as const;

export interface AutoTopUpBody {
  enabled: boolean;
  threshold?: number;
  credits?: number;
}

export const validateAutoTopUpBody = compileSchema<AutoTopUpBody>(autoTopUpSchema);
