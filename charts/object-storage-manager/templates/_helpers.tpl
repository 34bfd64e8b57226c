{{/*
The prefix of every object's name: the release name, or fullnameOverride. `helm install
object-storage-manager ...` gives the names config/default gives
(object-storage-manager-controller-manager, ...). At most 28 characters, so that the longest
name made from it, <prefix>-controller-manager-metrics-service, is a valid Service name.
*/}}
{{- define "osm.fullname" -}}
{{- $name := .Values.fullnameOverride | default .Release.Name -}}
{{- if gt (len $name) 28 -}}
{{- fail (printf "the release name %q is longer than 28 characters, too long for the Service names made from it: set fullnameOverride" $name) -}}
{{- end -}}
{{- $name -}}
{{- end -}}

{{- define "osm.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "osm.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
control-plane: controller-manager
{{- end -}}

{{- define "osm.serviceAccount" -}}
{{ include "osm.fullname" . }}-controller-manager
{{- end -}}

{{- define "osm.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{- define "osm.selfCerts" -}}
{{- if and .Values.webhook.enabled (eq .Values.webhook.certificates "self") }}true{{ end -}}
{{- end -}}

{{- define "osm.certManager" -}}
{{- if and .Values.webhook.enabled (eq .Values.webhook.certificates "certManager") }}true{{ end -}}
{{- end -}}
