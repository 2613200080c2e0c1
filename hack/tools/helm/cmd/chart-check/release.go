package main

import (
	"os"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// releaseResult is the output of install, upgrade and uninstall.
type releaseResult struct {
	Release   string `json:"release"`
	Namespace string `json:"namespace"`
	Revision  int    `json:"revision,omitempty"`
	Status    string `json:"status,omitempty"`
	Notes     string `json:"notes,omitempty"`
	Info      string `json:"info,omitempty"`
	Error     string `json:"error"`
}

// storageDriver is where releases are kept: helm's default.
const storageDriver = "secrets"

// clusterConfig is the action configuration for the kubeconfig's current
// context, with Helm's logs through logf.
func clusterConfig(o options, logf action.DebugLog) (*action.Configuration, error) {
	if _, err := os.Stat(o.kubeconfig); err != nil {
		return nil, &usageError{err.Error()}
	}
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig, flags.Namespace = &o.kubeconfig, &o.namespace
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, o.namespace, storageDriver, logf); err != nil {
		return nil, err
	}
	return cfg, nil
}

func install(o options, logf action.DebugLog) (any, error) {
	return runRelease(o, logf, func(cfg *action.Configuration, chrt *chart.Chart, vals map[string]any) (*release.Release, error) {
		i := action.NewInstall(cfg)
		i.ReleaseName, i.Namespace, i.Wait, i.Timeout = o.release, o.namespace, o.wait, o.timeout
		i.TakeOwnership = o.takeOwnership
		return i.Run(chrt, vals)
	})
}

func upgrade(o options, logf action.DebugLog) (any, error) {
	return runRelease(o, logf, func(cfg *action.Configuration, chrt *chart.Chart, vals map[string]any) (*release.Release, error) {
		u := action.NewUpgrade(cfg)
		u.Namespace, u.Wait, u.Timeout = o.namespace, o.wait, o.timeout
		return u.Run(o.release, chrt, vals)
	})
}

// runRelease loads the cluster's configuration and the chart with its
// values, then runs the release action do and reports its release.
func runRelease(o options, logf action.DebugLog, do func(*action.Configuration, *chart.Chart, map[string]any) (*release.Release, error)) (any, error) {
	res := releaseResult{Release: o.release, Namespace: o.namespace}
	cfg, err := clusterConfig(o, logf)
	if err != nil {
		return failed(&res, &res.Error, err)
	}
	chrt, vals, _, err := loadInputs(o)
	if err != nil {
		return failed(&res, &res.Error, err)
	}
	rel, err := do(cfg, chrt, vals)
	describe(&res, rel)
	if err != nil {
		return failed(&res, &res.Error, err)
	}
	return res, nil
}

func uninstall(o options, logf action.DebugLog) (any, error) {
	res := releaseResult{Release: o.release, Namespace: o.namespace}
	cfg, err := clusterConfig(o, logf)
	if err != nil {
		return failed(&res, &res.Error, err)
	}
	u := action.NewUninstall(cfg)
	u.Wait, u.Timeout = o.wait, o.timeout
	resp, err := u.Run(o.release)
	if resp != nil {
		res.Info = resp.Info
		describe(&res, resp.Release)
	}
	if err != nil {
		return failed(&res, &res.Error, err)
	}
	return res, nil
}

// describe copies the release's revision and status (Helm returns a
// release with a failed install too).
func describe(res *releaseResult, rel *release.Release) {
	if rel == nil {
		return
	}
	res.Revision = rel.Version
	if rel.Info != nil {
		res.Status, res.Notes = rel.Info.Status.String(), rel.Info.Notes
	}
}
