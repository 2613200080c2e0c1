package main

import (
	"errors"
	"fmt"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"k8s.io/kops/pkg/apis/kops"
)

// result is what kops-check prints. The field names under populated are
// kops' v1alpha2 names, as a user writes them in the Cluster.
type result struct {
	Valid bool `json:"valid"`
	// Stage and Errors say where kops refused the input, and why.
	Stage  string    `json:"stage,omitempty"`
	Errors []problem `json:"errors,omitempty"`
	// Stages are the stages passed, in order.
	Stages    []string   `json:"stages,omitempty"`
	Populated *populated `json:"populated,omitempty"`
	Addon     *addon     `json:"addon,omitempty"`
}

// populated is the part of the completed spec (after kops' defaults and
// options builders) that says which provider each component runs. The
// names are the ones `kops edit cluster --set` takes (kops' internal API):
// controlPlaneKubelet is v1alpha2's masterKubelet.
type populated struct {
	KubernetesVersion      string                             `json:"kubernetesVersion"`
	CloudProvider          string                             `json:"cloudProvider"`
	KubeAPIServer          cloudProviderOf                    `json:"kubeAPIServer"`
	KubeControllerManager  kcmOf                              `json:"kubeControllerManager"`
	Kubelet                cloudProviderOf                    `json:"kubelet"`
	ControlPlaneKubelet    cloudProviderOf                    `json:"controlPlaneKubelet"`
	CloudControllerManager *kops.CloudControllerManagerConfig `json:"cloudControllerManager"`
}

type cloudProviderOf struct {
	CloudProvider string `json:"cloudProvider"`
}

type kcmOf struct {
	CloudProvider         string `json:"cloudProvider"`
	EnableLeaderMigration *bool  `json:"enableLeaderMigration,omitempty"`
}

// addon is kops' aws-cloud-controller add-on as rendered from the spec:
// what the CCM DaemonSet would run.
type addon struct {
	Template string   `json:"template"`
	Kind     string   `json:"kind"`
	Image    string   `json:"image"`
	Args     []string `json:"args"`
}

// problem is one of kops' validation errors; Field is kops' path
// (e.g. spec.kubelet.cloudProvider) when kops gave one.
type problem struct {
	Field    string `json:"field,omitempty"`
	Type     string `json:"type,omitempty"`
	BadValue string `json:"badValue,omitempty"`
	Detail   string `json:"detail"`
}

func (p problem) String() string {
	if p.Field == "" {
		return p.Detail
	}
	s := p.Field + ": " + p.Type
	if p.BadValue != "" {
		s += fmt.Sprintf(" (%s)", p.BadValue)
	}
	return s + ": " + p.Detail
}

// invalidError: kops refused the input at stage.
type invalidError struct {
	stage    string
	problems []problem
}

func (e *invalidError) Error() string {
	return fmt.Sprintf("%s: %d problem(s), the first: %s", e.stage, len(e.problems), e.problems[0])
}

// refused wraps kops' error from stage, keeping field errors' paths.
func refused(stage string, err error) error {
	return &invalidError{stage: stage, problems: problemsOf(err)}
}

// refusedList is refused for a field.ErrorList.
func refusedList(stage string, errs field.ErrorList) error {
	var out []problem
	for _, e := range errs {
		out = append(out, fieldProblem(e))
	}
	return &invalidError{stage: stage, problems: out}
}

// problemsOf flattens kops' error: an aggregate of field errors (what kops'
// validation returns) keeps each path; anything else is one message.
func problemsOf(err error) []problem {
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		var out []problem
		for _, e := range agg.Errors() {
			out = append(out, problemsOf(e)...)
		}
		return out
	}
	var fe *field.Error
	if errors.As(err, &fe) && fe.Error() == err.Error() {
		return []problem{fieldProblem(fe)}
	}
	return []problem{{Detail: err.Error()}}
}

func fieldProblem(e *field.Error) problem {
	p := problem{Field: e.Field, Type: string(e.Type), Detail: e.Detail}
	if e.BadValue != nil && e.Type != field.ErrorTypeRequired {
		p.BadValue = fmt.Sprint(e.BadValue)
	}
	if p.Detail == "" {
		p.Detail = e.ErrorBody()
	}
	return p
}
