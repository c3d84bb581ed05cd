/** Small helpers shared by this family's adapter tests. */
import type { CallContext } from '../../../providers/types';

export { collect, upstreamFailure } from '../../support/adapter-assertions';

export const ctx: CallContext = { requestId: 'req_test', timeoutMs: 5_000 };
