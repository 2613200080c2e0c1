{{- /*
Upstream's chart (kubernetes/cloud-provider-aws) takes the CCM's flags as a
list, args, and the names of its objects as values. A values file written for
it works here unchanged: the flags this chart has a value for become that
value (and must agree with it when both are given), the flags it sets itself
must say what it sets, and any other flag becomes an extraArgs entry.
docs/helm.md lists every difference.
*/ -}}

{{- /* awsccm.upstreamArgs: .Values.args parsed, as JSON:
{"typed": {value: {"arg", "value", "typed"}}, "extra": {flag: {"arg", "value"}}}. */ -}}
{{- define "awsccm.upstreamArgs" -}}
{{- $base := include "awsccm.base" . | fromJson -}}
{{- $ns := .Values.namespace | default "kube-system" -}}
{{- $typedFlags := dict "v" "verbosity" "cluster-name" "clusterName" "configure-cloud-routes" "configureCloudRoutes"
  "cluster-cidr" "clusterCIDR" "controllers" "controllers" "leader-elect" "leaderElect" "bind-address" "bindAddress" -}}
{{- /* What the chart sets itself: given in args, the flag must say the same. */ -}}
{{- $fixed := dict "cloud-provider" "aws" "allocate-node-cidrs" "false" "use-service-account-credentials" "false"
  "secure-port" (toString (int64 $base.defaults.securePort)) "leader-elect-resource-name" $base.defaults.leaseName
  "leader-elect-resource-namespace" $ns -}}
{{- $why := dict
  "cloud-provider" "this chart runs the AWS provider"
  "allocate-node-cidrs" "the CCM allocates no node CIDRs; run kube-controller-manager with --allocate-node-cidrs=true --cluster-cidr=<pod CIDR>"
  "use-service-account-credentials" "every controller uses the CCM's own ServiceAccount; per-controller ServiceAccounts would need the right to mint any kube-system ServiceAccount's token (docs/reference/rbac.md)"
  "secure-port" "the probes and the metrics Service use 10258"
  "leader-elect-resource-name" "the ClusterRole grants the CCM its own Lease only"
  "leader-elect-resource-namespace" "the CCM elects its leader in its own namespace"
  "cloud-config" "the chart mounts the cloud config from its ConfigMap: put the file's text in cloudConfig"
  "enable-leader-migration" "awsccmctl migrate-from-intree runs leader migration; the chart does not"
  "leader-migration-config" "awsccmctl migrate-from-intree runs leader migration; the chart does not" -}}
{{- $out := dict "typed" dict "extra" dict -}}
{{- $pending := "" -}}
{{- $pendingArg := "" -}}
{{- $pairs := list -}}
{{- range $i, $raw := (.Values.args | default list) -}}
  {{- $a := toString $raw -}}
  {{- if $pending -}}
    {{- $pairs = append $pairs (dict "name" $pending "value" $a "arg" (printf "%s %s" $pendingArg $a)) -}}
    {{- $pending = "" -}}
  {{- else if not (regexMatch "^--[a-z0-9]+(-[a-z0-9]+)*(=.*)?$" $a) -}}
    {{- fail (printf "args[%d] %q: want --flag=value (or --flag, then its value)" $i $a) -}}
  {{- else -}}
    {{- $name := regexReplaceAll "=.*$" (trimPrefix "--" $a) "" -}}
    {{- if contains "=" $a -}}
      {{- $pairs = append $pairs (dict "name" $name "value" (trimPrefix (printf "--%s=" $name) $a) "arg" $a) -}}
    {{- else if eq (get $base.flags $name) "bool" -}}
      {{- $pairs = append $pairs (dict "name" $name "value" "true" "arg" $a) -}}
    {{- else -}}
      {{- $pending = $name -}}
      {{- $pendingArg = $a -}}
    {{- end -}}
  {{- end -}}
{{- end -}}
{{- if $pending }}{{ fail (printf "args: %s has no value" $pendingArg) }}{{ end -}}
{{- range $pairs -}}
  {{- $name := .name -}}
  {{- if hasKey $typedFlags $name -}}
    {{- $key := get $typedFlags $name -}}
    {{- $typed := .value -}}
    {{- $type := get $base.flags $name -}}
    {{- if eq $type "bool" -}}
      {{- if not (has .value (list "true" "false")) }}{{ fail (printf "args %s: want true or false" .arg) }}{{ end -}}
      {{- $typed = eq .value "true" -}}
    {{- else if eq $name "v" -}}
      {{- if not (regexMatch "^[0-9]+$" .value) }}{{ fail (printf "args %s: want a verbosity from 0 to 10" .arg) }}{{ end -}}
      {{- $typed = atoi .value -}}
    {{- else if eq $name "controllers" -}}
      {{- $typed = splitList "," .value -}}
    {{- end -}}
    {{- $_ := set $out.typed $key (dict "arg" .arg "value" .value "typed" $typed) -}}
  {{- else if hasKey $fixed $name -}}
    {{- if ne .value (get $fixed $name) -}}
      {{- fail (printf "args %s: the chart sets --%s=%s (%s); remove the flag" .arg $name (get $fixed $name) (get $why $name)) -}}
    {{- end -}}
  {{- else if hasKey $why $name -}}
    {{- fail (printf "args %s: %s" .arg (get $why $name)) -}}
  {{- else -}}
    {{- $_ := set $out.extra $name (dict "arg" .arg "value" .value) -}}
  {{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{- /* awsccm.refuse: upstream's values this chart cannot honour, refused
with the reason rather than ignored. Upstream's defaults are accepted, so a
copy of its values.yaml installs. */ -}}
{{- define "awsccm.refuse" -}}
{{- $v := .Values -}}
{{- if and (hasKey $v "hostNetworking") (not (kindIs "invalid" $v.hostNetworking)) (not $v.hostNetworking) -}}
  {{- fail "hostNetworking: false: the CCM runs on the host network, since it must initialize Nodes before the CNI is ready on them; remove hostNetworking" -}}
{{- end -}}
{{- range $k := list "securityContext" "podSecurityContext" -}}
  {{- if get $v $k -}}
    {{- fail (printf "%s: the chart runs the CCM with a fixed hardened security context (non-root, read-only root file system, no capabilities, RuntimeDefault seccomp); remove %s" $k $k) -}}
  {{- end -}}
{{- end -}}
{{- if (($v.resources | default dict).limits) -}}
  {{- fail "resources.limits: the chart sets requests only, since a CPU limit throttles and a memory limit OOM-kills the component no Node can be initialized without; remove resources.limits" -}}
{{- end -}}
{{- $names := dict "nameOverride" "aws-cloud-controller-manager" "serviceAccountName" "cloud-controller-manager"
  "clusterRoleName" "system:cloud-controller-manager" "roleBindingName" "cloud-controller-manager:apiserver-authentication-reader"
  "roleName" "extension-apiserver-authentication-reader" -}}
{{- range $k, $want := $names -}}
  {{- if and (get $v $k) (ne (get $v $k) $want) -}}
    {{- fail (printf "%s %q: the chart's object names are fixed (an upgrade applies over them, and awsccmctl install and migrate-from-intree find them by name); remove %s or set it to %q" $k (get $v $k) $k $want) -}}
  {{- end -}}
{{- end -}}
{{- /* The SHA-256 of upstream's default clusterRoleRules (charts 0.0.8 to
0.0.11) as toJson writes them: a copy of its values.yaml is accepted, and its
broader rules are not granted. */ -}}
{{- if and $v.clusterRoleRules (ne ($v.clusterRoleRules | toJson | sha256sum) "5541265c69b9e9fe545894b7bfe7c00ede66ede33a3175db3dbff83d42fa2fd1") -}}
  {{- fail "clusterRoleRules: the chart's ClusterRole grants exactly what the controllers call (docs/reference/rbac.md); remove clusterRoleRules" -}}
{{- end -}}
{{- end -}}
