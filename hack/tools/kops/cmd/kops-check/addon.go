package main

import (
	"bytes"
	"context"
	"fmt"
	"io"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"k8s.io/kops/pkg/apis/kops"
	"k8s.io/kops/pkg/model"
	"k8s.io/kops/pkg/model/iam"
	"k8s.io/kops/pkg/templates"
	"k8s.io/kops/upup/models"
	"k8s.io/kops/upup/pkg/fi"
	"k8s.io/kops/upup/pkg/fi/cloudup"
)

// ccmAddonTemplate is kops' AWS CCM add-on (embedded in kops' models),
// which kops v1.31.0 applies on every AWS cluster of Kubernetes 1.18+.
const (
	ccmAddonTemplate  = "addons/aws-cloud-controller.addons.k8s.io/k8s-1.18.yaml"
	ccmContainerName  = "aws-cloud-controller-manager"
	ccmDaemonSetName  = "aws-cloud-controller-manager"
	kopsResourcesBase = "cloudup/resources"
)

// renderCCMAddon renders kops' CCM add-on from the populated spec with kops'
// own template functions (the args come from CloudControllerConfigArgv,
// i.e. from spec.cloudControllerManager), and returns the DaemonSet's image
// and args.
func renderCCMAddon(ctx context.Context, full *kops.Cluster, igs []*kops.InstanceGroup, region string, secrets fi.SecretStore) (*addon, error) {
	tmpl, err := templates.LoadTemplates(ctx, full, models.NewAssetPath(kopsResourcesBase))
	if err != nil {
		return nil, fmt.Errorf("load kops' templates: %w", err)
	}
	// The template functions the add-on uses read the cluster only; the
	// cloud (unexported) is used by other clouds' functions alone. The
	// secret store is the empty in-memory one: some networking's functions
	// (Cilium's) look a secret up as they are added.
	tf := &cloudup.TemplateFunctions{KopsModelContext: model.KopsModelContext{
		IAMModelContext:   iam.IAMModelContext{Cluster: full},
		AllInstanceGroups: igs,
		InstanceGroups:    igs,
		Region:            region,
	}}
	if err := tf.AddTo(tmpl.TemplateFunctions, secrets); err != nil {
		return nil, fmt.Errorf("kops' template functions: %w", err)
	}
	r := tmpl.Find(ccmAddonTemplate)
	if r == nil {
		return nil, fmt.Errorf("kops has no template %s", ccmAddonTemplate)
	}
	rd, err := r.Open()
	if err != nil {
		return nil, err
	}
	rendered, err := io.ReadAll(rd)
	if err != nil {
		return nil, err
	}
	return ccmContainerOf(rendered)
}

// ccmContainerOf finds the CCM DaemonSet among the rendered objects.
func ccmContainerOf(rendered []byte) (*addon, error) {
	for _, doc := range splitDocuments(rendered) {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("rendered add-on: %w\n%s", err, bytes.TrimSpace(doc))
		}
		if meta.Kind != "DaemonSet" || meta.Metadata.Name != ccmDaemonSetName {
			continue
		}
		var ds appsv1.DaemonSet
		if err := yaml.Unmarshal(doc, &ds); err != nil {
			return nil, fmt.Errorf("rendered DaemonSet %s: %w", ccmDaemonSetName, err)
		}
		for _, c := range ds.Spec.Template.Spec.Containers {
			if c.Name == ccmContainerName {
				return &addon{Template: ccmAddonTemplate, Kind: "DaemonSet/" + ccmDaemonSetName, Image: c.Image, Args: c.Args}, nil
			}
		}
		return nil, fmt.Errorf("rendered DaemonSet %s has no container %s", ccmDaemonSetName, ccmContainerName)
	}
	return nil, fmt.Errorf("the rendered add-on has no DaemonSet %s", ccmDaemonSetName)
}
