{{/* Labels every object carries: the chart's, and the part-of label the Kustomize base gives. */}}
{{- define "portcullis.labels" -}}
app.kubernetes.io/part-of: portcullis
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* The files of the portcullis-config ConfigMap: the chart's files/ (gateway.yaml through tpl), or the values'. */}}
{{- define "portcullis.configFiles" -}}
{{- if .Values.config.files }}
{{- toYaml .Values.config.files }}
{{- else }}
{{- range $path, $_ := .Files.Glob "files/*" }}
{{ base $path }}: |
{{- if eq (base $path) "gateway.yaml" }}
{{ tpl ($.Files.Get $path) $ | indent 2 }}
{{- else }}
{{ $.Files.Get $path | indent 2 }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* The volume the engine and the service read /etc/portcullis from: the ConfigMap, and the signing keys. */}}
{{- define "portcullis.configVolume" -}}
- name: config
{{- if .Values.signingKeys.existingSecret }}
  projected:
    sources:
      - configMap: { name: portcullis-config }
      - secret:
          name: {{ .Values.signingKeys.existingSecret }}
          items:
            - { key: {{ .Values.signingKeys.key }}, path: signing-keys.json }
{{- else }}
  configMap: { name: portcullis-config }
{{- end }}
- name: tmp
  emptyDir: {}
{{- end }}
