/**
 * How errors are written into workflow histories. Messages (which may quote an upstream's answer, and so a
 * prompt) move into an encoded attribute that the payload codec encrypts; stack traces are dropped, since
 * they name install paths and the gateway's typed errors carry everything an operator needs. Dropping them
 * here covers activities and workflow code alike (the workflow sandbox loads this module by path).
 */
import { DefaultFailureConverter, type PayloadConverter, type ProtoFailure, type SerializationContext } from '@temporalio/common';

class StacklessEncodedFailureConverter extends DefaultFailureConverter {
  constructor() {
    super({ encodeCommonAttributes: true });
  }

  override errorToFailureInner(err: unknown, payloadConverter: PayloadConverter, context?: SerializationContext): ProtoFailure {
    return { ...super.errorToFailureInner(err, payloadConverter, context), stackTrace: '' };
  }
}

export const failureConverter = new StacklessEncodedFailureConverter();
