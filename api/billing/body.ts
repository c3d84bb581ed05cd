/** JSON Schema of `POST /v1/billing/topups`. */
import { compileSchema } from '../../endpoints/validate';

export const topupSchema = {
  type: 'object',
  required: ['credits'],
  properties: {
    credits: { type: 'number', exclusiveMinimum: 0, maximum: 1_000_000_000 },
  },
  additionalProperties: false,
} as const;

export interface TopupBody {
  credits: number;
}

export const validateTopupBody = compileSchema<TopupBody>(topupSchema);
