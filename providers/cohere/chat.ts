/**
 * Cohere chat through its Compatibility API, which speaks OpenAI's chat completions format (messages,
 * tools, JSON mode, streaming) at `/compatibility/v1/chat/completions`. It answers one choice per call.
 */
import type { Connection } from '../connection';
import { OpenAICompatibleChatModel } from '../openai-compatible/chat';

export const COHERE_CHAT_PATH = '/compatibility/v1/chat/completions';

export class CohereChatModel extends OpenAICompatibleChatModel {
  constructor(connection: Connection, model: string) {
    super(connection, model, { maxCompletionTokens: false, nativeChoices: false, path: COHERE_CHAT_PATH });
  }
}
