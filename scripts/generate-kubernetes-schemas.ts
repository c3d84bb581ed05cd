/**
 * Writes the JSON schemas kubeconform validates the Helm chart against (deploy/schemas/kubernetes), offline:
 * the kinds the chart renders, from Kubernetes' own OpenAPI document, plus the ServiceMonitor from
 * prometheus-operator's CRD. The flavour is kubeconform's `standalone-strict` (as openapi2jsonschema writes
 * it): every `$ref` inlined, `additionalProperties: false` on every object that lists its properties,
 * `int-or-string` as a string or an integer, optional fields nullable; `apiVersion` and `kind` pinned
 * to the kind's own. Descriptions (documentation only) are left out to keep the files small.
 *
 *   go mod download -json k8s.io/kubernetes@v1.33.13    # prints its Dir; the spec is api/openapi-spec/swagger.json
 *   node dist/scripts/generate-kubernetes-schemas.js <Dir>/api/openapi-spec/swagger.json v1.33.13 \
 *     <prometheus-operator>/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml
 *
 * File names are kubeconform's `{{ .ResourceKind }}{{ .KindSuffix }}.json` (e.g. `deployment-apps-v1.json`)
 * under `<version>-standalone-strict/`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../core/paths';

/** The kinds deploy/helm/model-gateway renders (test/deploy/helm-chart.test.ts fails on any other). */
export const CHART_KINDS = [
  { group: '', version: 'v1', kind: 'ConfigMap' },
  { group: '', version: 'v1', kind: 'Secret' },
  { group: '', version: 'v1', kind: 'Service' },
  { group: 'apps', version: 'v1', kind: 'Deployment' },
  { group: 'batch', version: 'v1', kind: 'Job' },
  { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' },
  { group: 'policy', version: 'v1', kind: 'PodDisruptionBudget' },
  { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' },
] as const;

export const SCHEMAS_DIR = path.join(repoRoot, 'deploy', 'schemas', 'kubernetes');

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** kubeconform's file name: the kind, the group's first label and the version, lower case. */
export function schemaFileName(group: string, version: string, kind: string): string {
  return `${[kind, group.split('.')[0], version].filter(Boolean).join('-').toLowerCase()}.json`;
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Inlines `#/definitions/...` references (a recursive type would loop: none of the chart's kinds has one). */
function inline(node: Json, definitions: JsonObject, trail: string[] = []): Json {
  if (Array.isArray(node)) return node.map((item) => inline(item, definitions, trail));
  if (!isObject(node)) return node;
  const ref = node.$ref;
  if (typeof ref === 'string') {
    const name = ref.replace(/^#\/definitions\//, '');
    if (trail.includes(name)) throw new Error(`recursive reference ${[...trail, name].join(' -> ')}`);
    const target = definitions[name];
    if (!isObject(target)) throw new Error(`unknown reference ${ref}`);
    const { $ref: _ref, ...siblings } = node;
    return inline({ ...target, ...siblings }, definitions, [...trail, name]);
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inline(value, definitions, trail)]));
}

/** Drops documentation (`description` strings; a property named `description` is an object and stays). */
function withoutDescriptions(node: Json): Json {
  if (Array.isArray(node)) return node.map(withoutDescriptions);
  if (!isObject(node)) return node;
  return Object.fromEntries(Object.entries(node).filter(([key, value]) => !(key === 'description' && typeof value === 'string')).map(([key, value]) => [key, withoutDescriptions(value)]));
}

/** `additionalProperties: false` on every object that lists properties and says nothing else (openapi2jsonschema `--strict`). */
function strict(node: Json, skipRoot = false): Json {
  if (Array.isArray(node)) return node.map((item) => strict(item));
  if (!isObject(node)) return node;
  const out: JsonObject = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, strict(value)]));
  if (!skipRoot && 'properties' in out && !('additionalProperties' in out) && out['x-kubernetes-preserve-unknown-fields'] !== true) out.additionalProperties = false;
  return out;
}

/** `format: int-or-string` (a port, a percentage) becomes either type. */
function intOrString(node: Json): Json {
  if (Array.isArray(node)) return node.map(intOrString);
  if (!isObject(node)) return node;
  if (node.format === 'int-or-string') return { oneOf: [{ type: 'string' }, { type: 'integer' }] };
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, intOrString(value)]));
}

/** openapi2jsonschema's `allow_null_optional_fields`: a `type` becomes `[type, "null"]` unless its object's parent lists `required`. */
function nullableOptional(node: Json, parent?: Json, grandParent?: Json): Json {
  if (Array.isArray(node)) return node.map((item) => nullableOptional(item, node, grandParent));
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (typeof value === 'string' && key === 'type' && value !== 'null') {
      out[key] = isObject(grandParent) && 'required' in grandParent ? value : [value, 'null'];
    } else {
      out[key] = nullableOptional(value, node, parent);
    }
  }
  return out;
}

export function kubernetesSchema(swagger: JsonObject, group: string, version: string, kind: string): JsonObject {
  const definitions = swagger.definitions as JsonObject;
  const name = Object.keys(definitions).find((key) => {
    const gvks = (definitions[key] as JsonObject)['x-kubernetes-group-version-kind'];
    return Array.isArray(gvks) && gvks.some((g) => isObject(g) && g.group === group && g.version === version && g.kind === kind);
  });
  if (!name) throw new Error(`no definition for ${group || 'core'}/${version} ${kind}`);
  const definition = structuredClone(definitions[name]) as JsonObject;
  const properties = definition.properties as JsonObject;
  properties.apiVersion = { ...(properties.apiVersion as JsonObject), enum: [group ? `${group}/${version}` : version] };
  properties.kind = { ...(properties.kind as JsonObject), enum: [kind] };
  let schema = inline(definition, definitions) as JsonObject;
  schema = { $schema: 'http://json-schema.org/schema#', type: 'object', ...withoutDescriptions(schema) as JsonObject };
  schema = strict(schema) as JsonObject;
  schema.properties = nullableOptional(intOrString(schema.properties)) as JsonObject;
  return schema;
}

/** A CRD version's openAPIV3Schema, strict below the root (openapi2jsonschema's CRD mode). */
export function crdSchema(crdYaml: string, version: string): { fileName: string; schema: JsonObject } {
  const crd = parseAllDocuments(crdYaml).map((d) => d.toJS() as JsonObject).find((d) => d?.kind === 'CustomResourceDefinition');
  if (!crd) throw new Error('no CustomResourceDefinition in the file');
  const spec = crd.spec as JsonObject;
  const served = (spec.versions as JsonObject[]).find((v) => v.name === version);
  const openApi = isObject(served?.schema) ? (served.schema as JsonObject).openAPIV3Schema : undefined;
  if (!isObject(openApi)) throw new Error(`no openAPIV3Schema for ${version}`);
  const kind = (spec.names as JsonObject).kind as string;
  return { fileName: schemaFileName(spec.group as string, version, kind), schema: intOrString(strict(withoutDescriptions(openApi), true)) as JsonObject };
}

function main(argv: string[]): void {
  const [swaggerPath, k8sVersion, serviceMonitorCrd] = argv;
  if (!swaggerPath || !/^v\d+\.\d+\.\d+$/.test(k8sVersion ?? '') || !serviceMonitorCrd) {
    process.stderr.write('usage: node dist/scripts/generate-kubernetes-schemas.js <swagger.json> <vX.Y.Z> <servicemonitors CRD yaml>\n');
    process.exitCode = 2;
    return;
  }
  const swagger = JSON.parse(fs.readFileSync(swaggerPath, 'utf8')) as JsonObject;
  const outDir = path.join(SCHEMAS_DIR, `${k8sVersion}-standalone-strict`);
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  const write = (fileName: string, schema: JsonObject) => {
    fs.writeFileSync(path.join(outDir, fileName), `${JSON.stringify(schema)}\n`);
    process.stdout.write(`${path.relative(repoRoot, path.join(outDir, fileName))}\n`);
  };
  for (const { group, version, kind } of CHART_KINDS) write(schemaFileName(group, version, kind), kubernetesSchema(swagger, group, version, kind));
  const serviceMonitor = crdSchema(fs.readFileSync(serviceMonitorCrd, 'utf8'), 'v1');
  write(serviceMonitor.fileName, serviceMonitor.schema);
}

if (require.main === module) main(process.argv.slice(2));
