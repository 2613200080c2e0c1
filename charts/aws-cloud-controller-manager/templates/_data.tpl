{{- /*
The data the generated templates render, computed from the chart's values as
internal/install computes it from install.Values (newTemplateData, args,
sizing): start from "awsccm.base" (the data for the default values, written
by hack/gen-chart) and set what the values change. test/chart renders this
chart for a table of settings and compares every object with
`awsccmctl install manifests`; a change here without the same change in Go
fails it.
*/ -}}

{{- /* awsccm.values: the chart's values with upstream's chart's args folded
into the typed values (awsccm.upstreamArgs), as JSON. */ -}}
{{- define "awsccm.values" -}}
{{- $v := deepCopy .Values -}}
{{- $base := include "awsccm.base" . | fromJson -}}
{{- $parsed := include "awsccm.upstreamArgs" . | fromJson -}}
{{- range $k, $a := $parsed.typed -}}
  {{- if and (hasKey $v $k) (not (kindIs "invalid" (get $v $k))) -}}
    {{- $mine := get $v $k -}}
    {{- if kindIs "slice" $mine }}{{ $mine = join "," $mine }}{{ end -}}
    {{- if kindIs "float64" $mine }}{{ $mine = int64 $mine }}{{ end -}}
    {{- if ne (toString $mine) (toString $a.value) -}}
      {{- fail (printf "args %s conflicts with %s: %v; give one of them, or the same value in both" $a.arg $k (get $v $k)) -}}
    {{- end -}}
  {{- else -}}
    {{- $_ := set $v $k $a.typed -}}
  {{- end -}}
{{- end -}}
{{- $extra := deepCopy ($v.extraArgs | default dict) -}}
{{- range $k, $a := $parsed.extra -}}
  {{- if and (hasKey $extra $k) (ne (toString (get $extra $k)) $a.value) -}}
    {{- fail (printf "args %s conflicts with extraArgs.%s: %v; give one of them" $a.arg $k (get $extra $k)) -}}
  {{- end -}}
  {{- $_ := set $extra $k $a.value -}}
{{- end -}}
{{- $_ := set $v "extraArgs" $extra -}}
{{- toJson $v -}}
{{- end -}}

{{- /* awsccm.image: repository[:tag][@digest]; no tag and no digest: the
chart's appVersion, as install's default is the CLI's version. Upstream's
repository is a different binary: its values mean the chart's default. */ -}}
{{- define "awsccm.image" -}}
{{- $img := .Values.image | default dict -}}
{{- $repo := $img.repository | default "" -}}
{{- $tag := $img.tag | default "" -}}
{{- $digest := $img.digest | default "" -}}
{{- if or (eq $repo "") (eq $repo "registry.k8s.io/provider-aws/cloud-controller-manager") -}}
  {{- $repo = (include "awsccm.base" . | fromJson).defaults.imageRepository -}}
  {{- if ne ($img.repository | default "") "" }}{{ $tag = "" }}{{ $digest = "" }}{{ end -}}
{{- end -}}
{{- if and (eq $tag "") (eq $digest "") }}{{ $tag = .Chart.AppVersion }}{{ end -}}
{{- $repo -}}{{- if $tag }}:{{ $tag }}{{ end -}}{{- if $digest }}@{{ $digest }}{{ end -}}
{{- end -}}

{{- /* awsccm.data: the CCM templates' data (install's templateData). */ -}}
{{- define "awsccm.data" -}}
{{- include "awsccm.refuse" . -}}
{{- $v := include "awsccm.values" . | fromJson -}}
{{- $base := include "awsccm.base" . | fromJson -}}
{{- $defaults := $base.defaults -}}
{{- $workload := $v.workload | default "daemonset" -}}
{{- $d := deepCopy (get $base $workload) -}}
{{- $ns := $v.namespace | default "kube-system" -}}
{{- $_ := set $d "WorkloadType" $workload -}}
{{- $_ := set $d "Namespace" $ns -}}
{{- $_ := set $d "Image" (include "awsccm.image" .) -}}
{{- /* Helm sets app.kubernetes.io/managed-by: Helm on every object it
installs; the pods keep the labels install gives them, so moving between
install and Helm rolls no pod. */ -}}
{{- $labels := deepCopy $d.Labels -}}
{{- $_ := set $labels "app.kubernetes.io/managed-by" .Release.Service -}}
{{- $_ := set $labels "helm.sh/chart" (printf "%s-%s" .Chart.Name (.Chart.Version | replace "+" "_")) -}}
{{- $_ := set $d "Labels" $labels -}}
{{- /* An upgrade of a release made by upstream's chart: its DaemonSet selects
k8s-app=<name>, and the API server refuses a new selector. Keep it, and give
the pods and objects that label too, so `helm upgrade` with this chart is the
whole switch (docs/helm.md). lookup reads the cluster only in helm
install/upgrade; helm template (Argo CD) sees nothing and renders install's
selector. */ -}}
{{- if eq $workload "daemonset" -}}
  {{- $upstreamSelector := dict "k8s-app" $d.Workload -}}
  {{- $live := lookup "apps/v1" "DaemonSet" $ns $d.Workload -}}
  {{- if and $live (eq (toJson ((($live.spec | default dict).selector | default dict).matchLabels | default dict)) (toJson $upstreamSelector)) -}}
    {{- $_ := set $d "SelectorLabels" $upstreamSelector -}}
    {{- $_ := set $d "Labels" (merge (deepCopy $upstreamSelector) $labels) -}}
    {{- $_ := set $d "PodLabels" (merge (deepCopy $upstreamSelector) $d.PodLabels) -}}
  {{- end -}}
{{- end -}}
{{- /* The cloud config: the text as given (install manifests --format
helm-values writes it as install renders it), or [Global] with the region. */ -}}
{{- $ini := $v.cloudConfig | default "" -}}
{{- if and $ini $v.region -}}
  {{- fail "region: set Region in cloudConfig's [Global] section instead, or drop cloudConfig" -}}
{{- end -}}
{{- if not $ini -}}
  {{- $ini = $defaults.cloudConfig -}}
  {{- if $v.region }}{{ $ini = printf "%sRegion = %s\n" $ini $v.region }}{{ end -}}
{{- end -}}
{{- $_ := set $d "ConfigMapData" (dict "cloud.conf" $ini) -}}
{{- $_ := set $d "CloudConfigHash" (sha256sum $ini) -}}
{{- $req := (($v.resources | default dict).requests | default dict) -}}
{{- $_ := set $d "CPURequest" (toString ($req.cpu | default "200m")) -}}
{{- $_ := set $d "MemoryRequest" (toString ($req.memory | default "128Mi")) -}}
{{- $monitoring := ($v.monitoring | default dict).enabled | default false -}}
{{- $_ := set $d "Monitoring" $monitoring -}}
{{- $monitoringLabels := ($v.monitoring | default dict).labels | default dict -}}
{{- if and $monitoringLabels (not $monitoring) -}}
  {{- fail "monitoring.labels: they label the ServiceMonitor and PrometheusRule that monitoring.enabled renders; turn monitoring on, or drop them" -}}
{{- end -}}
{{- range $k, $val := $monitoringLabels -}}
  {{- if hasKey $d.Labels $k }}{{ fail (printf "monitoring.labels %q: set by the chart; remove it" $k) }}{{ end -}}
{{- end -}}
{{- $_ := set $d "MonitoringLabels" (merge (deepCopy $d.Labels) $monitoringLabels) -}}
{{- /* Prometheus scrapes the secure port from another host. */ -}}
{{- $bind := $v.bindAddress | default (ternary $defaults.monitoringBindAddress $defaults.bindAddress $monitoring) -}}
{{- if and $monitoring (or (hasPrefix "127." $bind) (eq $bind "::1")) -}}
  {{- fail (printf "bindAddress %q: monitoring.enabled needs the secure port reachable from Prometheus, and a loopback address is not; leave bindAddress out (monitoring defaults it to %s), set a node address, or turn monitoring off" $bind $defaults.monitoringBindAddress) -}}
{{- end -}}
{{- $_ := set $d "ProbeHost" (ternary "127.0.0.1" $bind (or (eq $bind "0.0.0.0") (eq $bind "::"))) -}}
{{- $nodes := int64 (ternary $defaults.expectedNodes $v.expectedNodes (kindIs "invalid" $v.expectedNodes)) -}}
{{- $_ := set $d "WorkloadAnnotations" (dict "awsccmctl.io/sized-for-nodes" (toString $nodes)) -}}
{{- $_ := set $d "Args" (include "awsccm.args" (dict "v" $v "base" $base "ns" $ns "bind" $bind "nodes" $nodes) | fromJsonArray) -}}
{{- if eq $workload "deployment" -}}
  {{- $_ := set $d "Replicas" (int64 (ternary $defaults.replicas $v.replicas (kindIs "invalid" $v.replicas))) -}}
{{- end -}}
{{- /* The pod options (install.PodOptions). */ -}}
{{- if not (kindIs "invalid" $v.nodeSelector) }}{{ $_ := set $d "NodeSelector" $v.nodeSelector }}{{ end -}}
{{- $_ := set $d "Tolerations" (concat $d.Tolerations ($v.tolerations | default list)) -}}
{{- if $v.priorityClassName }}{{ $_ := set $d "PriorityClassName" $v.priorityClassName }}{{ end -}}
{{- $podLabels := deepCopy $d.PodLabels -}}
{{- range $k, $val := ($v.podLabels | default dict) -}}
  {{- if hasKey $podLabels $k }}{{ fail (printf "podLabels %q: set by the chart (the workload's selector uses it); remove it" $k) }}{{ end -}}
  {{- $_ := set $podLabels $k $val -}}
{{- end -}}
{{- $_ := set $d "PodLabels" $podLabels -}}
{{- $podAnnotations := dict $d.CloudConfigHashKey $d.CloudConfigHash -}}
{{- range $k, $val := ($v.podAnnotations | default dict) -}}
  {{- if hasKey $podAnnotations $k }}{{ fail (printf "podAnnotations %q: set by the chart (a new cloud config rolls the pods through it); remove it" $k) }}{{ end -}}
  {{- $_ := set $podAnnotations $k $val -}}
{{- end -}}
{{- $_ := set $d "PodAnnotations" $podAnnotations -}}
{{- $_ := set $d "ServiceAccountAnnotations" (($v.serviceAccount | default dict).annotations | default dict) -}}
{{- $_ := set $d "DNSPolicy" ($v.dnsPolicy | default "Default") -}}
{{- $_ := set $d "Env" ($v.env | default list) -}}
{{- $_ := set $d "ImagePullSecrets" ($v.imagePullSecrets | default list) -}}
{{- range ($v.extraVolumes | default list) -}}
  {{- if eq .name "cloud-config" }}{{ fail "extraVolumes \"cloud-config\": the name is taken by the cloud config's volume; rename it" }}{{ end -}}
{{- end -}}
{{- $_ := set $d "ExtraVolumes" ($v.extraVolumes | default list) -}}
{{- $_ := set $d "ExtraVolumeMounts" ($v.extraVolumeMounts | default list) -}}
{{- toJson $d -}}
{{- end -}}

{{- /* awsccm.args: the CCM's flags, in install's order (Values.args). */ -}}
{{- define "awsccm.args" -}}
{{- $v := .v -}}
{{- $defaults := .base.defaults -}}
{{- $routes := and (not (kindIs "invalid" $v.configureCloudRoutes)) $v.configureCloudRoutes -}}
{{- if and $routes (not $v.clusterCIDR) -}}
  {{- fail "clusterCIDR: configureCloudRoutes needs the pod CIDR; set clusterCIDR, or turn cloud routes off" -}}
{{- end -}}
{{- $elect := or (kindIs "invalid" $v.leaderElect) $v.leaderElect -}}
{{- $verbosity := int64 (ternary $defaults.verbosity $v.verbosity (kindIs "invalid" $v.verbosity)) -}}
{{- $a := list "--cloud-provider=aws" (printf "--cloud-config=%s" $defaults.cloudConfigPath)
  (printf "--cluster-name=%s" ($v.clusterName | default $defaults.clusterName))
  (printf "--controllers=%s" (join "," ($v.controllers | default (list "*"))))
  (printf "--configure-cloud-routes=%t" $routes) -}}
{{- if $v.clusterCIDR }}{{ $a = append $a (printf "--cluster-cidr=%s" $v.clusterCIDR) }}{{ end -}}
{{- $a = append $a (printf "--leader-elect=%t" $elect) -}}
{{- if $elect -}}
  {{- $a = append $a (printf "--leader-elect-resource-name=%s" $defaults.leaseName) -}}
  {{- $a = append $a (printf "--leader-elect-resource-namespace=%s" .ns) -}}
{{- end -}}
{{- $a = concat $a (list "--use-service-account-credentials=false" (printf "--secure-port=%v" (int64 $defaults.securePort)) (printf "--bind-address=%s" .bind) (printf "--v=%d" $verbosity)) -}}
{{- $extra := $v.extraArgs | default dict -}}
{{- $s := .base.sizing -}}
{{- $n := max .nodes 1 -}}
{{- $m := min $n (mul $s.maxLifecycleWorkers $s.nodesPerLifecycleWorker) -}}
{{- $qps := min (max (div (add (mul $s.requestsPerNode $m) (sub (add $s.burstSeconds $s.joinSeconds) 1)) (add $s.burstSeconds $s.joinSeconds)) $s.defaultQPS) $s.maxQPS -}}
{{- $sized := dict
  "concurrent-node-syncs" (min (max (div (add $qps (sub $s.requestsPerWorker 1)) $s.requestsPerWorker) $s.defaultWorkers) $s.maxWorkers)
  "concurrent-node-lifecycle-syncs" (min (max (div (add $m (sub $s.nodesPerLifecycleWorker 1)) $s.nodesPerLifecycleWorker) $s.defaultLifecycleWorkers) $s.maxLifecycleWorkers)
  "kube-api-qps" $qps
  "kube-api-burst" (min (max (mul $s.burstSeconds $qps) $s.defaultBurst) $s.maxBurst) -}}
{{- range .base.sizingFlags -}}
  {{- if not (hasKey $extra .) }}{{ $a = append $a (printf "--%s=%v" . (int64 (get $sized .))) }}{{ end -}}
{{- end -}}
{{- range $k := keys $extra | sortAlpha -}}
  {{- $val := toString (get $extra $k) -}}
  {{- $type := get $.base.flags $k -}}
  {{- if has $k $.base.managedFlags -}}
    {{- fail (printf "extraArgs %q: set by the chart; use its own value instead (values.yaml)" $k) -}}
  {{- else if not $type -}}
    {{- fail (printf "extraArgs %q: not a flag of aws-cloud-controller-manager (see aws-cloud-controller-manager --help)" $k) -}}
  {{- else if and (eq $type "bool") (not (regexMatch "^(true|false|1|0|t|f|TRUE|FALSE|True|False|T|F)$" $val)) -}}
    {{- fail (printf "extraArgs %q: value %q: not a bool" $k $val) -}}
  {{- else if and (has $type (list "int" "int32")) (not (regexMatch "^[-+]?[0-9]+$" $val)) -}}
    {{- fail (printf "extraArgs %q: value %q: not a %s" $k $val $type) -}}
  {{- else if and (eq $type "duration") (not (regexMatch "^[-+]?(0|([0-9]*(\\.[0-9]*)?(ns|us|µs|ms|s|m|h))+)$" $val)) -}}
    {{- fail (printf "extraArgs %q: value %q: not a duration" $k $val) -}}
  {{- end -}}
  {{- $a = append $a (printf "--%s=%s" $k $val) -}}
{{- end -}}
{{- toJson $a -}}
{{- end -}}

{{- /* awsccm.ecrData: the ecr-credential-provider DaemonSet's data. */ -}}
{{- define "awsccm.ecrData" -}}
{{- $v := .Values -}}
{{- $d := deepCopy (include "awsccm.base" . | fromJson).ecr -}}
{{- $_ := set $d "Enabled" ($v.ecrCredentialProvider | default false) -}}
{{- $_ := set $d "Namespace" ($v.namespace | default "kube-system") -}}
{{- $_ := set $d "Image" (include "awsccm.image" .) -}}
{{- $labels := deepCopy $d.Labels -}}
{{- $_ := set $labels "app.kubernetes.io/managed-by" .Release.Service -}}
{{- $_ := set $labels "helm.sh/chart" (printf "%s-%s" .Chart.Name (.Chart.Version | replace "+" "_")) -}}
{{- $_ := set $d "Labels" $labels -}}
{{- if and $v.ecrCredentialProviderBinDir (not $v.ecrCredentialProvider) -}}
  {{- fail (printf "ecrCredentialProviderBinDir %q: set only with ecrCredentialProvider (the DaemonSet that installs into it)" $v.ecrCredentialProviderBinDir) -}}
{{- end -}}
{{- if $v.ecrCredentialProviderBinDir }}{{ $_ := set $d "HostDir" $v.ecrCredentialProviderBinDir }}{{ end -}}
{{- toJson $d -}}
{{- end -}}
