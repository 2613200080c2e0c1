package install

import (
	"path"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// PodOptions are the CCM pod's settings that clusters commonly set through
// upstream's Helm chart; the fields carry that chart's value names, so a
// values file written for it means the same here. Each adds to what the
// installer renders and none may take away what the CCM needs: the cloud
// config's volume, the selector's labels, the required tolerations.
type PodOptions struct {
	// NodeSelector replaces the workload's node selector; nil keeps the
	// default (the control-plane label for a DaemonSet, none for a
	// Deployment).
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations are added after the ones the CCM needs (upstream's chart
	// replaces its list: here the uninitialized and not-ready tolerations
	// cannot be dropped, or no Node would ever be initialized).
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Env is the container's environment (proxies, AWS_* settings).
	Env []corev1.EnvVar `json:"env,omitempty"`
	// PodAnnotations and PodLabels are added to the pod template.
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`
	PodLabels      map[string]string `json:"podLabels,omitempty"`
	// ImagePullSecrets name Secrets of the CCM's namespace to pull Image.
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// ExtraVolumes and ExtraVolumeMounts are added to the pod and its
	// container.
	ExtraVolumes      []corev1.Volume      `json:"extraVolumes,omitempty"`
	ExtraVolumeMounts []corev1.VolumeMount `json:"extraVolumeMounts,omitempty"`
	// ServiceAccountAnnotations are the ServiceAccount's annotations (IRSA's
	// eks.amazonaws.com/role-arn).
	ServiceAccountAnnotations map[string]string `json:"serviceAccountAnnotations,omitempty"`
	// DNSPolicy is the pod's: Default (the node's resolver, the default:
	// cluster DNS may not run before the CCM initializes Nodes) or
	// ClusterFirstWithHostNet.
	DNSPolicy corev1.DNSPolicy `json:"dnsPolicy,omitempty"`
	// PriorityClassName replaces the default PriorityClass
	// (system-node-critical for a DaemonSet, system-cluster-critical for a
	// Deployment).
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// cloudConfigVolume is the pod's volume of the cloud-config ConfigMap.
const cloudConfigVolume = "cloud-config"

// validatePodOptions checks o; add reports a problem on a field.
func (o *PodOptions) validatePodOptions(add func(field, format string, args ...any)) {
	checkKeys := func(field string, m map[string]string, labels bool) {
		for k, val := range m {
			for _, msg := range validation.IsQualifiedName(k) {
				add(field, " key %q: %s", k, msg)
			}
			if labels {
				for _, msg := range validation.IsValidLabelValue(val) {
					add(field, " %q value %q: %s", k, val, msg)
				}
			}
		}
	}
	checkKeys("nodeSelector", o.NodeSelector, true)
	checkKeys("podLabels", o.PodLabels, true)
	checkKeys("podAnnotations", o.PodAnnotations, false)
	checkKeys("serviceAccountAnnotations", o.ServiceAccountAnnotations, false)
	for _, k := range []string{LabelName, LabelManagedBy} {
		if _, ok := o.PodLabels[k]; ok {
			add("podLabels", " %q: set by the installer (the workload's selector and uninstall use it); remove it", k)
		}
	}
	if _, ok := o.PodAnnotations[AnnotationCloudConfigHash]; ok {
		add("podAnnotations", " %q: set by the installer (a new cloud config rolls the pods through it); remove it", AnnotationCloudConfigHash)
	}
	for i, t := range o.Tolerations {
		switch t.Operator {
		case "", corev1.TolerationOpEqual:
		case corev1.TolerationOpExists:
			if t.Value != "" {
				add("tolerations", "[%d]: operator Exists takes no value", i)
			}
		default:
			add("tolerations", "[%d]: operator %q: want Equal or Exists", i, t.Operator)
		}
		switch t.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			add("tolerations", "[%d]: effect %q: want NoSchedule, PreferNoSchedule or NoExecute", i, t.Effect)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			add("tolerations", "[%d]: an empty key needs operator Exists", i)
		}
	}
	for i, e := range o.Env {
		for _, msg := range validation.IsEnvVarName(e.Name) {
			add("env", "[%d] %q: %s", i, e.Name, msg)
		}
	}
	for i, s := range o.ImagePullSecrets {
		for _, msg := range validation.IsDNS1123Subdomain(s.Name) {
			add("imagePullSecrets", "[%d] %q: %s", i, s.Name, msg)
		}
	}
	o.validateVolumes(add)
	switch o.DNSPolicy {
	case corev1.DNSDefault, corev1.DNSClusterFirstWithHostNet:
	default:
		add("dnsPolicy", " %q: want Default or ClusterFirstWithHostNet (the CCM runs on the host network, before cluster DNS may run)", o.DNSPolicy)
	}
	if o.PriorityClassName != "" {
		for _, msg := range validation.IsDNS1123Subdomain(o.PriorityClassName) {
			add("priorityClassName", " %q: %s", o.PriorityClassName, msg)
		}
	}
}

// validateVolumes: extra volumes have unique names other than the cloud
// config's, and every extra mount names a volume and an absolute path
// other than the cloud config's.
func (o *PodOptions) validateVolumes(add func(field, format string, args ...any)) {
	names := []string{cloudConfigVolume}
	for i, vol := range o.ExtraVolumes {
		for _, msg := range validation.IsDNS1123Label(vol.Name) {
			add("extraVolumes", "[%d] %q: %s", i, vol.Name, msg)
		}
		if slices.Contains(names, vol.Name) {
			add("extraVolumes", "[%d] %q: the name is taken (%q is the cloud config's)", i, vol.Name, cloudConfigVolume)
		}
		names = append(names, vol.Name)
	}
	for i, m := range o.ExtraVolumeMounts {
		if !slices.Contains(names[1:], m.Name) {
			add("extraVolumeMounts", "[%d] %q: no such volume in extraVolumes", i, m.Name)
		}
		if !path.IsAbs(m.MountPath) {
			add("extraVolumeMounts", "[%d] mountPath %q: want an absolute path", i, m.MountPath)
		} else if p := path.Clean(m.MountPath); strings.HasPrefix(p+"/", CloudConfigDir+"/") {
			add("extraVolumeMounts", "[%d] mountPath %q: would hide the cloud config at %s", i, m.MountPath, CloudConfigDir)
		}
	}
}

// applyTo copies every field set in o onto dst. Every field's zero value
// (nil, "") means unset, and a field given empty ({} or []) is set.
func (o *PodOptions) applyTo(dst *PodOptions) {
	src, out := reflect.ValueOf(o).Elem(), reflect.ValueOf(dst).Elem()
	for i := range src.NumField() {
		if f := src.Field(i); !f.IsZero() {
			out.Field(i).Set(f)
		}
	}
}
