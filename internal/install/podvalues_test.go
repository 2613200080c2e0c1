package install

import (
	"reflect"
	"testing"
)

// TestConfigurationAppliesPodOptions: the InstallConfiguration's pod
// options reach Values under upstream's chart's names; a field given empty
// ({}: no node selector at all) is set, and one left out keeps its value.
func TestConfigurationAppliesPodOptions(t *testing.T) {
	c, err := DecodeConfig([]byte(`apiVersion: awsccmctl.io/v1alpha1
kind: InstallConfiguration
nodeSelector: {}
tolerations: [{key: dedicated, operator: Exists}]
env: [{name: HTTPS_PROXY, value: "http://proxy:3128"}]
podLabels: {team: platform}
serviceAccountAnnotations: {eks.amazonaws.com/role-arn: "arn:aws:iam::123456789012:role/ccm"}
dnsPolicy: ClusterFirstWithHostNet
`))
	if err != nil {
		t.Fatal(err)
	}
	v := Values{PodOptions: PodOptions{PriorityClassName: "kept", PodAnnotations: map[string]string{"kept": "yes"}}}
	if err := c.ApplyTo(&v); err != nil {
		t.Fatal(err)
	}
	want := PodOptions{
		NodeSelector:              map[string]string{},
		Tolerations:               c.Tolerations,
		Env:                       c.Env,
		PodLabels:                 map[string]string{"team": "platform"},
		ServiceAccountAnnotations: map[string]string{"eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/ccm"},
		DNSPolicy:                 "ClusterFirstWithHostNet",
		PriorityClassName:         "kept",
		PodAnnotations:            map[string]string{"kept": "yes"},
	}
	if !reflect.DeepEqual(v.PodOptions, want) || v.NodeSelector == nil {
		t.Errorf("pod options %+v, want %+v", v.PodOptions, want)
	}
	if len(v.Tolerations) != 1 || v.Tolerations[0].Key != "dedicated" || len(v.Env) != 1 {
		t.Errorf("tolerations %v, env %v", v.Tolerations, v.Env)
	}
}
