/** JSON Schema of `POST /v1/budget/alerts` (addresses and URLs are checked again in domain/budget-alerts.ts). */
import type { AlertChannels, ThresholdType } from '../../domain/budget-alerts';
import { compileSchema } from '../../endpoints/validate';

export const budgetAlertSchema = {
  type: 'object',
  required: ['threshold_type', 'threshold', 'channels'],
  properties: {
    threshold_type: { enum: ['credits', 'percent'] },
    // Credits (a percent threshold is checked against its own range in domain/budget-alerts.ts).
    threshold: { type: 'number', exclusiveMinimum: 0, maximum: 1_000_000_000 },
    channels: {
      type: 'object',
      minProperties: 1,
      properties: {
        email: {
          type: 'object',
          required: ['to'],
          properties: { to: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', minLength: 3, maxLength: 254 } } },
          additionalProperties: false,
        },
        webhook: {
          type: 'object',
          required: ['url'],
          properties: { url: { type: 'string', minLength: 8, maxLength: 2048 } },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

export interface BudgetAlertBody {
  threshold_type: ThresholdType;
  threshold: number;
  channels: AlertChannels;
}

export const validateBudgetAlertBody = compileSchema<BudgetAlertBody>(budgetAlertSchema);
