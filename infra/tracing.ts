/**
 * OpenTelemetry tracing, off unless an OTLP/HTTP endpoint is configured. One tracer provider per process,
 * registered globally so that Temporal's interceptors (client -> workflow -> activity) and the outgoing
 * HTTP calls to providers (undici, i.e. fetch) join the API request's trace.
 */
import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

export interface Tracing {
  tracer: Tracer;
  /** Workflow spans leave the sandbox through a sink into this processor (worker/worker.ts). */
  spanProcessor: SpanProcessor;
  resource: Resource;
  stop(): Promise<void>;
}

let active: { tracing: Tracing; users: number } | null = null;

/** Starts tracing for this process (or joins the one already running: one provider per process). */
export function startTracing(opts: { endpoint: string; serviceName: string }): Tracing {
  if (active) {
    active.users++;
    return active.tracing;
  }
  const resource = new Resource({ 'service.name': opts.serviceName });
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url: `${opts.endpoint.replace(/\/+$/, '')}/v1/traces` }), { scheduledDelayMillis: 1000 });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  // Only calls made inside a trace (an activity's upstream call), not every fetch of the process.
  const undici = new UndiciInstrumentation({ requireParentforSpans: true });
  undici.setTracerProvider(provider);
  undici.enable();
  const tracing: Tracing = {
    tracer: provider.getTracer('model-gateway'),
    spanProcessor,
    resource,
    async stop() {
      if (!active || --active.users > 0) return;
      active = null;
      undici.disable();
      await provider.shutdown().catch(() => undefined);
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
  active = { tracing, users: 1 };
  return tracing;
}
