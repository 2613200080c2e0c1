package main

import (
	"bytes"
	"context"
	"fmt"

	"sigs.k8s.io/yaml"

	"k8s.io/kops/pkg/apis/kops"
	"k8s.io/kops/pkg/apis/kops/v1alpha2"
	"k8s.io/kops/pkg/apis/kops/validation"
	"k8s.io/kops/pkg/assets"
	"k8s.io/kops/pkg/client/simple/vfsclientset"
	"k8s.io/kops/pkg/commands"
	"k8s.io/kops/pkg/kopscodecs"
	"k8s.io/kops/upup/pkg/fi/cloudup"
	"k8s.io/kops/upup/pkg/fi/cloudup/awsup"
	"k8s.io/kops/util/pkg/vfs"
)

// The stages, named as the output reports them.
const (
	stageDecode        = "decode"
	stageSet           = "set"
	stageAssignments   = "PerformAssignments"
	stagePopulate      = "PopulateClusterSpec"
	stageDeepValidate  = "DeepValidate"
	stageUpdate        = "ValidateClusterUpdate"
	stageRenderAddon   = "render aws-cloud-controller add-on"
	stateStoreBase     = "memfs://clusters"
	mockZoneLettersAWS = "abc"
)

// check runs the stages of `kops edit cluster --set` (kops v1.31.0,
// cmd/kops/edit_cluster.go: SetClusterFields, then updateCluster) on data,
// offline. An input kops refuses is an *invalidError naming the stage.
func check(ctx context.Context, data []byte, sets []string) (result, error) {
	res := result{}
	passed := func(stage string) { res.Stages = append(res.Stages, stage) }

	stored, igs, err := decode(data)
	if err != nil {
		return res, err
	}
	passed(stageDecode)

	// An in-memory state store: PopulateClusterSpec reads and writes the
	// cluster's configBase, which must be one the store can read.
	vfsContext := vfs.NewVFSContext()
	vfsContext.ResetMemfsContext(true)
	base, err := vfsContext.BuildVfsPath(stateStoreBase)
	if err != nil {
		return res, fmt.Errorf("the in-memory state store: %w", err)
	}
	clientset := vfsclientset.NewVFSClientset(vfsContext, base)
	stored.Spec.ConfigStore.Base = stateStoreBase + "/" + stored.Name

	region, err := awsup.FindRegion(stored)
	if err != nil {
		return res, refused(stageDecode, err)
	}
	if region == "" {
		return res, refused(stageDecode, fmt.Errorf("spec.subnets (v1alpha2) name no zone: the AWS region cannot be found"))
	}
	// The mock serves the lookups the assignments and options builders make
	// (zones, the region); nothing reaches AWS.
	cloud := awsup.BuildMockAWSCloud(region, mockZoneLettersAWS)

	// A cluster in kops' state store went through these assignments when it
	// was created; do the same, so the update check below compares like
	// with like.
	if err := cloudup.PerformAssignments(stored, vfsContext, cloud); err != nil {
		return res, refused(stageAssignments, err)
	}

	cluster := stored.DeepCopy()
	if err := commands.SetClusterFields(sets, cluster); err != nil {
		return res, refused(stageSet, err)
	}
	passed(stageSet)

	if err := cloudup.PerformAssignments(cluster, vfsContext, cloud); err != nil {
		return res, refused(stageAssignments, err)
	}
	passed(stageAssignments)

	assetBuilder := assets.NewAssetBuilder(vfsContext, cluster.Spec.Assets, false)
	full, err := cloudup.PopulateClusterSpec(ctx, clientset, cluster, igs, cloud, assetBuilder)
	if err != nil {
		return res, refused(stagePopulate, err)
	}
	passed(stagePopulate)

	// No cloud: kops create cluster passes none either, and the mock's EC2
	// answers (image lookups) are not what a real account holds.
	if err := validation.DeepValidate(full, igs, true, vfsContext, nil); err != nil {
		return res, refused(stageDeepValidate, err)
	}
	passed(stageDeepValidate)

	// What kops' state store checks before it writes the edited cluster.
	if errs := validation.ValidateClusterUpdate(cluster, &kops.ClusterStatus{}, stored, vfsContext); len(errs) > 0 {
		return res, refusedList(stageUpdate, errs)
	}
	passed(stageUpdate)

	res.Populated = populatedOf(full)
	secrets, err := clientset.SecretStore(full)
	if err != nil {
		return res, fmt.Errorf("the in-memory secret store: %w", err)
	}
	a, err := renderCCMAddon(ctx, full, igs, region, secrets)
	if err != nil {
		return res, fmt.Errorf("%s: %w", stageRenderAddon, err)
	}
	res.Addon = a
	passed(stageRenderAddon)
	res.Valid = true
	return res, nil
}

// decode reads the Cluster and its InstanceGroups. kops' own decoder
// (kopscodecs.Decode) drops unknown fields silently, so each document is
// first decoded strictly into kops' v1alpha2 types: a misspelt field such
// as enableLeaderMigraton must not pass unnoticed.
func decode(data []byte) (*kops.Cluster, []*kops.InstanceGroup, error) {
	var cluster *kops.Cluster
	var igs []*kops.InstanceGroup
	for i, doc := range splitDocuments(data) {
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, nil, refused(stageDecode, fmt.Errorf("document %d: not a YAML object: %w", i+1, err))
		}
		var strict any
		switch meta.Kind {
		case "Cluster":
			strict = &v1alpha2.Cluster{}
		case "InstanceGroup":
			strict = &v1alpha2.InstanceGroup{}
		default:
			return nil, nil, refused(stageDecode, fmt.Errorf("document %d: kind %q: want Cluster or InstanceGroup (kops.k8s.io/v1alpha2)", i+1, meta.Kind))
		}
		if meta.APIVersion != v1alpha2.SchemeGroupVersion.String() {
			return nil, nil, refused(stageDecode, fmt.Errorf("document %d (%s): apiVersion %q: want %s, the version kops 1.26-1.31 store", i+1, meta.Kind, meta.APIVersion, v1alpha2.SchemeGroupVersion))
		}
		if err := yaml.UnmarshalStrict(doc, strict); err != nil {
			return nil, nil, refused(stageDecode, fmt.Errorf("document %d (%s): unknown or mistyped field: %w", i+1, meta.Kind, err))
		}
		obj, _, err := kopscodecs.Decode(doc, nil)
		if err != nil {
			return nil, nil, refused(stageDecode, fmt.Errorf("document %d (%s): %w", i+1, meta.Kind, err))
		}
		switch o := obj.(type) {
		case *kops.Cluster:
			if cluster != nil {
				return nil, nil, refused(stageDecode, fmt.Errorf("document %d: a second Cluster (%s after %s)", i+1, o.Name, cluster.Name))
			}
			cluster = o
		case *kops.InstanceGroup:
			igs = append(igs, o)
		}
	}
	if cluster == nil {
		return nil, nil, refused(stageDecode, fmt.Errorf("no Cluster in the input"))
	}
	if len(igs) == 0 {
		return nil, nil, refused(stageDecode, fmt.Errorf("no InstanceGroup in the input: kops validates a cluster with its instance groups"))
	}
	return cluster, igs, nil
}

// splitDocuments splits a YAML stream on "---" lines, dropping empty
// documents.
func splitDocuments(data []byte) [][]byte {
	var out [][]byte
	var cur bytes.Buffer
	flush := func() {
		if len(bytes.TrimSpace(cur.Bytes())) > 0 {
			out = append(out, bytes.Clone(cur.Bytes()))
		}
		cur.Reset()
	}
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if t := bytes.TrimRight(line, " \t\r\n"); bytes.Equal(t, []byte("---")) {
			flush()
			continue
		}
		cur.Write(line)
	}
	flush()
	return out
}

// populatedOf picks the provider fields out of the completed spec.
func populatedOf(full *kops.Cluster) *populated {
	s := &full.Spec
	p := &populated{
		KubernetesVersion:      s.KubernetesVersion,
		CloudProvider:          string(full.GetCloudProvider()),
		CloudControllerManager: s.ExternalCloudControllerManager,
	}
	if s.KubeAPIServer != nil {
		p.KubeAPIServer.CloudProvider = s.KubeAPIServer.CloudProvider
	}
	if s.KubeControllerManager != nil {
		p.KubeControllerManager = kcmOf{CloudProvider: s.KubeControllerManager.CloudProvider, EnableLeaderMigration: s.KubeControllerManager.EnableLeaderMigration}
	}
	if s.Kubelet != nil {
		p.Kubelet.CloudProvider = s.Kubelet.CloudProvider
	}
	if s.ControlPlaneKubelet != nil {
		p.ControlPlaneKubelet.CloudProvider = s.ControlPlaneKubelet.CloudProvider
	}
	return p
}
