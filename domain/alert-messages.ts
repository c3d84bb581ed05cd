/** How a budget alert reads in an e-mail and in a chat message. Pure formatting of the payload. */
import type { EmailMessage } from '../infra/notify/email';
import type { ChatMessage } from '../infra/notify/chat-webhook';
import type { BudgetAlertPayload } from './budget-evaluation';

function thresholdText(p: BudgetAlertPayload): string {
  return p.threshold.type === 'percent' ? `${p.threshold.value}% of plan credits (${p.threshold.credits} credits)` : `${p.threshold.credits} credits`;
}

export function alertEmail(p: BudgetAlertPayload, to: string[]): EmailMessage {
  const lines = [
    p.summary,
    '',
    `Workspace: ${p.workspace.name} (${p.workspace.id})`,
    `Billing cycle: ${p.cycle}`,
    `Threshold: ${thresholdText(p)}`,
    `Spent this cycle: ${p.spend} credits`,
    `Balance: ${p.balance} credits`,
    `Alert: ${p.alert_id}`,
  ];
  return { to, subject: `Budget alert: ${p.workspace.name} spent ${p.spend} credits in ${p.cycle}`, text: `${lines.join('\n')}\n` };
}

export function alertChatMessage(p: BudgetAlertPayload): ChatMessage {
  const field = (label: string, value: string) => ({ type: 'mrkdwn', text: `*${label}*\n${value}` });
  return {
    text: p.summary,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: `Budget alert: ${p.workspace.name}` } },
      { type: 'section', text: { type: 'mrkdwn', text: p.summary } },
      {
        type: 'section',
        fields: [
          field('Workspace', `${p.workspace.name} (${p.workspace.id})`),
          field('Billing cycle', p.cycle),
          field('Threshold', thresholdText(p)),
          field('Spent this cycle', `${p.spend} credits`),
          field('Balance', `${p.balance} credits`),
        ],
      },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `Alert ${p.alert_id}` }] },
    ],
  };
}
