package nodephase

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	yaml "go.yaml.in/yaml/v3"

	"github.com/awsccmctl/awsccmctl/internal/kubeadmapi"
)

// This file makes the control-plane phases' change to the ClusterConfiguration
// in ConfigMap kube-system/kubeadm-config, so that `kubeadm upgrade`, which
// regenerates the static Pods from it, keeps them. The value is machine
// written: it goes through yaml.v3's node tree, which keeps key order and
// comments, and is written back in kubeadm's style.

// EditClusterConfiguration returns the ClusterConfiguration that matches
// phase, computed from original (the ConfigMap's value before the
// migration), so that every call is declarative:
//
//   - PhaseControlPlaneLeaderMigration: controllerManager.extraArgs gets
//     enable-leader-migration=true and leader-migration-config=lmConfigPath,
//     controllerManager.extraVolumes the file's read-only hostPath volume.
//   - PhaseControlPlaneExternal: controllerManager.extraArgs gets
//     cloud-provider=external and loses cloud-config and leader migration
//     (and the volume); apiServer.extraArgs loses cloud-provider,
//     cloud-config and PersistentVolumeLabel from enable-admission-plugins.
//   - PhaseRestore: original, unchanged.
//
// v1beta2 and v1beta3 write extraArgs as a map, v1beta4 as a list of
// {name, value}. When nothing changes the original bytes are returned.
// lmConfigPath "" means LeaderMigrationConfigPath.
func EditClusterConfiguration(original []byte, phase Phase, lmConfigPath string) ([]byte, error) {
	if lmConfigPath == "" {
		lmConfigPath = LeaderMigrationConfigPath
	}
	switch phase {
	case PhaseRestore:
		return original, nil
	case PhaseControlPlaneLeaderMigration, PhaseControlPlaneExternal:
	default:
		return nil, fmt.Errorf("ClusterConfiguration: phase %q has no ClusterConfiguration change (want %s, %s or %s)",
			phase, PhaseControlPlaneLeaderMigration, PhaseControlPlaneExternal, PhaseRestore)
	}
	dec := yaml.NewDecoder(bytes.NewReader(original))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("ClusterConfiguration: not valid YAML: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("ClusterConfiguration: want one YAML document")
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("ClusterConfiguration: not a mapping")
	}
	root := doc.Content[0]
	apiVersion := scalarValue(root, "apiVersion")
	if kind := scalarValue(root, "kind"); kind != kubeadmapi.KindClusterConfiguration {
		return nil, fmt.Errorf("ClusterConfiguration: kind %q, want ClusterConfiguration", kind)
	}
	if !slices.Contains([]string{kubeadmapi.V1beta2, kubeadmapi.V1beta3, kubeadmapi.V1beta4}, apiVersion) {
		return nil, fmt.Errorf("ClusterConfiguration: apiVersion %q is not supported (want %s, %s or %s)", apiVersion, kubeadmapi.V1beta2, kubeadmapi.V1beta3, kubeadmapi.V1beta4)
	}
	e := &ccEditor{list: kubeadmapi.ArgsAreList(apiVersion)}
	var err error
	if phase == PhaseControlPlaneLeaderMigration {
		err = e.leaderMigration(root, lmConfigPath)
	} else {
		err = e.external(root)
	}
	if err != nil {
		return nil, fmt.Errorf("ClusterConfiguration: %w", err)
	}
	if !e.changed {
		return original, nil
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("ClusterConfiguration: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("ClusterConfiguration: %w", err)
	}
	return b.Bytes(), nil
}

// ccEditor edits a ClusterConfiguration's node tree.
type ccEditor struct {
	// list: extraArgs is a list of {name, value} (v1beta4), else a map.
	list    bool
	changed bool
}

func (e *ccEditor) leaderMigration(root *yaml.Node, lmPath string) error {
	cm, err := e.mapping(root, "controllerManager")
	if err != nil {
		return err
	}
	if err := e.setArg(cm, flagEnableLeaderMigration, "true"); err != nil {
		return err
	}
	if err := e.setArg(cm, flagLeaderMigrationConfig, lmPath); err != nil {
		return err
	}
	vols, err := e.sequence(cm, "extraVolumes")
	if err != nil {
		return err
	}
	for _, v := range vols.Content {
		name := scalarValue(v, "name")
		host := scalarValue(v, "hostPath")
		if name == LeaderMigrationVolumeName {
			if host != lmPath {
				return fmt.Errorf("controllerManager.extraVolumes has %s with hostPath %s, want %s", name, host, lmPath)
			}
			return nil
		}
	}
	// Keys in kubeadm's (alphabetical) order.
	vol := mappingNode("hostPath", lmPath, "mountPath", lmPath, "name", LeaderMigrationVolumeName, "pathType", "File")
	vol.Content = append(vol.Content, scalarNode("readOnly"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	vols.Content = append(vols.Content, vol)
	e.changed = true
	return nil
}

func (e *ccEditor) external(root *yaml.Node) error {
	cm, err := e.mapping(root, "controllerManager")
	if err != nil {
		return err
	}
	if err := e.setArg(cm, flagCloudProvider, providerExternal); err != nil {
		return err
	}
	for _, f := range []string{flagCloudConfig, flagEnableLeaderMigration, flagLeaderMigrationConfig} {
		if err := e.removeArg(cm, f, ""); err != nil {
			return err
		}
	}
	if _, vols := lookup(cm, "extraVolumes"); vols != nil && vols.Kind == yaml.SequenceNode {
		n := len(vols.Content)
		vols.Content = slices.DeleteFunc(vols.Content, func(v *yaml.Node) bool {
			name := scalarValue(v, "name")
			return name == LeaderMigrationVolumeName
		})
		if len(vols.Content) != n {
			e.changed = true
			if len(vols.Content) == 0 {
				kubeadmapi.DeleteKey(cm, "extraVolumes")
			}
		}
	}
	if _, api := lookup(root, "apiServer"); api != nil && api.Kind == yaml.MappingNode {
		for _, f := range []string{flagCloudProvider, flagCloudConfig} {
			if err := e.removeArg(api, f, ""); err != nil {
				return err
			}
		}
		if err := e.removeArg(api, flagAdmissionPlugins, pluginPVL); err != nil {
			return err
		}
	}
	return nil
}

// mapping returns the mapping under key, created (at the end) when absent.
func (e *ccEditor) mapping(parent *yaml.Node, key string) (*yaml.Node, error) {
	_, v := lookup(parent, key)
	switch {
	case v == nil:
		v = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		kubeadmapi.InsertKey(parent, key, v)
		e.changed = true
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
		v.Kind, v.Tag, v.Value = yaml.MappingNode, "!!map", ""
	case v.Kind != yaml.MappingNode:
		return nil, fmt.Errorf("%s is not a mapping", key)
	}
	if len(v.Content) == 0 {
		v.Style = 0 // "{}" becomes a block mapping when filled
	}
	return v, nil
}

// sequence returns the sequence under key, created when absent.
func (e *ccEditor) sequence(parent *yaml.Node, key string) (*yaml.Node, error) {
	_, v := lookup(parent, key)
	switch {
	case v == nil:
		v = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		kubeadmapi.InsertKey(parent, key, v)
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
		v.Kind, v.Tag, v.Value = yaml.SequenceNode, "!!seq", ""
	case v.Kind != yaml.SequenceNode:
		return nil, fmt.Errorf("%s is not a list", key)
	}
	if len(v.Content) == 0 {
		v.Style = 0 // "[]" becomes a block sequence when filled
	}
	return v, nil
}

func scalarNode(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}

// mappingNode builds a block mapping of string keys and values.
func mappingNode(kv ...string) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, s := range kv {
		m.Content = append(m.Content, scalarNode(s))
	}
	return m
}

// setArg gives flag name the value in the component's extraArgs.
func (e *ccEditor) setArg(comp *yaml.Node, name, value string) error {
	changed, err := kubeadmapi.EditArgs(comp, "extraArgs", e.list).Set(name, value)
	e.changed = e.changed || changed
	return err
}

// removeArg removes flag name from the component's extraArgs; with item,
// it removes that item of the flag's comma-separated list instead (and the
// flag when the list becomes empty).
func (e *ccEditor) removeArg(comp *yaml.Node, name, item string) error {
	changed, err := kubeadmapi.EditArgs(comp, "extraArgs", e.list).Remove(name, item)
	e.changed = e.changed || changed
	return err
}
