/** The request workflows' result sink (workflows/result-sinks.ts), handing outcomes to this process's ResultBroker. */
import type { InjectedSinks } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import { gatewayErrorFromJSON, type SerializedGatewayError } from '../core/errors';
import type { ResultBroker } from '../activities/result-broker';
import type { ResultSinks } from '../workflows/result-sinks';

export function resultSinks(broker: ResultBroker): InjectedSinks<ResultSinks> {
  return {
    results: {
      deliver: { fn: (info: WorkflowInfo, result: unknown) => broker.deliver(info.workflowId, result), callDuringReplay: false },
      fail: {
        fn: (info: WorkflowInfo, error) => broker.fail(info.workflowId, gatewayErrorFromJSON(error as unknown as SerializedGatewayError)),
        callDuringReplay: false,
      },
    },
  };
}
