{{/* The installation namespace (upstream's installation.namespace). */}}
{{- define "kruise-ts.namespace" -}}
{{- .Values.installation.namespace | default "kruise-system" -}}
{{- end }}

{{- define "kruise-ts.labels" -}}
app.kubernetes.io/name: kruise-ts
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{- define "kruise-ts.image" -}}
{{- printf "%s:%s" .Values.manager.image.repository (.Values.manager.image.tag | default .Chart.AppVersion) -}}
{{- end }}

{{/* KRUISE_LOG_LEVEL from a klog verbosity ("4") or a level name. */}}
{{- define "kruise-ts.logLevel" -}}
{{- $level := toString . -}}
{{- if regexMatch "^[0-9]+$" $level -}}
{{- $v := atoi $level -}}
{{- if ge $v 6 }}trace{{ else if eq $v 5 }}debug{{ else }}info{{ end -}}
{{- else -}}
{{- $level -}}
{{- end -}}
{{- end }}

{{- define "kruise-ts.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{- range . }}
- name: {{ if kindIs "string" . }}{{ . }}{{ else }}{{ .name }}{{ end }}
{{- end }}
{{- end }}
{{- end }}

{{/* "true" when kruise-daemon is installed: daemon.enabled, and not turned off by the gate as in upstream's chart. */}}
{{- define "kruise-ts.daemonEnabled" -}}
{{- if and .Values.daemon.enabled (not (contains "KruiseDaemon=false" .Values.featureGates)) }}true{{ end -}}
{{- end }}

{{/* externalCerts.annotations (e.g. cert-manager's inject-ca-from) as lines of a CRD's metadata.annotations. */}}
{{- define "kruise-ts.externalCertsAnnotations" -}}
{{- with .Values.externalCerts.annotations }}
{{- toYaml . | nindent 4 }}
{{- end }}
{{- end }}
