{{- define "model-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "model-gateway.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "model-gateway.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "model-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component (api, worker, migrate): call with (dict "root" $ "component" "api"). */}}
{{- define "model-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "model-gateway.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "model-gateway.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The chart's Secret (values given in values.yaml). */}}
{{- define "model-gateway.secretName" -}}
{{ include "model-gateway.fullname" . }}
{{- end -}}

{{/* The Secret holding TEMPORAL_CODEC_KEYS, OPERATOR_TOKEN, CAPTCHA_SECRET (SMTP_URL, REDIS_URL). */}}
{{- define "model-gateway.gatewaySecretName" -}}
{{ .Values.secrets.existingSecret | default (include "model-gateway.secretName" .) }}
{{- end -}}

{{- define "model-gateway.temporalTls" -}}
{{- if or .Values.temporal.tls.enabled .Values.temporal.tls.existingSecret .Values.temporal.apiKey.value .Values.temporal.apiKey.existingSecret -}}
true
{{- else -}}
false
{{- end -}}
{{- end -}}

{{/* Fails rendering with a clear message when a required value is missing or two exclude each other. */}}
{{- define "model-gateway.validate" -}}
{{- if not .Values.gateway.publicUrl -}}
{{- fail "gateway.publicUrl is required (PUBLIC_URL: the address people open, e.g. https://gateway.example.com)" -}}
{{- end -}}
{{- if not .Values.temporal.address -}}
{{- fail "temporal.address is required (TEMPORAL_ADDRESS, host:port of the Temporal frontend or Temporal Cloud)" -}}
{{- end -}}
{{- if and (not .Values.database.url) (not .Values.database.existingSecret) -}}
{{- fail "database.url or database.existingSecret is required (DATABASE_URL)" -}}
{{- end -}}
{{- if not .Values.s3.endpoint -}}
{{- fail "s3.endpoint is required (S3_ENDPOINT)" -}}
{{- end -}}
{{- if and (not .Values.s3.existingSecret) (or (not .Values.s3.accessKeyId) (not .Values.s3.secretAccessKey)) -}}
{{- fail "s3.accessKeyId and s3.secretAccessKey, or s3.existingSecret, are required" -}}
{{- end -}}
{{- if and (not .Values.secrets.existingSecret) (or (not .Values.secrets.codecKeys) (not .Values.secrets.operatorToken)) -}}
{{- fail "secrets.codecKeys and secrets.operatorToken, or secrets.existingSecret, are required (TEMPORAL_CODEC_KEYS, OPERATOR_TOKEN)" -}}
{{- end -}}
{{- if and .Values.temporal.apiKey.value .Values.temporal.apiKey.existingSecret -}}
{{- fail "temporal.apiKey: give value or existingSecret, not both" -}}
{{- end -}}
{{- end -}}

{{/*
Environment from Secrets, by reference only (no secret value is ever written into a pod spec or a ConfigMap).
Call with (dict "root" $ "secretName" <the chart's Secret, or the hook's copy> "migrate" <bool>): the
migration Job needs only DATABASE_URL and TEMPORAL_CODEC_KEYS.
*/}}
{{- define "model-gateway.secretEnv" -}}
{{- $v := .root.Values -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $v.database.existingSecret | default .secretName }}
      key: {{ ternary $v.database.existingSecretKey "DATABASE_URL" (not (empty $v.database.existingSecret)) }}
- name: TEMPORAL_CODEC_KEYS
  valueFrom:
    secretKeyRef:
      name: {{ $v.secrets.existingSecret | default .secretName }}
      key: TEMPORAL_CODEC_KEYS
{{- if not .migrate }}
- name: OPERATOR_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "model-gateway.gatewaySecretName" .root }}
      key: OPERATOR_TOKEN
- name: CAPTCHA_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ include "model-gateway.gatewaySecretName" .root }}
      key: CAPTCHA_SECRET
{{- if or $v.secrets.existingSecret $v.secrets.smtpUrl }}
- name: SMTP_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "model-gateway.gatewaySecretName" .root }}
      key: SMTP_URL
      optional: true
{{- end }}
{{- if or $v.secrets.existingSecret $v.secrets.redisUrl }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "model-gateway.gatewaySecretName" .root }}
      key: REDIS_URL
      optional: true
{{- end }}
- name: S3_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ $v.s3.existingSecret | default .secretName }}
      key: {{ ternary $v.s3.accessKeyIdKey "S3_ACCESS_KEY_ID" (not (empty $v.s3.existingSecret)) }}
- name: S3_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $v.s3.existingSecret | default .secretName }}
      key: {{ ternary $v.s3.secretAccessKeyKey "S3_SECRET_ACCESS_KEY" (not (empty $v.s3.existingSecret)) }}
{{- if or $v.temporal.apiKey.value $v.temporal.apiKey.existingSecret }}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $v.temporal.apiKey.existingSecret | default .secretName }}
      key: {{ ternary $v.temporal.apiKey.existingSecretKey "TEMPORAL_API_KEY" (not (empty $v.temporal.apiKey.existingSecret)) }}
{{- end }}
{{- range $name, $_ := $v.providers.apiKeys }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $.secretName }}
      key: {{ $name }}
{{- end }}
{{- end }}
{{- end -}}

{{/* envFrom of a gateway container: the ConfigMap, then the providers' existing Secret. */}}
{{- define "model-gateway.envFrom" -}}
- configMapRef:
    name: {{ include "model-gateway.fullname" . }}
{{- if .Values.providers.existingSecret }}
- secretRef:
    name: {{ .Values.providers.existingSecret }}
{{- end }}
{{- end -}}

{{/* Volumes every gateway pod mounts: /tmp (the root filesystem is read-only) and the Temporal client certificate. */}}
{{- define "model-gateway.volumes" -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ .Values.tmpSizeLimit }}
{{- if .Values.temporal.tls.existingSecret }}
- name: temporal-tls
  secret:
    secretName: {{ .Values.temporal.tls.existingSecret }}
    defaultMode: 0440
{{- end }}
{{- end -}}

{{- define "model-gateway.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
{{- if .Values.temporal.tls.existingSecret }}
- name: temporal-tls
  mountPath: /etc/gateway/temporal-tls
  readOnly: true
{{- end }}
{{- end -}}

{{/* Pod-level settings shared by the Deployments and the migration Job. */}}
{{- define "model-gateway.podCommon" -}}
automountServiceAccountToken: false
{{- if .Values.serviceAccountName }}
serviceAccountName: {{ .Values.serviceAccountName }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end -}}
